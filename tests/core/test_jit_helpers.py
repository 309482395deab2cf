"""The low-level compiled helpers of ``spades_env.core.jit``: ``borrow`` (kernel arguments
without reference counts), ``store_bytes`` (unaligned little-endian stores into uint8 rows) and
``zero_fill`` (one memset), checked against plain numpy."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from numba.core.errors import TypingError

from spades_env.core.jit import borrow, store_bytes, zero_fill


@njit
def _add_through_borrowed(a, pair):
    a, pair = borrow((a, pair))
    b, c = pair
    for i in range(a.shape[0]):
        row = a[i]  # a view of a borrowed array: no reference count either
        for j in range(row.shape[0]):
            row[j] += b[j] * c
    return a.shape[0], a.strides[0]


def test_borrowed_arrays_read_and_write_the_callers_memory():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    b = np.array([1, 2, 3, 4], dtype=np.int64)
    before = (sys.getrefcount(a), sys.getrefcount(b))
    for _ in range(3):
        rows, stride = _add_through_borrowed(a, (b, 10))
    assert (rows, stride) == (3, 32)
    np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4) + 30 * np.array([1, 2, 3, 4]))
    assert (sys.getrefcount(a), sys.getrefcount(b)) == before  # nothing leaked or freed


@njit
def _store(out, index, value, width):
    if width == 8:
        store_bytes(out, index, value, 8)
    else:
        store_bytes(out, index, value, 4)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 24), st.integers(-(2**63), 2**63 - 1), st.sampled_from([4, 8]))
def test_store_bytes_writes_the_little_endian_bytes_and_nothing_else(index, value, width):
    out = np.full(32, 0xAA, dtype=np.uint8)
    _store(out, index, value, width)
    expect = np.full(32, 0xAA, dtype=np.uint8)
    expect[index : index + width] = np.frombuffer(np.int64(value).tobytes()[:width], dtype=np.uint8)
    np.testing.assert_array_equal(out, expect)


def test_store_bytes_refuses_other_arrays_and_widths():
    @njit
    def into_float(a):
        store_bytes(a, 0, 1, 4)

    @njit
    def width3(a):
        store_bytes(a, 0, 1, 3)

    with pytest.raises(TypingError):
        into_float(np.zeros(8, dtype=np.float32))
    with pytest.raises(TypingError):
        width3(np.zeros(8, dtype=np.uint8))


@njit
def _zero_rows(a):
    for i in range(a.shape[0]):
        zero_fill(a[i])


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int64])
def test_zero_fill_clears_exactly_the_array(dtype):
    a = np.arange(1, 3 * 803 + 1).astype(dtype).reshape(3, 803)
    _zero_rows(a[1:2])
    assert (a[1] == 0).all()
    np.testing.assert_array_equal(a[0], np.arange(1, 804).astype(dtype))
    np.testing.assert_array_equal(a[2], np.arange(2 * 803 + 1, 3 * 803 + 1).astype(dtype))
