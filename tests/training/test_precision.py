"""``precision: bfloat16`` (training.network.matmul_precision): the network's outputs stay
float32 and close to the float32 network's, illegal actions keep probability exactly 0, the
update reads the same log-probabilities the collection wrote (PPO's ratio starts at 1), the
weights and Adam's state stay float32, a bfloat16 run resumes exactly, and bad values are
errors naming the key."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers.observations import real_observations  # noqa: E402
from helpers.training import FAST, SMOKE, one_thread  # noqa: E402, F401
from spades_env.core.actions import NUM_ACTIONS  # noqa: E402
from spades_env.core.observation import OBS_SIZE, STATE_VEC_SIZE  # noqa: E402
from training.config import ConfigError  # noqa: E402
from training.network import ActorCritic, matmul_precision  # noqa: E402
from training.ppo import Trainer, load_train_config, train  # noqa: E402

BF16 = [*FAST, "precision=bfloat16", "checkpoint_every=0"]


@pytest.fixture(autouse=True)
def _quiet_emulated_bf16():
    """Where the CPU has no bfloat16 units the context warns (tested below); runs here would
    repeat it."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "precision 'bfloat16'", RuntimeWarning)
        yield


def _net() -> ActorCritic:
    torch.manual_seed(0)
    return ActorCritic(OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, (128, 128), (64, 64))


def test_bf16_outputs_float32_and_close_to_float32():
    obs, full = real_observations()
    masks = np.zeros((len(obs), NUM_ACTIONS), dtype=np.int8)
    rng = np.random.default_rng(0)
    for row in masks:  # a few legal actions a row, the rest illegal
        row[rng.choice(NUM_ACTIONS, size=5, replace=False)] = 1
    x, c, m = torch.from_numpy(obs), torch.from_numpy(full), torch.from_numpy(masks)
    net = _net()
    with torch.no_grad():
        lp32, v32 = net.log_probs(x, m), net.value(c)
        with matmul_precision("bfloat16"):
            lp16, v16 = net.log_probs(x, m), net.value(c)
    assert lp16.dtype == v16.dtype == torch.float32
    legal = m.bool()
    assert torch.equal(torch.exp(lp16)[~legal], torch.zeros_like(lp16[~legal]))  # exactly 0
    # bfloat16 keeps 8 significant bits: the outputs move by well under 0.1, not by nothing
    diff = (lp16 - lp32)[legal].abs()
    assert 0 < diff.max() < 0.05
    assert 0 < (v16 - v32).abs().max() < 0.05
    torch.testing.assert_close(torch.exp(lp16)[legal], torch.exp(lp32)[legal], atol=0.01, rtol=0)


def test_float32_context_is_a_no_op_and_bad_values_are_errors():
    net, x = _net(), torch.rand(4, OBS_SIZE)
    with matmul_precision("float32"):
        assert not torch.is_autocast_enabled("cpu")
        out = net.actor(x)
    assert torch.equal(out, net.actor(x))
    with pytest.raises(ValueError, match="float16"):
        matmul_precision("float16")
    with pytest.raises(ConfigError, match="precision.*bfloat16"):
        load_train_config(SMOKE, ["precision=float16"])


def test_warns_where_bf16_is_emulated(monkeypatch):
    import training.network as network

    monkeypatch.setattr(network, "bf16_matmul_native", lambda: False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with matmul_precision("bfloat16"):
            assert torch.is_autocast_enabled("cpu")
    assert any("no bfloat16 matrix units" in str(w.message) for w in caught)


@pytest.mark.parametrize("sparse", [False, True])
def test_bf16_update_reads_what_collection_wrote(tmp_path, sparse):
    """The first minibatch of the first epoch sees the collection's own policy: its log-ratio
    is about 0 (bfloat16 rounding only), and the losses are those of the float32 trainer to
    the rounding; the parameters and Adam's moments stay float32 and move."""
    runs = {}
    for prec in ("float32", "bfloat16"):
        cfg = load_train_config(
            SMOKE, [*FAST, f"precision={prec}", f"sparse_input={str(sparse).lower()}", "checkpoint_every=0"]
        )
        tr = Trainer(cfg, tmp_path / prec)
        before = {k: v.clone() for k, v in tr.model.state_dict().items()}
        seen = set()  # (grad enabled, autocast on) at each forward of the actor's last layer
        tr.model.actor[-1].register_forward_pre_hook(
            lambda *_, seen=seen: seen.add((torch.is_grad_enabled(), torch.is_autocast_enabled("cpu")))
        )
        tr.collect()
        runs[prec] = (tr, tr.learn(4), before)
        # collection (no grad) and the update (grad) both multiply in the run's precision
        assert seen == {(False, prec == "bfloat16"), (True, prec == "bfloat16")}
    (t32, s32, _), (t16, s16, before) = runs["float32"], runs["bfloat16"]
    assert abs(s16["train/approx_kl"]) < 1e-3
    # the same deal and uniform draws: the sampled actions almost all agree
    assert (t16.buf_action == t32.buf_action).mean() > 0.95
    for k in ("loss/v_loss", "train/entropy"):
        assert s16[k] == pytest.approx(s32[k], rel=0.05), k
    for name, p in t16.model.named_parameters():
        assert p.dtype == torch.float32, name
        assert not torch.equal(p.detach(), before[name]), name
    for state in t16.optimizer.state.values():
        assert state["exp_avg"].dtype == torch.float32


def test_bf16_resume_is_exact(tmp_path):
    cfg = load_train_config(SMOKE, [*BF16, "total_decisions=2048", "pool_every=1", "checkpoint_every=1"])
    full = train(cfg, tmp_path / "full")
    assert train(cfg, tmp_path / "half", stop_update=2).update == 2
    resumed = train(cfg, tmp_path / "resumed", resume=tmp_path / "half" / "checkpoints" / "ckpt_000002")
    assert resumed.update == full.update == 4
    for k, v in full.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[k], v), k
    assert np.array_equal(resumed.engine.states, full.engine.states)


def test_plot_runs_overlays_histories(tmp_path):
    pytest.importorskip("matplotlib")
    import json

    from training.plots import plot_runs

    def row(u, **extra):
        return {"update": u, "decisions": 1000 * u, "loss/v_loss": 1 / u, "train/entropy": 1.0, **extra}

    ev = {"greedy": {"game_win": 0.5, "game_win_ci95": [0.4, 0.6], "margin_per_hand": 3.0, "margin_ci95": [1.0, 5.0]}}
    for name in ("float32", "bfloat16"):
        rows = [row(u, **({"episode/win_vs_scripted": u % 2} if u % 3 else {})) for u in range(1, 30)]
        rows[-1]["eval"] = ev
        (tmp_path / f"{name}.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = plot_runs({n: tmp_path / f"{n}.jsonl" for n in ("float32", "bfloat16")}, tmp_path / "runs.png")
    assert out is not None and out.stat().st_size > 5000
    (tmp_path / "empty.jsonl").write_text("\n")
    assert plot_runs({"a": tmp_path / "missing.jsonl", "b": tmp_path / "empty.jsonl"}, tmp_path / "x.png") is None
