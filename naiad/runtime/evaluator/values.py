"""How the evaluator holds IR values on NumPy, and the language types it hands the interpreter.

The IR is signless; the interpreter's tables are typed by language dtypes (`int32`, `uint32`,
`fp8e4nv`, ...). Every integer value is kept in one *canonical* view: `i1` as bool, `iN` as
intN, `index` as int64. An op whose meaning depends on signedness (`divui`, `cmpi ult`, `extui`,
`uitofp`, `fptoui`, `maxui`, ...) reinterprets its operands as the op name says (`unsigned()`,
`signed()`), runs the interpreter's meaning with the matching language dtype, and comes back
to the canonical view (`canonical()`). Floats are held as the interpreter holds them
(`floats.numpy_dtype`: float16/32/64, ml_dtypes' bfloat16 and fp8, fp8e4b15 as uint8 bits);
pointers as the interpreter's `Pointers` (addresses with the argument they derive from).
"""

from __future__ import annotations

import numpy as np

from ...ir import (
    BoolAttr,
    DenseElementsAttr,
    FloatAttr,
    FloatType,
    IndexType,
    IntegerAttr,
    IntegerType,
    RankedTensorType,
    element_type,
    shape_of,
)
from ...ir.float_format import float_to_bits
from ...language import dtypes as t
from ..interpreter import floats
from ..interpreter.memory import Pointers
from .errors import EvaluationError

# MLIR's float kinds as Triton's type names (what `floats.convert` and the dtypes speak).
FLOAT_NAMES = {
    "f16": "fp16",
    "bf16": "bf16",
    "f32": "fp32",
    "f64": "fp64",
    "f8E4M3FN": "fp8e4nv",
    "f8E5M2": "fp8e5",
    "f8E4M3FNUZ": "fp8e4b8",
    "f8E5M2FNUZ": "fp8e5b16",
    "f8E4M3B11FNUZ": "fp8e4b15",
}


def int_width(ir_type) -> int:
    """Bits of an integer (or index) type or tensor element type."""
    scalar = element_type(ir_type)
    return 64 if isinstance(scalar, IndexType) else scalar.width


def scalar_dtype(scalar, unsigned: bool = False) -> t.dtype:
    """The language dtype of IR scalar type `scalar`; `unsigned` picks uintN for integers.

    `i1` is `int1` (bool) in the canonical view; seen as a signed or unsigned number it is
    held in 8 bits (`view_dtype`)."""
    if isinstance(scalar, IntegerType | IndexType):
        width = int_width(scalar)
        if width == 1:
            return t.int1
        if width not in (8, 16, 32, 64):
            raise EvaluationError(f"integers of {width} bits are not TTIR types")
        return t.dtype(f"{'u' if unsigned else ''}int{width}")
    if isinstance(scalar, FloatType):
        return t.dtype(FLOAT_NAMES[scalar.kind])
    pointee = getattr(scalar, "pointee_type", None)
    if pointee is not None:
        if isinstance(pointee, RankedTensorType):  # a block pointer
            return t.pointer_type(t.block_type(scalar_dtype(pointee.element_type), pointee.shape))
        return t.pointer_type(scalar_dtype(pointee))
    raise EvaluationError(f"the evaluator has no values of type {scalar}")


def view_dtype(ir_type, unsigned: bool) -> t.dtype:
    """The dtype of an integer seen with a signedness (`i1`: int8 / uint8, i.e. -1 / 1)."""
    width = int_width(ir_type)
    if width == 1:
        return t.uint8 if unsigned else t.int8
    return scalar_dtype(element_type(ir_type), unsigned)


def lang_type(ir_type, unsigned: bool = False) -> t.dtype:
    """The language type (scalar dtype, or block type of a tensor) of IR type `ir_type`."""
    scalar = scalar_dtype(element_type(ir_type), unsigned)
    shape = shape_of(ir_type)
    return t.block_type(scalar, shape) if shape else scalar


def host_dtype(ir_type) -> np.dtype:
    """The NumPy dtype holding (canonical) values of `ir_type`'s elements."""
    scalar = scalar_dtype(element_type(ir_type))
    return np.dtype(np.uint64) if scalar.is_ptr() else floats.numpy_dtype(scalar.name)


