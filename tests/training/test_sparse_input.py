"""Sparse first layers (training.sparse_input): CSR rows built, taken and clipped as the dense
matrix would be; the first layer's output and its weight and bias gradients equal nn.Linear's;
the actor-critic on CSR rows equals it on dense rows (score clip included); and the PPO trainer
with ``sparse_input`` on and off gives the same losses and weights."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from helpers.observations import real_observations  # noqa: E402
from helpers.training import FAST, SMOKE, one_thread  # noqa: E402, F401
from spades_env.core.actions import NUM_ACTIONS  # noqa: E402
from spades_env.core.observation import OBS_SIZE, STATE_VEC_SIZE  # noqa: E402
from training.network import ActorCritic  # noqa: E402
from training.ppo import Trainer, load_train_config  # noqa: E402
from training.sparse_input import SparseRows, sparse_linear  # noqa: E402


def _sparse_matrix(rng: np.random.Generator, n: int, m: int, density: float, dtype=np.float32) -> np.ndarray:
    x = rng.normal(size=(n, m)).astype(np.float32)
    x[rng.random((n, m)) >= density] = 0
    if dtype == np.uint8:
        return (x != 0).astype(np.uint8)
    return x



# ---- CSR rows --------------------------------------------------------------------------------
def test_from_dense_by_hand():
    a = np.array([[0, 2.5, 0], [0, 0, 0], [-1, 0, 3]], dtype=np.float32)
    b = np.array([[1, 0], [0, 1], [0, 0]], dtype=np.uint8)
    rows = SparseRows.from_dense(a, b)
    assert rows.shape == (3, 5)
    assert rows.indptr.tolist() == [0, 2, 3, 5]
    assert rows.cols.tolist() == [1, 3, 4, 0, 2]
    assert rows.vals.tolist() == [2.5, 1.0, 1.0, -1.0, 3.0]
    np.testing.assert_array_equal(rows.to_dense(), np.concatenate([a, b], 1))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 30),
    p=st.integers(1, 40),
    q=st.integers(0, 20),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**31),
)
def test_from_dense_take_round_trip(n, p, q, density, seed):
    rng = np.random.default_rng(seed)
    a = _sparse_matrix(rng, n, p, density)
    b = _sparse_matrix(rng, n, q, density, np.uint8)
    dense = np.concatenate([a, b.astype(np.float32)], 1)
    rows = SparseRows.from_dense(a, b)
    np.testing.assert_array_equal(rows.to_dense(), dense)
    assert rows.indptr[-1] == np.count_nonzero(dense)
    pick = rng.integers(-n, n, size=2 * n) if n else np.zeros(0, dtype=np.int64)
    np.testing.assert_array_equal(rows.take(pick).to_dense(), dense[pick])
    np.testing.assert_array_equal(rows.take(torch.from_numpy(pick)).to_dense(), dense[pick])
    w = int(rng.integers(0, p + q + 1))
    left = rows.take(pick, w)
    assert left.shape == (len(pick), w)
    np.testing.assert_array_equal(left.to_dense(), dense[pick, :w])
    cut = int(rng.integers(0, n + 1))
    parts = [rows.take(np.arange(cut)), rows.take(np.arange(cut, n))]
    joined = SparseRows.concat(parts)
    np.testing.assert_array_equal(joined.to_dense(), dense)
    np.testing.assert_array_equal(joined.indptr, rows.indptr)


def test_bad_input_is_refused():
    rows = SparseRows.from_dense(np.eye(3, dtype=np.float32))
    with pytest.raises(IndexError, match="out of range for 3 rows"):
        rows.take([0, 3])
    with pytest.raises(ValueError, match="must be 2-D"):
        SparseRows.from_dense(np.zeros(4, dtype=np.float32))
    with pytest.raises(ValueError, match="a has 3 rows but b has 2"):
        SparseRows.from_dense(np.eye(3, dtype=np.float32), np.zeros((2, 1), dtype=np.uint8))
    with pytest.raises(ValueError, match="keep 0 at 0"):
        rows.clipped(np.full(3, 0.5, dtype=np.float32), np.full(3, 1.0, dtype=np.float32))
    with pytest.raises(ValueError, match="bounds of 2 entries for rows of 3"):
        rows.clipped(np.zeros(2, dtype=np.float32), np.ones(2, dtype=np.float32))
    with pytest.raises(ValueError, match="width 4 is outside 0..3"):
        rows.take([0], 4)
    with pytest.raises(ValueError, match=r"widths differ: \[2, 3\]"):
        SparseRows.concat([rows, rows.take([0], 2)])
    with pytest.raises(ValueError, match="no parts"):
        SparseRows.concat([])
    with pytest.raises(ValueError, match=r"float32 weight \[out, 3\]"):
        sparse_linear(rows, torch.zeros(4, 5), torch.zeros(4))


def test_clipped_equals_dense_clip():
    rng = np.random.default_rng(1)
    x = _sparse_matrix(rng, 20, 6, 0.6) * 5
    lo = np.array([-1, -np.inf, -2, 0, -np.inf, -3], dtype=np.float32)
    hi = np.array([1, np.inf, 2, 0.5, 4, 0], dtype=np.float32)
    got = SparseRows.from_dense(x).clipped(lo, hi).to_dense()
    np.testing.assert_array_equal(got, np.clip(x, lo, hi))


# ---- the first layer ---------------------------------------------------------------------------
@pytest.mark.parametrize("width,out", [(OBS_SIZE, 64), (STATE_VEC_SIZE, 16)])
def test_sparse_linear_matches_dense_on_real_inputs(width, out):
    obs, full = real_observations()
    x = obs if width == OBS_SIZE else full
    torch.manual_seed(0)
    lin = torch.nn.Linear(width, out)
    rows = SparseRows.from_dense(x)
    g = torch.randn(x.shape[0], out)

    dense = lin(torch.from_numpy(x))
    dense.backward(g)
    want_w, want_b = lin.weight.grad.clone(), lin.bias.grad.clone()
    lin.zero_grad()
    got = sparse_linear(rows, lin.weight, lin.bias)
    got.backward(g)
    torch.testing.assert_close(got, dense, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lin.weight.grad, want_w, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(lin.bias.grad, want_b, rtol=1e-5, atol=1e-5)
    assert lin.weight.grad.is_contiguous()
    # the columns a batch never uses get exactly no gradient
    unused = np.flatnonzero((x != 0).sum(0) == 0)
    assert unused.size and (lin.weight.grad[:, unused] == 0).all()


def test_sparse_linear_of_no_rows():
    lin = torch.nn.Linear(5, 3)
    rows = SparseRows.from_dense(np.zeros((0, 5), dtype=np.float32))
    out = sparse_linear(rows, lin.weight, lin.bias)
    assert out.shape == (0, 3)
    out.sum().backward()
    assert (lin.weight.grad == 0).all()


@pytest.mark.parametrize("score_clip", [None, 0.5])
def test_actor_critic_same_on_sparse_and_dense_rows(score_clip):
    obs, full = real_observations()
    if score_clip is not None:
        from spades_env.core.observation import score_clip_bounds

        lo, _ = score_clip_bounds(OBS_SIZE, score_clip)
        score_cols = np.flatnonzero(np.isfinite(lo))
        obs[::3, score_cols] = 4.0  # far past the clip: both paths must clip it
        full[:, :OBS_SIZE] = obs
    torch.manual_seed(1)
    net = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, (64, 32), (32, 32), score_clip)
    mask = torch.ones(obs.shape[0], NUM_ACTIONS, dtype=torch.int8)
    mask[:, ::2] = 0
    actions = torch.arange(obs.shape[0]) % (NUM_ACTIONS // 2) * 2 + 1

    def run(o, c):
        net.zero_grad()
        logp, ent, _ = net.evaluate(o, mask, actions)
        v = net.value(c)
        (logp.sum() + ent.sum() + v.sum()).backward()
        return [logp, ent, v] + [p.grad.clone() for p in net.parameters()]

    dense = run(torch.from_numpy(obs), torch.from_numpy(full))
    sparse = run(SparseRows.from_dense(obs), SparseRows.from_dense(full))
    for d, s in zip(dense, sparse, strict=True):
        torch.testing.assert_close(s, d, rtol=1e-4, atol=1e-4)


# ---- the trainer ----------------------------------------------------------------------------------
def test_trainer_same_with_sparse_and_dense_inputs(tmp_path, monkeypatch):
    import training.network

    calls = []

    def counted(*args):
        calls.append(args[0].shape[0])
        return sparse_linear(*args)

    monkeypatch.setattr(training.network, "sparse_linear", counted)

    def run(sparse: bool):
        cfg = load_train_config(SMOKE, [*FAST, f"sparse_input={str(sparse).lower()}", "checkpoint_every=0"])
        tr = Trainer(cfg, tmp_path / f"run_{sparse}")
        losses = []
        calls.clear()
        for _ in range(3):
            tr.collect()
            losses.append(tr.learn(cfg.total_updates or 4))
        # collection (critic every step, actor on the learner's rows) and every minibatch
        assert (len(calls) > 2 * cfg.num_steps) if sparse else not calls
        return tr, losses

    dense, ld = run(False)
    sparse, ls = run(True)
    for a, b in zip(ld, ls, strict=True):
        assert a.keys() == b.keys()
        for k in a:
            assert b[k] == pytest.approx(a[k], rel=1e-3, abs=1e-6), k
    for (name, p), (_, q) in zip(dense.model.named_parameters(), sparse.model.named_parameters(), strict=True):
        torch.testing.assert_close(q, p, rtol=1e-4, atol=1e-5, msg=name)
    np.testing.assert_array_equal(dense.buf_action, sparse.buf_action)


def test_sparse_input_must_be_a_bool():
    from training.config import ConfigError

    with pytest.raises(ConfigError, match="sparse_input"):
        load_train_config(SMOKE, ["sparse_input=3"])


def test_the_transposed_weight_follows_in_place_changes():
    lin = torch.nn.Linear(6, 4)
    rows = SparseRows.from_dense(np.eye(6, dtype=np.float32))
    first = sparse_linear(rows, lin.weight, lin.bias).detach().clone()
    torch.testing.assert_close(first, lin(torch.eye(6)).detach())
    opt = torch.optim.SGD(lin.parameters(), lr=0.5)
    sparse_linear(rows, lin.weight, lin.bias).sum().backward()
    opt.step()  # in place: the cached transpose must not be used again
    after = sparse_linear(rows, lin.weight, lin.bias).detach()
    assert not torch.allclose(after, first)
    torch.testing.assert_close(after, lin(torch.eye(6)).detach())
    with torch.no_grad():
        lin.weight.copy_(torch.arange(24.0).reshape(4, 6))
    torch.testing.assert_close(sparse_linear(rows, lin.weight, lin.bias).detach(), lin(torch.eye(6)).detach())
