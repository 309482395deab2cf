"""Sparse first layers: the networks' first ``nn.Linear`` computed from the non-zero inputs only.

An observation has about 30-60 non-zero entries of ``OBS_SIZE`` (803), the critic's input
(observation + every seat's hand and discards) about twice that of 1,219: a dense first layer
multiplies mostly zeros, and the first layers are most of the network's GEMM work (the actor's
803 x 512 and the critic's 1,219 x 256; benchmarks/README.md, training_throughput.py). Here the
input rows are kept in CSR form (:class:`SparseRows`) and the first layer is

* forward: ``out[r] = bias + sum_k vals[k] * W[:, cols[k]]`` over row ``r``'s entries
  (``torch.nn.functional.embedding_bag`` over the transposed weight), and
* backward: ``dW[:, c] += vals[k] * g[r]`` for every entry (a numba kernel), ``db = g.sum(0)``;
  no input gradient (the input is data).

The weights are the ``nn.Linear``'s own, so checkpoints, the NumPy actor and the dense path are
unchanged; the outputs and gradients agree with the dense layer to float rounding (only the order
of the sums differs: tests/training/test_sparse_input.py). ``training.network.ActorCritic`` takes either a
dense tensor or :class:`SparseRows` wherever it takes an input; ``TrainConfig.sparse_input``
(default on) makes the PPO trainer build them.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numba
import numpy as np
import torch
import torch.nn.functional as F


@numba.njit(cache=True, nogil=True)
def _count_nonzero_rows(a: np.ndarray, b: np.ndarray, counts: np.ndarray) -> None:  # pragma: no cover
    n, na = a.shape
    nb = b.shape[1]
    for r in range(n):
        c = 0
        for j in range(na):
            if a[r, j] != 0:
                c += 1
        for j in range(nb):
            if b[r, j] != 0:
                c += 1
        counts[r] = c


@numba.njit(cache=True, nogil=True)
def _fill_csr(a: np.ndarray, b: np.ndarray, indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> None:  # pragma: no cover
    n, na = a.shape
    nb = b.shape[1]
    for r in range(n):
        p = indptr[r]
        for j in range(na):
            x = a[r, j]
            if x != 0:
                cols[p] = j
                vals[p] = x
                p += 1
        for j in range(nb):
            x = b[r, j]
            if x != 0:
                cols[p] = na + j
                vals[p] = x
                p += 1


@numba.njit(cache=True, nogil=True)
def _take_rows(
    indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, rows: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover
    """Rows ``rows``, keeping the entries of columns below ``width`` (columns are ascending)."""
    m = rows.shape[0]
    out_ptr = np.empty(m + 1, dtype=np.int64)
    out_ptr[0] = 0
    for i in range(m):
        r = rows[i]
        k = indptr[r]
        while k < indptr[r + 1] and cols[k] < width:
            k += 1
        out_ptr[i + 1] = out_ptr[i] + k - indptr[r]
    total = out_ptr[m]
    out_cols = np.empty(total, dtype=cols.dtype)
    out_vals = np.empty(total, dtype=vals.dtype)
    for i in range(m):
        src = indptr[rows[i]]
        dst = out_ptr[i]
        for k in range(out_ptr[i + 1] - dst):
            out_cols[dst + k] = cols[src + k]
            out_vals[dst + k] = vals[src + k]
    return out_ptr, out_cols, out_vals


@numba.njit(cache=True, nogil=True)
def _weight_grad(
    indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, g: np.ndarray, gw: np.ndarray
) -> None:  # pragma: no cover
    """``gw[in, out] = sum over entries (r, c, v) of v * g[r]`` (``gw`` zeroed here)."""
    gw[:] = 0.0
    n, m = g.shape
    for r in range(n):
        for p in range(indptr[r], indptr[r + 1]):
            c = cols[p]
            v = vals[p]
            for j in range(m):
                gw[c, j] += v * g[r, j]


@dataclass(frozen=True)
class SparseRows:
    """Rows of a ``[N, width]`` float32 matrix in CSR form: row ``r``'s non-zero entries are
    ``cols[indptr[r]:indptr[r + 1]]`` (column, ascending) with values ``vals[...]``."""

    indptr: np.ndarray
    """int64 ``[N + 1]``"""
    cols: np.ndarray
    """int64 ``[nnz]``"""
    vals: np.ndarray
    """float32 ``[nnz]``"""
    width: int

    @property
    def shape(self) -> tuple[int, int]:
        """``(N, width)``, as the dense matrix's."""
        return (self.indptr.shape[0] - 1, self.width)

    @classmethod
    def from_dense(cls, a: np.ndarray, b: np.ndarray | None = None) -> SparseRows:
        """The rows of ``a`` (``[N, p]``), or of ``a`` and ``b`` (``[N, q]``) side by side, as
        if ``np.concatenate([a, b], 1)`` (any numeric dtypes; the values become float32)."""
        a = _as_2d(a, "a")
        if b is None:
            b = np.zeros((a.shape[0], 0), dtype=np.uint8)
        b = _as_2d(b, "b")
        if b.shape[0] != a.shape[0]:
            raise ValueError(f"SparseRows.from_dense: a has {a.shape[0]} rows but b has {b.shape[0]}")
        counts = np.empty(a.shape[0], dtype=np.int64)
        _count_nonzero_rows(a, b, counts)
        indptr = np.zeros(a.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        cols = np.empty(indptr[-1], dtype=np.int64)
        vals = np.empty(indptr[-1], dtype=np.float32)
        _fill_csr(a, b, indptr, cols, vals)
        return cls(indptr, cols, vals, a.shape[1] + b.shape[1])

    def take(self, rows: np.ndarray | torch.Tensor, width: int | None = None) -> SparseRows:
        """The rows ``rows`` (integer indices, in that order; repeats allowed); with ``width``,
        only their first ``width`` columns (``dense[rows, :width]``)."""
        r = rows.numpy() if isinstance(rows, torch.Tensor) else np.asarray(rows)
        r = np.ascontiguousarray(r, dtype=np.int64)
        n = self.shape[0]
        if r.size and (r.min() < -n or r.max() >= n):
            raise IndexError(f"SparseRows.take: a row index is out of range for {n} rows")
        width = self.width if width is None else width
        if not 0 <= width <= self.width:
            raise ValueError(f"SparseRows.take: width {width} is outside 0..{self.width}")
        r = np.where(r < 0, r + n, r)
        indptr, cols, vals = _take_rows(self.indptr, self.cols, self.vals, r, width)
        return SparseRows(indptr, cols, vals, width)

    @classmethod
    def concat(cls, parts: list[SparseRows]) -> SparseRows:
        """The rows of ``parts`` one after the other (``np.concatenate`` along rows); every part
        must have the same width."""
        if not parts:
            raise ValueError("SparseRows.concat: no parts")
        width = parts[0].width
        if any(p.width != width for p in parts):
            raise ValueError(f"SparseRows.concat: widths differ: {sorted({p.width for p in parts})}")
        starts = np.cumsum([0] + [int(p.indptr[-1]) for p in parts[:-1]])
        indptr = np.concatenate([[0]] + [p.indptr[1:] + s for p, s in zip(parts, starts, strict=True)])
        return cls(
            indptr.astype(np.int64, copy=False),
            np.concatenate([p.cols for p in parts]),
            np.concatenate([p.vals for p in parts]),
            width,
        )

    def clipped(self, lo: np.ndarray, hi: np.ndarray) -> SparseRows:
        """Every entry clipped to ``[lo[col], hi[col]]`` (bounds that keep 0 at 0, as
        ``spades_env.core.observation.score_clip_bounds``)."""
        if lo.shape[0] != self.width or hi.shape[0] != self.width:
            raise ValueError(f"SparseRows.clipped: bounds of {lo.shape[0]} entries for rows of {self.width}")
        if (lo > 0).any() or (hi < 0).any():
            raise ValueError("SparseRows.clipped: the bounds must keep 0 at 0 (lo <= 0 <= hi)")
        vals = np.clip(self.vals, lo[self.cols], hi[self.cols]).astype(np.float32, copy=False)
        return SparseRows(self.indptr, self.cols, vals, self.width)

    def to_dense(self) -> np.ndarray:
        """The float32 ``[N, width]`` matrix."""
        out = np.zeros(self.shape, dtype=np.float32)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        out[rows, self.cols] = self.vals
        return out


def _as_2d(x: np.ndarray, name: str) -> np.ndarray:
    x = np.ascontiguousarray(x)
    if x.ndim != 2:
        raise ValueError(f"SparseRows.from_dense: {name} must be 2-D, got shape {x.shape}")
    return x


_TRANSPOSED: dict[int, tuple[weakref.ref, int, torch.Tensor]] = {}
"""``id(weight) -> (weakref to it, its version, weight.T contiguous)``: a collection rollout
reuses one transposed copy for all its steps (a 803 x 512 transpose costs about 0.7 ms)."""


def _transposed(weight: torch.Tensor) -> torch.Tensor:
    """``weight.T`` contiguous, cached until the weight changes in place (its ``_version``:
    an optimizer step, ``load_state_dict``) or is freed."""
    hit = _TRANSPOSED.get(id(weight))
    if hit is not None and hit[0]() is weight and hit[1] == weight._version:
        return hit[2]
    for key in [k for k, v in _TRANSPOSED.items() if v[0]() is None]:
        del _TRANSPOSED[key]
    wt = weight.detach().t().contiguous()
    _TRANSPOSED[id(weight)] = (weakref.ref(weight), weight._version, wt)
    return wt


class _SparseLinear(torch.autograd.Function):
    """``x @ weight.T + bias`` for CSR rows ``x`` (see the module doc)."""

    @staticmethod
    def forward(ctx, weight: torch.Tensor, bias: torch.Tensor, rows: SparseRows) -> torch.Tensor:  # type: ignore[override]
        ctx.rows = rows
        n = rows.shape[0]
        if n == 0:
            return bias.new_zeros((0, weight.shape[0]))
        out = F.embedding_bag(
            torch.from_numpy(rows.cols),
            _transposed(weight),
            torch.from_numpy(rows.indptr),
            mode="sum",
            per_sample_weights=torch.from_numpy(rows.vals),
            include_last_offset=True,
        )
        return out.add_(bias)

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):  # type: ignore[override]
        rows: SparseRows = ctx.rows
        g = grad_out.detach().contiguous().numpy()
        gw = np.empty((rows.width, g.shape[1]), dtype=np.float32)
        _weight_grad(rows.indptr, rows.cols, rows.vals, g, gw)
        return torch.from_numpy(gw).t().contiguous(), grad_out.sum(0), None


def sparse_linear(rows: SparseRows, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``nn.functional.linear`` of the dense rows, computed from their non-zero entries:
    ``[N, out]``, differentiable in ``weight`` and ``bias``."""
    if weight.dtype != torch.float32 or weight.shape[1] != rows.width:
        raise ValueError(
            f"sparse_linear: a float32 weight [out, {rows.width}] is needed, got {tuple(weight.shape)} {weight.dtype}"
        )
    return _SparseLinear.apply(weight, bias, rows)
