"""Function-preserving widening (training.widen, ``init_widen``): a wider network started from a
narrower one computes the same logits and values, its new units then train, and shapes that
cannot widen are errors naming the checkpoint and the layer."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_sparse_input import _real_observations  # noqa: E402
from test_training import FAST, SMOKE, _one_thread  # noqa: E402, F401

from spades_env.core.actions import NUM_ACTIONS  # noqa: E402
from spades_env.core.observation import OBS_SIZE, STATE_VEC_SIZE  # noqa: E402
from training.checkpoint import CheckpointError, load_checkpoint  # noqa: E402
from training.config import ConfigError  # noqa: E402
from training.network import ActorCritic, mlp  # noqa: E402
from training.ppo import Trainer, load_train_config, train  # noqa: E402
from training.widen import widen_state, widening_problem  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(
    depth=st.integers(1, 3),
    widths=st.lists(st.tuples(st.integers(1, 12), st.integers(0, 12)), min_size=3, max_size=3),
    seed=st.integers(0, 2**16),
)
def test_widened_mlp_computes_the_same(depth, widths, seed):
    torch.manual_seed(seed)
    narrow_sizes = [w for w, _ in widths[:depth]]
    wide_sizes = [w + extra for w, extra in widths[:depth]]
    narrow, wide = mlp([7, *narrow_sizes], 5, 1.0), mlp([7, *wide_sizes], 5, 1.0)
    for p in narrow.parameters():  # biases too, so that a misplaced one shows
        p.data.normal_()
    wide.load_state_dict(widen_state(narrow.state_dict(), wide.state_dict()))
    x = torch.randn(16, 7)
    torch.testing.assert_close(wide(x), narrow(x), rtol=1e-5, atol=1e-5)


def test_widening_problem_needs_the_same_inputs_and_depth():
    narrow = {"obs_size": 803, "critic_size": 1219, "num_actions": 70, "hidden": [8, 8], "critic_hidden": [4]}
    assert widening_problem(narrow, {**narrow, "hidden": [16, 8], "critic_hidden": [4]}) is None
    assert widening_problem(narrow, {**narrow, "obs_size": 771}) == "obs_size 803 differs from 771"
    assert widening_problem(narrow, {**narrow, "critic_hidden": [4, 4]}) == "critic_hidden [4] and [4, 4] differ in depth"
    assert widening_problem(narrow, {**narrow, "hidden": [8, 4]}) == "hidden [8, 8] is wider than [8, 4] somewhere"


def test_widen_state_refuses_narrowing_and_other_layers():
    small, big = mlp([7, 8], 5, 1.0).state_dict(), mlp([7, 4], 5, 1.0).state_dict()
    with pytest.raises(ValueError, match=r"0.weight: cannot widen shape \(8, 7\) into \(4, 7\)"):
        widen_state(small, big)
    with pytest.raises(ValueError, match="same layers"):
        widen_state(small, mlp([7, 8, 8], 5, 1.0).state_dict())


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """A narrow (32-32) checkpoint: the smoke config's run."""
    run = tmp_path_factory.mktemp("narrow")
    return run, train(load_train_config(SMOKE, [*FAST, "total_decisions=1024"]), run)


def _wide_trainer(smoke_run, tmp_path, hidden="[48,64]", critic="[40,32]", extra=()):
    ckpt = smoke_run[0] / "final"
    cfg = load_train_config(
        SMOKE,
        [*FAST, f"init_from={ckpt}", "init_widen=true", f"hidden={hidden}", f"critic_hidden={critic}",
         "checkpoint_every=0", *extra],
    )
    return Trainer(cfg, tmp_path / "wide"), ckpt


def test_init_widen_starts_from_the_same_policy_and_trains_the_new_units(smoke_run, tmp_path):
    tr, ckpt = _wide_trainer(smoke_run, tmp_path)
    narrow, _ = load_checkpoint(ckpt)
    assert isinstance(narrow, ActorCritic) and narrow.hidden == (32, 32)
    obs, full = _real_observations()
    x, c = torch.from_numpy(obs), torch.from_numpy(full)
    mask = torch.ones(len(obs), NUM_ACTIONS, dtype=torch.int8)
    with torch.no_grad():
        torch.testing.assert_close(tr.model.log_probs(x, mask), narrow.log_probs(x, mask), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(tr.model.value(c), narrow.value(c), rtol=1e-5, atol=1e-5)
    out = tr.model.actor[-1].weight
    assert torch.count_nonzero(out[:, 32:]) == 0  # the new units are not read yet
    tr.collect()
    tr.learn(4)
    assert torch.count_nonzero(out[:, 32:]) > 0  # ... and after one update they are
    assert tr.model.actor[0].weight.shape == (48, OBS_SIZE)
    assert tr.model.critic[0].weight.shape == (40, STATE_VEC_SIZE)


def test_init_widen_errors(smoke_run, tmp_path):
    with pytest.raises(CheckpointError, match=r"init_widen: hidden \[32, 32\] and \[64\] differ in depth"):
        _wide_trainer(smoke_run, tmp_path, hidden="[64]")
    with pytest.raises(CheckpointError, match=r"init_widen: critic_hidden \[32, 32\] is wider than \[16, 32\]"):
        _wide_trainer(smoke_run, tmp_path, critic="[16,32]")
    with pytest.raises(ConfigError, match="init_widen"):
        load_train_config(SMOKE, ["init_widen=true"])
    cfg = load_train_config(SMOKE, [*FAST, f"init_from={smoke_run[0] / 'final'}", "hidden=[48,64]"])
    with pytest.raises(CheckpointError, match="init_widen: true starts a wider network"):
        Trainer(cfg, tmp_path / "plain")
