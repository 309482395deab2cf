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

from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

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



def _borrowed_type(typ):
    if isinstance(typ, types.Array):
        return typ
    if isinstance(typ, types.BaseTuple):
        return types.BaseTuple.from_types([_borrowed_type(t) for t in typ])
    return typ


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
        return context.make_tuple(builder, _borrowed_type(typ), items)
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

    return _borrowed_type(value)(value), codegen
