"""Helpers for compiled code (numba) that do not belong to one module.

:func:`unmanaged`: a view of an array that numba does not reference-count.  numba increments and
decrements the reference count of every array handed to a jitted function it calls, each an
atomic operation; a kernel that calls small helpers per token or per card pays for thousands of
them (measured: the compiled JSON Lines reader ran at 0.17 GB per CPU-second with counted arrays,
0.44 without; the rules core about 0.59M against 0.70M hands per CPU-second).  A ``prange`` body gets such
views for free, which is why it looked 3x faster than a plain loop.
"""

from __future__ import annotations

from numba.extending import intrinsic
from numba.np.arrayobj import populate_array


@intrinsic
def unmanaged(typingctx, arr):
    """``arr`` (any numpy array type) as a view without a meminfo: same type, data, shape and strides.

    Valid only while ``arr`` itself is alive and only inside the jitted function that made it: use
    it on a jitted function's own arguments (which the caller keeps alive for the whole call), never
    return it or store it."""

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, value=args[0])
        out = context.make_array(sig.return_type)(context, builder)
        populate_array(out, data=src.data, shape=src.shape, strides=src.strides, itemsize=src.itemsize, meminfo=None)
        return out._getvalue()

    return arr(arr), codegen


__all__ = ["unmanaged"]
