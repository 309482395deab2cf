"""The network's optional score clip (``score_clip``): the two score inputs (score / target
score) clipped to ``[-c, c]`` before the actor and the critic, identically in torch
(``training.network``) and NumPy (``spades_env.policies.checkpoint.NumpyActor``), recorded in a
checkpoint's ``arch``, with clear errors for bad values."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from spades_env.core.observation import (  # noqa: E402
    OBS_SIZE,
    SLICES,
    STATE_VEC_SIZE,
    score_clip_bounds,
    score_clip_ok,
)
from spades_env.policies.checkpoint import CheckpointError, load_actor, load_meta, load_policy  # noqa: E402
from training.bc import load_bc_config  # noqa: E402
from training.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from training.config import ConfigError  # noqa: E402
from training.network import ActorCritic  # noqa: E402
from training.ppo import load_train_config  # noqa: E402
from training.resume import init_weights  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SC = SLICES["scores"]


def _observations(n: int = 40, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the seat to act along a random game."""
    from helpers.observations import game_observations

    return game_observations(n, seed)


def _with_scores(obs: np.ndarray, own: float, other: float) -> np.ndarray:
    out = obs.copy()
    out[:, SC.start], out[:, SC.start + 1] = own, other
    return out


def _net(score_clip: float | None, seed: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    net = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, 70, (32, 16), (8,), score_clip)
    with torch.no_grad():  # random biases too, and large weights on the score inputs
        for p in net.parameters():
            torch.nn.init.normal_(p, std=0.3)
    return net.eval()


# ---- the bounds -----------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [OBS_SIZE, STATE_VEC_SIZE, SC.stop])
def test_bounds_clip_the_two_score_entries_and_nothing_else(size):
    lo, hi = score_clip_bounds(size, 2.0)
    assert lo.shape == hi.shape == (size,) and lo.dtype == hi.dtype == np.float32
    x = np.random.default_rng(0).normal(scale=50.0, size=(20, size)).astype(np.float32)
    y = np.clip(x, lo, hi)
    outside = np.ones(size, dtype=bool)
    outside[SC] = False
    np.testing.assert_array_equal(y[:, outside], x[:, outside])
    assert (np.abs(y[:, SC]) <= 2.0).all()
    np.testing.assert_array_equal(y[:, SC], np.minimum(np.maximum(x[:, SC], -2.0), 2.0))
    # hand-checked: -40 (a random team's -20,000 at target 500) reads as -2, 0.3 stays 0.3
    row = np.zeros(size, dtype=np.float32)
    row[SC.start], row[SC.start + 1] = 0.3, -40.0
    got = np.clip(row, lo, hi)
    assert got[SC.start] == np.float32(0.3) and got[SC.start + 1] == -2.0


@pytest.mark.parametrize("bad", [0, -1.0, math.inf, math.nan, True, "2", None])
def test_bounds_and_configs_refuse_a_bad_limit(bad):
    with pytest.raises(ValueError, match="score_clip"):
        score_clip_bounds(OBS_SIZE, bad)
    assert score_clip_ok(bad) is (bad is None)


def test_bounds_need_an_input_with_the_scores_slice():
    with pytest.raises(ValueError, match="no scores slice"):
        score_clip_bounds(SC.stop - 1, 2.0)


# ---- the torch network ----------------------------------------------------------------------------
def test_clip_keeps_weight_names_and_is_recorded_in_arch():
    plain, clipped = _net(None), _net(2.0)
    assert list(plain.state_dict()) == list(clipped.state_dict())  # the clip's bounds are not saved
    for k, v in plain.state_dict().items():  # same init for the same seed
        assert torch.equal(v, clipped.state_dict()[k]), k
    assert "score_clip" not in plain.arch()
    assert clipped.arch()["score_clip"] == 2.0


def test_clipped_network_reads_a_team_far_behind_as_the_limit():
    obs, masks = _observations()
    far, limit = _with_scores(obs, 0.4, -40.0), _with_scores(obs, 0.4, -2.0)
    plain, clipped = _net(None), _net(2.0)
    m = torch.from_numpy(masks)
    with torch.no_grad():
        a, b = clipped.logits(torch.from_numpy(far), m), clipped.logits(torch.from_numpy(limit), m)
        assert torch.equal(a, b)
        # in range the clip changes nothing: the clipped net is the plain one
        assert torch.equal(clipped.logits(torch.from_numpy(obs), m), plain.logits(torch.from_numpy(obs), m))
        # and without it the far score is a different input (the test can fail)
        assert not torch.equal(plain.logits(torch.from_numpy(far), m), plain.logits(torch.from_numpy(limit), m))
        state = np.zeros((len(obs), STATE_VEC_SIZE), dtype=np.float32)
        state[:, :OBS_SIZE] = far
        state_limit = state.copy()
        state_limit[:, :OBS_SIZE] = limit
        assert torch.equal(clipped.value(torch.from_numpy(state)), clipped.value(torch.from_numpy(state_limit)))


