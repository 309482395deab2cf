"""The numba decorator used by the rules core: compiled, cached on disk, no Python objects."""

from __future__ import annotations

from numba import njit

jit = njit(cache=True, nogil=True)
