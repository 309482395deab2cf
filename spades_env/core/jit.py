"""The numba decorator used by the rules core: compiled, cached on disk, no Python objects.

``error_model="numpy"``: no zero-division checks in the compiled code (numba's default,
``"python"``, tests every ``/``, ``//`` and ``%`` for a zero divisor and raises
``ZeroDivisionError``; those checks made the serial kernels 2-3x slower than the same code in a
``prange`` loop, which numba compiles with the numpy model). Nothing compiled with it divides
by zero: the core divides by constants only (``% 2``, ``% 4``, ``// 13``, ``/ 13.0``), the
observation by ``max(target_score, 1)``, and the bots' float divisions by sums guarded above 0
or by ``trick_value`` (at least 1 by the rules' validation). Integer ``//`` and ``%`` keep
Python's floor semantics on negative operands under this model.
"""

from __future__ import annotations

from numba import njit

jit = njit(cache=True, nogil=True, error_model="numpy")

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