# ---- NumPy against torch, through a checkpoint ------------------------------------------------------
def test_numpy_actor_matches_torch_with_the_clip(tmp_path):
    obs, masks = _observations()
    x = np.concatenate([obs, _with_scores(obs, -40.0, 3.5), _with_scores(obs, 0.9, -7.0)])
    m = np.concatenate([masks, masks, masks])
    net = _net(2.0, seed=4)
    path = save_checkpoint(tmp_path / "ck", net, {"rules": {"name": "house"}})
    assert load_meta(path)["arch"]["score_clip"] == 2.0
    actor, _ = load_actor(path)
    assert actor.score_clip == 2.0
    with torch.no_grad():
        want = net.logits(torch.from_numpy(x), torch.from_numpy(m)).numpy()
    np.testing.assert_allclose(actor.logits(x, m), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.where(m, actor.forward_batch(x), want), want, rtol=1e-4, atol=1e-4)
    back, _ = load_checkpoint(path)
    assert back.score_clip == 2.0
    with torch.no_grad():
        assert torch.equal(back.logits(torch.from_numpy(x), torch.from_numpy(m)), torch.from_numpy(want))
    pol = load_policy(path, deterministic=True)
    far, limit = _with_scores(obs, 0.4, -40.0), _with_scores(obs, 0.4, -2.0)
    assert [pol.act(o, k) for o, k in zip(far, masks, strict=True)] == [
        pol.act(o, k) for o, k in zip(limit, masks, strict=True)
    ]


def test_a_checkpoint_without_the_key_plays_unclipped(tmp_path):
    net = _net(None, seed=5)
    path = save_checkpoint(tmp_path / "ck", net, {})
    actor, meta = load_actor(path)
    assert "score_clip" not in meta["arch"] and actor.score_clip is None
    obs, _ = _observations(8)
    far, limit = _with_scores(obs, 0.4, -40.0), _with_scores(obs, 0.4, -2.0)
    assert not np.array_equal(actor(far), actor(limit))


@pytest.mark.parametrize("bad", [-1, 0, "2", True, None])
def test_a_bad_score_clip_in_meta_is_refused_naming_the_key(tmp_path, bad):
    path = save_checkpoint(tmp_path / "ck", _net(2.0), {})
    meta_file = path / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["arch"]["score_clip"] = bad
    meta_file.write_text(json.dumps(meta))
    if bad is None:  # null: no clip, as an absent key
        assert load_actor(path)[0].score_clip is None
        return
    with pytest.raises(CheckpointError, match=r"meta\.json.*'arch\.score_clip'"):
        load_meta(path)


# ---- the configs --------------------------------------------------------------------------------------
def test_configs_take_and_check_score_clip():
    bc = ROOT / "configs" / "train" / "bc.yaml"
    assert load_bc_config(bc, ["score_clip=2"]).score_clip == 2.0
    assert load_bc_config(bc).score_clip is None
    smoke = ROOT / "configs" / "train" / "smoke.yaml"
    assert load_train_config(smoke, ["score_clip=1.5"]).score_clip == 1.5
    for bad in ("0", "-2", "inf"):
        with pytest.raises(ConfigError, match="'score_clip'"):
            load_bc_config(bc, [f"score_clip={bad}"])
        with pytest.raises(ConfigError, match="'score_clip'"):
            load_train_config(smoke, [f"score_clip={bad}"])


def test_a_clipped_fit_starts_from_an_unclipped_checkpoint(tmp_path):
    src = _net(None, seed=6)
    path = save_checkpoint(tmp_path / "start", src, {})
    cfg = load_bc_config(ROOT / "configs" / "train" / "bc.yaml", ["score_clip=2", "hidden=[32,16]", "critic_hidden=[8]"])
    dst = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, 70, cfg.hidden, cfg.critic_hidden, cfg.score_clip)
    init_weights(dst, cfg, path)
    for k, v in src.state_dict().items():
        assert torch.equal(dst.state_dict()[k], v), k
    assert dst.score_clip == 2.0
