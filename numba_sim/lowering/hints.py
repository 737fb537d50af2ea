"""Optimizer hints for generated launchers.

``nonnegative(i)`` returns the integer *i* and tells LLVM that it is >= 0
(``llvm.assume``), so that Numba's negative-index wraparound on ``a[i]``
folds away for the int32 thread indices of kernels (Warp's ``tid()`` is
int32, and a signed index costs a compare and a select per access).
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic

from numba_sim.native import is_cuda_context


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
