"""The values of the kernel language — `constexpr`, `tensor`, `tuple` — as Triton's
`triton.language.core` has them, and that module's other names (the dtypes, `builtin`, `jit`, ...)
re-exported from where they live.

A tensor's operators call the active semantic (active_semantic.py) by name. Nothing here knows
NumPy or the IR: tensors carry an opaque `handle` that only the builder understands.
"""

from __future__ import annotations

import builtins as _py
import sys
from enum import Enum

from .active_semantic import (  # noqa: F401  (re-exported: Triton's core has these names)
    _ACTIVE_SEMANTIC,
    builtin,
    current_semantic,
    is_builtin,
    jit,
    must_use_result,
    use_semantic,
)
from .compile_time import ConstexprFunction, constexpr_function  # noqa: F401
from .dtypes import (  # noqa: F401  (re-exported: the public dtype names live in `core`, as in Triton)
    bfloat16,
    block_type,
    const_pointer_type,
    constexpr_type,
    dtype,
    float8e4b8,
    float8e4b15,
    float8e4nv,
    float8e5,
    float8e5b16,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    pi32_t,
    pointer_type,
    tuple_type,
    uint8,
    uint16,
    uint32,
    uint64,
    void,
)

TRITON_MAX_TENSOR_NUMEL = 1048576


# -------------------------------------------------------------------------------------------------
# constexpr
# -------------------------------------------------------------------------------------------------
def _unwrap_if_constexpr(o):
    if type(o) is tensor:  # the usual argument, answered first: the semantic layer asks often
        return o
    if isinstance(o, list):
        return [_unwrap_if_constexpr(x) for x in o]
    if isinstance(o, _py.tuple) and not isinstance(o, tuple):
        values = [_unwrap_if_constexpr(x) for x in o]
        if hasattr(type(o), "_fields"):  # a NamedTuple keeps its class (and field names)
            return type(o)(*values)
        return _py.tuple(values)
    return o.value if isinstance(o, constexpr) else o


def _unwrap_shape(shape):
    """Shapes may be passed as a tuple/list or as varargs; either way, a tuple of ints."""
    shape = _unwrap_if_constexpr(shape)
    if len(shape) == 1 and isinstance(shape[0], (list, _py.tuple, tuple)):
        shape = _unwrap_if_constexpr(shape[0])
    return _py.tuple(_unwrap_if_constexpr(s) for s in shape)


def _folded(op):
    def method(self, *others):
        result = op(self.value, *(_unwrap_if_constexpr(o) for o in others))
        return result if isinstance(result, tensor) else constexpr(result)

    return method


def _rfolded(op):
    def method(self, other):
        result = op(_unwrap_if_constexpr(other), self.value)
        return result if isinstance(result, tensor) else constexpr(result)

    return method


def _constant_type(value):
    """The type of a compile-time value; a tuple's is the tuple of its elements' types, as in
    Triton, where a tuple of constants is a `tl.tuple` of constexprs, never one constexpr."""
    if isinstance(value, _py.tuple):
        return tuple_type([_constant_type(v) for v in value])
    return constexpr_type(value)


