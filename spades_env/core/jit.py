"""The numba decorator used by the rules core: compiled, cached on disk, no Python objects.

``error_model="numpy"``: no zero-division checks in the compiled code (numba's default,
``"python"``, tests every ``/``, ``//`` and ``%`` for a zero divisor and raises
``ZeroDivisionError``; those checks made the serial kernels 2-3x slower than the same code in a
``prange`` loop, which numba compiles with the numpy model). Nothing compiled with it divides
by zero: the core divides by constants only (``% 2``, ``% 4``, ``// 13``, ``/ 13.0``), the
observation by ``max(target_score, 1)``, and the bots' float divisions by sums guarded above 0
or by ``trick_value`` (at least 1 by the rules' validation). Integer ``//`` and ``%`` keep
Python's floor semantics on negative operands under this model.

``inline_jit`` functions are inlined into their compiled callers, and ``borrow`` /
``store_bytes`` / ``load_u64`` / ``zero_fill`` / ``prefetch`` are the low-level helpers of the
hot kernels (each documented below). numba's on-disk cache is keyed on each function's own
source file: a kernel that inlines (or calls) code from another module is not recompiled when
only that module changes. After editing the core, clear the caches (``make clean-numba``).

OpenMP waits passively: importing this module sets ``OMP_WAIT_POLICY=PASSIVE`` unless the
variable is already set (the OpenMP runtime reads it once, when numba's parallel layer first
loads). With the default active wait, the threads of a ``prange`` kernel spin on the cores
after each call; with any other process on those cores the parallel kernels ran 3 to 5 times
slower than the serial ones (``benchmarks/engine_under_load.py``), and the spinning slowed the
serial calls that followed. Set ``OMP_WAIT_POLICY=ACTIVE`` before the import on a machine
reserved for one process.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
from llvmlite import ir  # noqa: E402
from numba import njit, types  # noqa: E402
from numba.core import cgutils  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

jit = njit(cache=True, nogil=True, error_model="numpy")

inline_jit = njit(cache=True, nogil=True, error_model="numpy", inline="always")
"""``jit``, inlined into every compiled caller by numba (hot per-game helpers: a call passes
each array as seven machine words on the stack, which cost as much as the work)."""

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


def _borrow_value(context, builder, typ, value):
    if isinstance(typ, types.Array):
        src = context.make_array(typ)(context, builder, value=value)
        dst = context.make_array(typ)(context, builder)
        dst.meminfo = cgutils.get_null_value(dst.meminfo.type)
        dst.parent = cgutils.get_null_value(dst.parent.type)
        dst.nitems = src.nitems
        dst.itemsize = src.itemsize
        dst.data = src.data
        dst.shape = src.shape
        dst.strides = src.strides
        return dst._getvalue()
    if isinstance(typ, types.BaseTuple):
        items = [
            _borrow_value(context, builder, t, builder.extract_value(value, k)) for k, t in enumerate(typ)
        ]
        return context.make_tuple(builder, typ, items)
    context.nrt.incref(builder, typ, value)  # returned as a new reference
    return value


@intrinsic
def borrow(typingctx, value):
    """``value`` (an array, or a tuple of arrays and scalars, nested) with every array's
    reference count left out (views with no meminfo): the views and calls made from them skip
    numba's atomic reference counting, which took about half of a kernel's time on this
    project's machines. Only for the arguments of a kernel called from Python, which the caller
    keeps alive for the whole call; a borrowed array is never returned or stored."""

    def codegen(context, builder, signature, args):
        return _borrow_value(context, builder, signature.args[0], args[0])

    return value(value), codegen  # the same type: only the meminfo pointers differ


@intrinsic
def store_bytes(typingctx, arr, index, value, width):
    """Store the low ``width`` (a literal 4 or 8) bytes of the integer ``value``, little
    endian and unaligned, at ``arr[index:index + width]`` of a contiguous uint8 or int8 array
    (no bounds check: the caller keeps the bytes in range)."""
    if not (isinstance(arr, types.Array) and arr.dtype in (types.uint8, types.int8) and arr.layout == "C"):
        return None
    if not isinstance(width, types.IntegerLiteral) or width.literal_value not in (4, 8):
        return None
    nbits = 8 * width.literal_value

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, value=args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = builder.gep(ary.data, [idx])
        ity = ir.IntType(nbits)
        val = context.cast(builder, args[2], signature.args[2], types.int64)
        if nbits != 64:
            val = builder.trunc(val, ity)
        store = builder.store(val, builder.bitcast(ptr, ity.as_pointer()))
        store.align = 1
        return context.get_dummy_value()

    return types.none(arr, index, value, width), codegen


@intrinsic
def load_u64(typingctx, arr, index):
    """The 8 bytes ``arr[index:index + 8]`` of a contiguous uint8 or int8 array as one
    little-endian int64 (an unaligned load; no bounds check: the caller keeps it in range)."""
    if not (isinstance(arr, types.Array) and arr.dtype in (types.uint8, types.int8) and arr.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, value=args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = builder.bitcast(builder.gep(ary.data, [idx]), ir.IntType(64).as_pointer())
        load = builder.load(ptr)
        load.align = 1
        return load

    return types.int64(arr, index), codegen


@intrinsic
def prefetch(typingctx, arr, index, write):
    """Ask the CPU to bring the cache line of ``arr.flat[index]`` of a contiguous array in
    ahead of use (``write``: a literal bool, for writing); a hint, never a fault."""
    if not (isinstance(arr, types.Array) and arr.layout == "C" and isinstance(write, types.BooleanLiteral)):
        return None
    rw = 1 if write.literal_value else 0

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, value=args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = builder.bitcast(builder.gep(ary.data, [idx]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32]), "llvm.prefetch.p0"
        )
        builder.call(fn, [ptr, i32(rw), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(arr, index, write), codegen


@intrinsic
def zero_fill(typingctx, arr):
    """Set every byte of a contiguous array to 0 with one ``memset`` (numba's ``arr[:] = 0``
    is an element loop)."""
    if not (isinstance(arr, types.Array) and arr.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, value=args[0])
        nbytes = builder.mul(ary.nitems, ary.itemsize)
        cgutils.memset(builder, ary.data, nbytes, 0)
        return context.get_dummy_value()

    return types.none(arr), codegen


SPREAD8 = np.array([sum(((b >> j) & 1) << (8 * j) for j in range(8)) for b in range(256)], dtype=np.int64)
"""Byte ``b`` spread over 8 bytes: byte ``j`` of ``SPREAD8[b]`` is bit ``j`` of ``b``."""


@inline_jit
def card_bytes(out, offset, mask):
    """Write the 52 bits of a card mask as the 0/1 entries ``out[offset:offset + 52]`` of a
    contiguous uint8 or int8 array, 8 entries a store (no branch per card: a loop over the set
    bits mispredicts its exit every call)."""
    for k in range(6):
        store_bytes(out, offset + 8 * k, SPREAD8[(mask >> (8 * k)) & 0xFF], 8)
    store_bytes(out, offset + 48, SPREAD8[(mask >> 48) & 0xF], 4)
