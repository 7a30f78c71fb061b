"""Borrowed views for the kernels' long loops: arrays, and tuples of them, without reference counts.

numba counts references to every array a kernel holds: a view (``work[0]``), an
array taken from a tuple (``bx.weights``) or one passed on to another kernel takes a
reference and gives it back, each an atomic add on the array's shared counter.
In a loop of millions of small calls that is most of the time: perf put 55-60%
of random self-play in ``NRT_incref`` / ``NRT_decref`` before the batch loop
borrowed its arrays (issue 11), and 43% of ``caishen learn``'s labelling
before its loop did too.

:func:`borrowed` returns the same data, shapes and strides with a null
meminfo (for a tuple, every array inside it, nested tuples included): numba's
reference counting of it becomes a null test.  Only for arrays the caller keeps
alive for the whole call (a kernel's arguments, borrowed at its top), never
returned to Python or stored.  Never an array the kernel makes itself: numba frees
it after its last use by name, and a borrowed view of it would outlive it.
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

__all__ = ["borrowed", "flat_rows"]


def _borrow(context, builder, typ, value):
    """The LLVM value of ``value: typ`` with every array's meminfo null (tuples rebuilt element by element)."""
    if isinstance(typ, types.Array):
        src = context.make_array(typ)(context, builder, value=value)
        dst = context.make_array(typ)(context, builder)
        populate_array(dst, data=src.data, shape=src.shape, strides=src.strides, itemsize=src.itemsize,
                       meminfo=None, parent=None)
        return dst._getvalue()
    if isinstance(typ, types.BaseTuple):
        out = context.get_constant_undef(typ)
        for i, t in enumerate(typ):
            out = builder.insert_value(out, _borrow(context, builder, t, builder.extract_value(value, i)), i)
        return out
    context.nrt.incref(builder, typ, value)  # anything else is returned as a new reference (a no-op for ints)
    return value


@intrinsic
def borrowed(typingctx, value):
    """``value`` (an array, a tuple of arrays and other values, nested, or None) with its arrays borrowed:
    no reference counting (module docstring).  Its type is unchanged."""

    def codegen(context, builder, sig, args):
        return _borrow(context, builder, sig.args[0], args[0])

    return value(value), codegen


@intrinsic
def flat_rows(typingctx, arr, first):
    """Rows ``first`` on of a C-contiguous 2-D array as one flat 1-D view, borrowed (module docstring): a
    scratch area inside a caller's work matrix, made without numba's reshape (shape checks and a reference
    count on every call).  The caller keeps ``0 <= first <= arr.shape[0]``."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and arr.layout == "C"
            and isinstance(first, types.Integer)):
        return None
    flat = types.Array(arr.dtype, 1, "C")

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, value=args[0])
        rows, cols = cgutils.unpack_tuple(builder, src.shape, 2)
        start = context.cast(builder, args[1], sig.args[1], types.intp)
        dst = context.make_array(flat)(context, builder)
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(arr.dtype)))
        populate_array(dst, data=builder.gep(src.data, [builder.mul(start, cols)]),
                       shape=[builder.mul(builder.sub(rows, start), cols)], strides=[itemsize], itemsize=itemsize,
                       meminfo=None, parent=None)
        return dst._getvalue()

    return flat(arr, first), codegen
