"""The numba decorator used by the rules core: compiled, cached on disk, no Python objects."""

from __future__ import annotations

from numba import njit

jit = njit(cache=True, nogil=True)

try:  # one instruction (tzcnt) where numba provides the intrinsic
    from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros
except ImportError:  # pragma: no cover
    _trailing_zeros = None

if _trailing_zeros is not None:

    @jit
    def ctz(x):
        """Index of the lowest set bit of a non-zero integer (bit masks of cards)."""
        return _trailing_zeros(x)

else:  # pragma: no cover

    @jit
    def ctz(x):
        """Index of the lowest set bit of a non-zero integer (bit masks of cards)."""
        n = 0
        for shift in (32, 16, 8, 4, 2, 1):
            if (x & ((1 << shift) - 1)) == 0:
                n += shift
                x >>= shift
        return n