class constexpr:
    """A value known at compile time: specialized into the kernel, folded by every operator."""

    __slots__ = ("type", "value")

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value
        self.type = _constant_type(self.value)

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __hash__(self):
        return hash(self.value)

    def __index__(self):
        return self.value.__index__()

    def __bool__(self):
        return bool(self.value)

    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)

    def __iter__(self):
        return iter(self.value)

    def __len__(self):
        return len(self.value)

    def __getitem__(self, index):
        return constexpr(self.value[_unwrap_if_constexpr(index)])

    def __getattr__(self, name):
        # Lets `BLOCK.value`-style code and dtype constexprs (`DTYPE.is_fp16()`) read through.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.value, name)

    __add__ = _folded(lambda a, b: a + b)
    __radd__ = _rfolded(lambda a, b: a + b)
    __sub__ = _folded(lambda a, b: a - b)
    __rsub__ = _rfolded(lambda a, b: a - b)
    __mul__ = _folded(lambda a, b: a * b)
    __rmul__ = _rfolded(lambda a, b: a * b)
    __truediv__ = _folded(lambda a, b: a / b)
    __rtruediv__ = _rfolded(lambda a, b: a / b)
    __floordiv__ = _folded(lambda a, b: a // b)
    __rfloordiv__ = _rfolded(lambda a, b: a // b)
    __mod__ = _folded(lambda a, b: a % b)
    __rmod__ = _rfolded(lambda a, b: a % b)
    __pow__ = _folded(lambda a, b: a**b)
    __rpow__ = _rfolded(lambda a, b: a**b)
    __and__ = _folded(lambda a, b: a & b)
    __rand__ = _rfolded(lambda a, b: a & b)
    __or__ = _folded(lambda a, b: a | b)
    __ror__ = _rfolded(lambda a, b: a | b)
    __xor__ = _folded(lambda a, b: a ^ b)
    __rxor__ = _rfolded(lambda a, b: a ^ b)
    __lshift__ = _folded(lambda a, b: a << b)
    __rlshift__ = _rfolded(lambda a, b: a << b)
    __rshift__ = _folded(lambda a, b: a >> b)
    __rrshift__ = _rfolded(lambda a, b: a >> b)
    __eq__ = _folded(lambda a, b: a == b)
    __ne__ = _folded(lambda a, b: a != b)
    __lt__ = _folded(lambda a, b: a < b)
    __le__ = _folded(lambda a, b: a <= b)
    __gt__ = _folded(lambda a, b: a > b)
    __ge__ = _folded(lambda a, b: a >= b)
    __neg__ = _folded(lambda a: -a)
    __pos__ = _folded(lambda a: +a)
    __invert__ = _folded(lambda a: ~a)
    __abs__ = _folded(lambda a: _py.abs(a))

    def logical_and(self, other):
        return constexpr(self.value and _unwrap_if_constexpr(other))

    def logical_or(self, other):
        return constexpr(self.value or _unwrap_if_constexpr(other))


def _constexpr_to_value(v):
    return v.value if isinstance(v, constexpr) else v


class PropagateNan(Enum):
    """How `minimum`/`maximum`/`clamp` treat NaN: NONE returns the other operand, ALL gives NaN."""

    NONE = 0x0000
    ALL = 0xFFFF


def const(x):
    """Annotation marking a pointer argument read-only (`x: tl.const`)."""
    return x


# -------------------------------------------------------------------------------------------------
# tensor
# -------------------------------------------------------------------------------------------------
def _binary(name, reverse=False):
    def method(self, other, _semantic=None):
        semantic = _semantic or current_semantic()
        if reverse:
            return getattr(semantic, name)(other, self)
        return getattr(semantic, name)(self, other)

    method.__name__ = name
    return method


class tensor:
    """A block (or a scalar, when `type` is not a block_type) of values held by the builder."""

    __slots__ = ("__weakref__", "_attrs", "dtype", "handle", "type")

    def __init__(self, handle, type: dtype):
        self.handle = handle
        self.type = type
        self.dtype = type.scalar

    # `shape` and `numel` are made when asked: most values (the interpreter makes thousands a
    # launch) are never asked, and their constexprs cost more than the rest of the tensor.
    @property
    def shape(self):
        return [constexpr(s) for s in self.type.get_block_shapes()]

    @property
    def numel(self):
        numel = 1
        for s in self.type.get_block_shapes():
            numel *= s
        return constexpr(numel)

    def __repr__(self):
        return f"naiad.tensor({self.type})"

    def __str__(self):
        return current_semantic().tensor_to_str(self)

    # Python protocols the interpreter answers with real values; the compiler rejects them.
    def __bool__(self):
        return current_semantic().to_python(self, bool)

    def __index__(self):
        return current_semantic().to_python(self, int)

    def __int__(self):
        return current_semantic().to_python(self, int)

    def __float__(self):
        return current_semantic().to_python(self, float)

    def __hash__(self):
        return id(self)

    def __iter__(self):
        raise TypeError("a naiad tensor is not iterable; index it with a constexpr or use tl.split")

    # Arithmetic: each operator is the semantic's function of the same name.
    __add__ = _binary("add")
    __radd__ = _binary("add", reverse=True)
    __sub__ = _binary("sub")
    __rsub__ = _binary("sub", reverse=True)
    __mul__ = _binary("mul")
    __rmul__ = _binary("mul", reverse=True)
    __truediv__ = _binary("truediv")
    __rtruediv__ = _binary("truediv", reverse=True)
    __floordiv__ = _binary("floordiv")
    __rfloordiv__ = _binary("floordiv", reverse=True)
    __mod__ = _binary("mod")
    __rmod__ = _binary("mod", reverse=True)
    __and__ = _binary("and_")
    __rand__ = _binary("and_", reverse=True)
    __or__ = _binary("or_")
    __ror__ = _binary("or_", reverse=True)
    __xor__ = _binary("xor_")
    __rxor__ = _binary("xor_", reverse=True)
    __lshift__ = _binary("shl")
    __rlshift__ = _binary("shl", reverse=True)

    def __rshift__(self, other, _semantic=None):
        # Arithmetic or logical by this tensor's own signedness, before promotion (as Triton).
        return (_semantic or current_semantic()).shr(self, other, self.dtype.is_int_signed())

    def __rrshift__(self, other, _semantic=None):
        # Triton decides by the tensor operand here too, although it is the shift amount.
        return (_semantic or current_semantic()).shr(other, self, self.dtype.is_int_signed())

    __gt__ = _binary("greater_than")
    __ge__ = _binary("greater_equal")
    __lt__ = _binary("less_than")
    __le__ = _binary("less_equal")
    __eq__ = _binary("equal")
    __ne__ = _binary("not_equal")
    logical_and = _binary("logical_and")
    logical_or = _binary("logical_or")

    def __neg__(self, _semantic=None):
        return (_semantic or current_semantic()).minus(self)

    def __invert__(self, _semantic=None):
        return (_semantic or current_semantic()).invert(self)

    def __not__(self, _semantic=None):
        return (_semantic or current_semantic()).not_(self)

    def __pow__(self, other):
        raise TypeError("`**` is not defined on naiad tensors; use libdevice.pow")

    # No `__pos__` and no `__abs__`: Triton's tensors have neither, so `+x` and `abs(x)` are
    # refused there (use `tl.abs`); a kernel that works here must compile there.

    def __getitem__(self, slices, _semantic=None):
        return (_semantic or current_semantic()).getitem(self, slices)

    @property
    def T(self):
        return current_semantic().permute(self, None)

    def to(self, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None):
        return (_semantic or current_semantic()).cast(self, dtype, fp_downcast_rounding, bitcast)


class tuple:
    """A tuple of kernel values (`tl.tuple`): arguments, results and loop-carried state."""

    def __init__(self, args, type=None):
        self.values = [a for a in args]
        self.type = type or tuple_type([getattr(v, "type", constexpr_type(v)) for v in self.values])

    def __getitem__(self, index):
        index = _unwrap_if_constexpr(index)
        if isinstance(index, slice):
            return tuple(self.values[index])
        return self.values[index]

    def __getattr__(self, name):
        fields = self.__dict__.get("type").fields if "type" in self.__dict__ else []
        if name in fields:
            return self.values[fields.index(name)]
        raise AttributeError(name)

    def __add__(self, other):
        return tuple(self.values + list(other))

    def __mul__(self, count):
        return tuple(self.values * _unwrap_if_constexpr(count))

    def __eq__(self, other):
        return constexpr(self.values == list(other))

    def __hash__(self):
        return hash(_py.tuple(self.values))

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        return len(self.values)

    def __repr__(self):
        return f"({', '.join(repr(v) for v in self.values)})"


class slice:
    """A `start:stop:step` slice as a language value (only `:` is allowed in tensor indexing)."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


def _tensor_member(fn):
    """Also expose the builtin `fn` as a method of `tensor` (as `x.sum()`, `x.to(...)`, ...)."""
    setattr(tensor, fn.__name__, fn)
    return fn


def __getattr__(name: str):
    """Triton's `triton.language.core` also holds every builtin (`core.load`, `core.where`);
    Naiad's live in their own modules, so the package's public names are read through here."""
    if name == "_aggregate":  # Triton 3.6's only spelling of `@triton.aggregate`
        from .aggregates import aggregate

        return aggregate
    package = sys.modules.get(__package__)
    if name.startswith("_") or package is None or name not in package.__dict__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return package.__dict__[name]
