"""Optimizer hints for generated launchers.

``nonnegative(i)`` returns the integer *i* and tells LLVM that it is >= 0
(``llvm.assume``), so that Numba's negative-index wraparound on ``a[i]``
folds away for the int32 thread indices of kernels (Warp's ``tid()`` is
int32, and a signed index costs a compare and a select per access).

``borrowed(a)`` returns the array *a* without its owner (meminfo and parent null): a CPU
launcher's arrays are held by its Python caller until the launch returns, and a kernel body
inlined into the launcher's loop would otherwise take and drop a reference to every array
parameter on every thread (Numba's reference counting, an atomic read-modify-write each:
20 to 50 ns a thread for a small kernel, and contended cache lines on every core).  With no
owner the reference counting folds away.  A ``@sim.struct`` argument's array fields (nested
structs' too) lose their owners the same way: every use of a field would otherwise count
references (the Featherstone step, whose structs hold 35 arrays, spent most of its time
there).  Anything else is returned as it is.
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic
from numba.core.imputils import impl_ret_borrowed

from numba_sim.native import is_cuda_context
from numba_sim.typing.structs import StructType


def assume_nonnegative(context, builder, index):
    """Tell LLVM (CPU target) that the LLVM integer *index* is >= 0; returns *index*."""
    if not is_cuda_context(context):
        is_nonnegative = builder.icmp_signed(">=", index, ir.Constant(index.type, 0))
        assume = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [ir.IntType(1)]), "llvm.assume")
        builder.call(assume, [is_nonnegative])
    return index


@intrinsic
def nonnegative(typingctx, value):
    if not isinstance(value, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return assume_nonnegative(context, builder, args[0])

    return value(value), codegen


def has_owned_arrays(value_type):
    """Whether *value_type* is an array or a struct with array fields (nested too)."""
    return isinstance(value_type, types.Array) or (
        isinstance(value_type, StructType) and any(map(has_owned_arrays,
                                                       (t for _, t in value_type.fields))))


def without_owners(context, builder, value_type, value):
    """*value* with the meminfo and parent of its arrays null: an array's own, or those of a
    struct's array fields (nested structs' too)."""
    if isinstance(value_type, types.Array):
        array = cgutils.create_struct_proxy(value_type)(context, builder, value=value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        array.parent = cgutils.get_null_value(array.parent.type)
        return array._getvalue()
    if isinstance(value_type, StructType) and has_owned_arrays(value_type):
        proxy = cgutils.create_struct_proxy(value_type)(context, builder, value=value)
        for name, field_type in value_type.fields:
            setattr(proxy, name, without_owners(context, builder, field_type,
                                                getattr(proxy, name)))
        return proxy._getvalue()
    return value


@intrinsic
def borrowed(typingctx, value):
    def codegen(context, builder, signature, args):
        if not has_owned_arrays(signature.args[0]):  # a new reference, as returned
            return impl_ret_borrowed(context, builder, signature.return_type, args[0])
        return without_owners(context, builder, signature.args[0], args[0])

    return value(value), codegen
