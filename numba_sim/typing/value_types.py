"""Numba types, data models and ``typeof`` for the value-type table.

One :class:`ValueType` per row of :data:`numba_sim.types.VALUE_TABLE`, and one for each
vector or matrix type made later (:func:`numba_sim.types.vector`, or a result type such
as the 5x3 product of a 5x4 and a 4x3 matrix, made during typing).  Its
data model is an LLVM array of the scalar components in storage order (the
same bytes as an element of a ``(..., 3)`` float32 array for vec3), passed to
functions and CUDA kernels as that many scalars.
"""

from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models
from numba.core.extending import register_model, typeof_impl
from numba.np import numpy_support

from numba_sim import types as value_table


class ValueType(types.Type):
    """The Numba type of one value type (``vec3``, ``mat33d``, ``quat``...)."""

    def __init__(self, spec):
        self.spec = spec
        self.dtype = numpy_support.from_dtype(spec.dtype)
        super().__init__(name=spec.name)

    @property
    def kind(self):
        return self.spec.kind

    @property
    def shape(self):
        return self.spec.shape

    @property
    def size(self):
        return self.spec.size

    @property
    def python_class(self):
        return value_table.CLASSES[self.spec]

    def __reduce__(self):
        return value_type_of, (self.spec.kind, self.spec.dtype.str, self.spec.shape)


@register_model(ValueType)
class ValueModel(models.UniTupleModel):
    """``[size x scalar]`` in registers and memory; ``size`` scalars as arguments."""

    def __init__(self, dmm, fe_type):
        models.DataModel.__init__(self, dmm, fe_type)
        self._elem_model = dmm.lookup(fe_type.dtype)
        self._count = fe_type.size
        self._value_type = ir.ArrayType(self._elem_model.get_value_type(), self._count)
        self._data_type = ir.ArrayType(self._elem_model.get_data_type(), self._count)


VALUE_TYPES = {spec: ValueType(spec) for spec in value_table.VALUE_TABLE}
"""The Numba type of each spec (those made on demand join when made)."""


@value_table.on_new_spec
def _declare_value_type(spec):
    VALUE_TYPES[spec] = ValueType(spec)


def value_type_by_name(name):
    return VALUE_TYPES[value_table.SPEC_BY_NAME[name]]


def value_type_of(kind, dtype, shape):
    """The ValueType for (kind, Numba or NumPy dtype, shape), or None if there is no such
    type (vectors and matrices of any size are made on demand)."""
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    spec = value_table.find_spec(kind, dtype, shape)
    return VALUE_TYPES[spec] if spec is not None else None


@typeof_impl.register(value_table.Value)
def _typeof_value(val, c):
    return VALUE_TYPES[val.spec]
