"""Numba IR rewrites that numba_sim needs on both targets.

``sim.view(a, sim.vec3)``: Numba's feature validation rejects any call of an
attribute named ``view`` on something that is not an array ("'view' can only
be called on NumPy dtypes").  Before type inference, this rewrite replaces the
attribute lookup ``numba_sim.view`` by the global function itself, so the
public spelling works in ``@njit``, ``@cuda.jit`` and kernels alike.
"""

import types

from numba_sim.arrays import view

_PACKAGE = __name__.rpartition(".")[0]


def _is_package(value):
    """Whether *value* is the numba_sim package (by name: this module sits below it)."""
    return isinstance(value, types.ModuleType) and value.__name__ == _PACKAGE


def _make_rewrite(rewrites_module, ir_module, errors_module):
    class ModuleViewRewrite(rewrites_module.Rewrite):
        def match(self, func_ir, block, typemap, calltypes):
            self.block = block
            self.matches = []
            for stmt in block.body:
                if not (isinstance(stmt, ir_module.Assign) and isinstance(stmt.value, ir_module.Expr)
                        and stmt.value.op == "getattr" and stmt.value.attr == "view"):
                    continue
                try:
                    owner = func_ir.get_definition(stmt.value.value)
                except (KeyError, errors_module.NumbaError, AttributeError):
                    continue
                if isinstance(owner, (ir_module.Global, ir_module.FreeVar)) \
                        and _is_package(owner.value):
                    self.matches.append(stmt)
            return bool(self.matches)

        def apply(self):
            for stmt in self.matches:
                stmt.value = ir_module.Global("view", view, stmt.value.loc)
            return self.block

    rewrites_module.register_rewrite("before-inference")(ModuleViewRewrite)
    return ModuleViewRewrite


def register():
    from numba.core import errors, ir, rewrites

    _make_rewrite(rewrites, ir, errors)


def register_cuda():
    from numba.cuda.core import errors as cuda_errors
    from numba.cuda.core import ir as cuda_ir
    from numba.cuda.core import rewrites as cuda_rewrites

    _make_rewrite(cuda_rewrites, cuda_ir, cuda_errors)


register()