def float_name(ir_type) -> str:
    """Triton's name of a float type or tensor element type (`fp32`, `fp8e4nv`)."""
    return FLOAT_NAMES[element_type(ir_type).kind]


def signed(array, width: int) -> np.ndarray:
    """A canonical integer array seen as signed numbers (`i1`: true is -1)."""
    if width == 1:
        return -np.asarray(array).astype(np.int8)
    return np.asarray(array)


def unsigned(array, width: int) -> np.ndarray:
    """A canonical integer array seen as unsigned numbers (its bits as uintN)."""
    if width == 1:
        return np.asarray(array).astype(np.uint8)
    return np.asarray(array).view(f"uint{width}")


def canonical(array, width: int) -> np.ndarray:
    """Integer results in any view back to the canonical one (`i1`: the low bit)."""
    array = np.asarray(array)
    if width == 1:
        return array.astype(bool) if array.dtype == np.bool_ else (array & 1).astype(bool)
    dtype = np.dtype(f"int{width}")
    if array.dtype.itemsize == dtype.itemsize:
        return array.view(dtype)
    return array.astype(dtype)


def scalar_value(value, ir_type) -> np.ndarray:
    """A Python number (a launch argument, a loop counter) as a canonical 0-d value."""
    scalar = element_type(ir_type)
    if isinstance(scalar, IntegerType | IndexType):
        width = int_width(scalar)
        if width == 1:
            return np.array(bool(value))
        bits = int(value) % (1 << width)
        return np.array(bits - (1 << width) if bits >> (width - 1) else bits, f"int{width}")
    if isinstance(scalar, FloatType):
        return float_array(scalar.kind, (float(value),)).reshape(())
    raise EvaluationError(f"cannot make a scalar of type {ir_type} from {value!r}")


def array_value(value, ir_type) -> np.ndarray:
    """A host array as the value of a tensor-typed argument (of a function called directly):
    numbers of another dtype are converted as a cast to the element type would."""
    array = np.asarray(value)
    dtype = host_dtype(ir_type)
    if array.shape != shape_of(ir_type):
        raise EvaluationError(f"a value of type {ir_type} cannot be made from shape {array.shape}")
    if array.dtype == dtype:
        return array.copy()
    scalar = element_type(ir_type)
    if isinstance(scalar, FloatType):
        return floats.convert(array.astype(np.float64), "fp64", FLOAT_NAMES[scalar.kind])
    if int_width(scalar) == 1:
        return array != 0
    return array.astype(np.int64).astype(dtype)


def float_array(kind: str, values) -> np.ndarray:
    """Float attribute values (already of format `kind`) as an array of the host dtype, bit for
    bit. fp8e4b15 is Triton's format, not the MLIR type it borrows the name of (bias 11 there,
    15 here), so its values are converted rather than copied."""
    name = FLOAT_NAMES[kind]
    if name == "fp8e4b15":
        return floats.convert(np.array(values, np.float64), "fp64", name)
    width = floats.numpy_dtype(name).itemsize * 8
    bits = np.array([float_to_bits(kind, v) for v in values], f"uint{width}")
    return bits.view(floats.numpy_dtype(name))


def constant(attr, ir_type) -> np.ndarray:
    """The value of a constant attribute (`arith.constant`) of type `ir_type`."""
    if isinstance(attr, BoolAttr):
        return np.array(bool(attr.value))
    if isinstance(attr, IntegerAttr):
        return scalar_value(attr.value, ir_type)
    if isinstance(attr, FloatAttr):
        return float_array(attr.type.kind, (attr.value,)).reshape(())
    if isinstance(attr, DenseElementsAttr):
        scalar = attr.type.element_type
        if isinstance(scalar, FloatType):
            flat = float_array(scalar.kind, attr.values)
        else:
            flat = np.array(attr.values, host_dtype(scalar))
        shape = attr.type.shape
        return np.broadcast_to(flat, shape) if attr.is_splat else flat.reshape(shape)
    raise EvaluationError(f"the evaluator cannot make a constant of {attr}")


def zeros(ir_type):
    """A value of `ir_type` with every bit zero (what `ub.poison` is given: any value will do)."""
    shape = shape_of(ir_type)
    if scalar_dtype(element_type(ir_type)).is_ptr():
        return Pointers(np.zeros(shape, np.uint64), None)
    return np.zeros(shape, host_dtype(ir_type))
