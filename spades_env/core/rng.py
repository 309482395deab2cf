"""The deal generator: a 48-bit linear congruential generator kept in the state row.

Keeping the generator in the row makes every game reproducible from its seed alone, with no
global random state, and gives the AEC env and the batched engine the same deals. The
arithmetic gives the same numbers compiled (wrapping int64) and in plain Python.
"""

from __future__ import annotations

import numpy as np

from spades_env.core.jit import jit

_MULT = 0x5DEECE66D
_INC = 0xB
_MASK48 = (1 << 48) - 1


def seed_to_rng(seed: int | None) -> int:
    """A 48-bit generator state from any integer seed (or fresh entropy for ``None``)."""
    ss = np.random.SeedSequence(seed)
    return int(ss.generate_state(1, dtype=np.uint64)[0]) & _MASK48


@jit
def next_u32(state, index):
    """Advance the generator stored at ``state[index]``; return 32 random bits."""
    x = (state[index] * _MULT + _INC) & _MASK48
    state[index] = x
    return x >> 16


@jit
def below(state, index, n):
    """A random integer in ``[0, n)`` from the generator at ``state[index]``."""
    return (next_u32(state, index) * n) >> 32


@jit
def shuffle_into(state, index, out):
    """Fill ``out`` with a random permutation of ``0..len(out)-1`` (Fisher-Yates)."""
    n = out.shape[0]
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = below(state, index, i + 1)
        t = out[i]
        out[i] = out[j]
        out[j] = t
