"""What one compile of a kernel is specialized on, computed once per slow launch.

    spec = Specialization.of(jit_function, bound_arguments)
    spec.signature    {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr", ...}
    spec.constexprs   {"BLOCK": 1024, ...}       (an integer equal to 1 is one too, as Triton)
    spec.attrs        {"x_ptr": [["tt.divisibility", 16]], ...}
    spec.key          a hashable key: equal keys compile to the same code on one target

Triton's rules: a pointer is its element type, and 16-byte aligned or not; an integer is i32,
i64 or u64 by its value (or its annotation), constant when it equals 1, and divisible by 16 or
not (`do_not_specialize` drops both facts); a float is fp32; a bool i1; None and `tl.dtype`s
constexprs; a host TensorDescriptor its element type, block shape and padding, with its base's
alignment and which sizes and strides are divisible by 16; a tuple the tuple of its leaves'
(tuple_arguments.py), whose facts are named by their paths (`constexprs["t.1"]`). Arguments
may also be torch dtypes, signature strings or MockTensors (`warmup`), read as aligned
pointers. The launch hot path keys the same facts from the arguments directly (binder.py);
tests check that the two always agree, tuples included.

The launchers compile and run `launch_specialization`: the arguments' own, except while a
compiled kernel relaunches (`relaunching`, relaunch.py) with arguments that hold every fact it
was compiled for: then that kernel's, so that the relaunch runs it rather than compiling
another for the facts the arguments add, as Triton's launcher runs its compiled kernel.
Inductor compiles with its graph inputs taken as unaligned and launches aligned tensors.
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from contextvars import ContextVar
from dataclasses import dataclass

from ..language import core
from ..language import dtypes as t
from .host_arrays import describe, dtype_of_host_name, is_array_like
from .mock_tensor import MockTensor
from .params import KernelParam, integer_argument_type, unsupported_argument
from .tensor_descriptor import TensorDescriptor
from .tuple_arguments import is_tuple, rebuilt

_DIVISIBLE = [["tt.divisibility", 16]]

# What `jit(repr=f)`'s f is given, as in Triton: the constexprs by name (integers equal to 1
# among them) and the signature strings.
SpecializationView = namedtuple("SpecializationView", ["constants", "signature"])


@dataclass(frozen=True)
class Specialization:
    """The signature, constexprs and attributes of one launch's arguments, and their key."""

    signature: dict
    constexprs: dict
    attrs: dict
    key: tuple

    @classmethod
    def of(cls, jit_function, bound: dict) -> Specialization:
        """The specialization of a launch of `jit_function` with `bound` arguments."""
        signature, constexprs, attrs = {}, {}, {}
        for param in jit_function.params:
            aligned = param.name not in jit_function.do_not_specialize_on_alignment
            facts = _Facts(constexprs, attrs if aligned else {})
            signature[param.name] = facts.specialize(param, param.name, bound[param.name])
        return cls.make(signature, constexprs, attrs)

    @classmethod
    def make(cls, signature: dict, constexprs: dict, attrs: dict) -> Specialization:
        """The specialization of these facts, with its key (`JITFunction.preload` rebuilds
        one from text: specialization_data.py)."""
        key = (
            tuple((name, _tree_key(spec)) for name, spec in signature.items()),
            tuple((name, type(value), repr(value)) for name, value in constexprs.items()),
            repr(sorted(attrs.items())),
        )
        return cls(signature, constexprs, attrs, key)

    def admits(self, other: Specialization) -> bool:
        """Whether code compiled for this specialization is right for arguments of `other`:
        the same signature and constexprs, and each attribute of this one held there too."""
        if self.key[:2] != other.key[:2]:
            return False
        return all(other.attrs.get(name) == held for name, held in self.attrs.items())

    def view(self) -> SpecializationView:
        """This specialization as `jit(repr=f)`'s f reads it."""
        return SpecializationView(dict(self.constexprs), dict(self.signature))


@dataclass(frozen=True)
class TypedArgument:
    """An argument given by its signature string and attributes instead of a value (Triton's
    `ASTSource(signature, attrs=...)`): it specializes as a value with those facts would, so a
    later launch with such values finds the code compiled for them."""

    spec: str
    attributes: tuple = ()


# (JIT function, Specialization) of the compiled kernel relaunching in this context (relaunch.py).
relaunching: ContextVar = ContextVar("relaunching", default=None)


def launch_specialization(jit_function, bound: dict) -> Specialization:
    """The specialization a launch of `jit_function` with `bound` arguments compiles and runs
    (the module doc): the relaunched kernel's where it admits the arguments', else theirs."""
    spec = Specialization.of(jit_function, bound)
    relaunched = relaunching.get()
    if relaunched is not None and relaunched[0] is jit_function and relaunched[1].admits(spec):
        return relaunched[1]
    return spec


def kernel_name(jit_function, spec: Specialization) -> str:
    """The name of `jit_function`'s kernel compiled for `spec` (`JITFunction.repr`)."""
    named = getattr(jit_function, "repr", None)
    return named(spec.view()) if named is not None else jit_function.__name__


def native_specialize_impl(
    backend, arg, is_const: bool = False, specialize_value: bool = True, align: bool = True
):
    """One argument's (signature string, key) as Triton's launcher specializes it, for the
    libraries that build an ASTSource themselves (torch's wrap_triton): the key is `"D"` for a
    pointer or integer known divisible by 16 (`BaseBackend.parse_attr` reads it), `""` when
    not, and the value itself for an integer specialized to 1 (a constexpr). `backend` is
    accepted for Triton's signature; Naiad's rules are the same on every back end."""
    param = KernelParam("arg", 0, False, None, is_const, None, not specialize_value)
    spec, constant, attributes = _specialize_one(param, arg)
    if spec == "constexpr":
        return spec, constant
    return spec, "D" if attributes and align else ""


def mangle_type(arg, specialize: bool = False) -> str:
    """The signature string of an argument (`'*fp32'`, `'i32'`, ...): an integer equal to 1
    is `constexpr` only with `specialize`."""
    return native_specialize_impl(None, arg, specialize_value=specialize)[0]


@dataclass(frozen=True)
class _Facts:
    """Where one launch's specialization collects its constexpr values and attributes, by the
    name of the argument or of the tuple leaf (tuple_arguments.py) they belong to."""

    constexprs: dict
    attrs: dict

    def specialize(self, param, path: str, value):
        """The signature of argument `value` of `param` (at `path` inside a tuple argument),
        recording its facts: a tuple's is the tuple of its leaves' signatures."""
        if is_tuple(value) and not param.is_constexpr:
            leaf = dataclasses.replace(param, annotation=None)
            items = [
                self.specialize(dataclasses.replace(leaf, name=f"{path}.{i}"), f"{path}.{i}", v)
                for i, v in enumerate(value)
            ]
            return rebuilt(value, items)
        spec, constant, attributes = _specialize_one(param, value)
        if spec == "constexpr":
            self.constexprs[path] = value if constant is None else constant
        if attributes:
            self.attrs[path] = attributes
        if isinstance(value, TensorDescriptor):
            self.attrs.update(_descriptor_attributes(path, value))
        return spec


def _tree_key(spec):
    """A signature as a key: a tuple's class is part of it (a NamedTuple of the same leaves as
    a plain tuple compiles differently: its fields are read by name)."""
    if is_tuple(spec):
        return (type(spec), *(_tree_key(s) for s in spec))
    return spec


def _pointer_spec(element: t.dtype, const: bool = False) -> str:
    """`*fp32`; `*kfp32` for a `tl.const` parameter (stores through it are refused)."""
    return "*" + ("k" if const else "") + t.ty_to_signature(element)


def _specialize_one(param, value):
    """(signature string, constexpr value or None, attributes) of one argument, as Triton."""
    if param.is_constexpr or value is None or isinstance(value, t.dtype):
        return "constexpr", value, []
    if isinstance(value, core.constexpr) or getattr(value, "__naiad_jit__", False):
        return "constexpr", value, []  # `tl.constexpr(4)` in a tuple; a jit function
    if isinstance(value, TypedArgument):
        return value.spec, None, [list(attribute) for attribute in value.attributes]
    if isinstance(value, str):  # a signature string given for an argument that is not there
        return value, None, _DIVISIBLE if value.startswith("*") else []
    declared = param.annotation
    if declared is not None and declared.is_floating() and isinstance(value, int | float):
        # `x: tl.float16`: the declared type, and no specialization (as Triton's launcher)
        return t.ty_to_signature(declared), None, []
    if isinstance(value, bool):
        return "i1", None, []
    if isinstance(value, int):
        if value == 1 and not param.do_not_specialize:
            return "constexpr", 1, []
        spec = t.ty_to_signature(integer_argument_type(param.name, value, param.annotation))
        aligned = value % 16 == 0 and not param.do_not_specialize
        return spec, None, _DIVISIBLE if aligned else []
    if isinstance(value, float):
        return "fp32", None, []
    if isinstance(value, MockTensor):
        return _pointer_spec(value.element_type, param.is_const), None, _DIVISIBLE
    if isinstance(value, TensorDescriptor):
        element = t.ty_to_signature(describe(value.base).dtype)
        shape = ", ".join(str(int(b)) for b in value.block_shape)
        return f"tensordesc<{element}[{shape}], {value.padding}>", None, []
    if type(value).__module__ == "torch" and not is_array_like(value):  # a torch dtype
        spec = _pointer_spec(dtype_of_host_name(str(value)), param.is_const)
        return spec, None, _DIVISIBLE
    if is_array_like(value):
        array = describe(value)
        aligned = array.data_ptr % 16 == 0
        spec = _pointer_spec(array.dtype, param.is_const)
        return spec, None, _DIVISIBLE if aligned else []
    raise unsupported_argument(param.name, value)


def _descriptor_attributes(name: str, desc: TensorDescriptor) -> dict:
    """A host descriptor's parts specialize as pointers and integers do: its base when aligned
    to 16 bytes (under the descriptor's name), each size and each stride but the last (which is
    1) when divisible by 16 (under `name.shape.i`, `name.stride.i`), so that its rows are known
    aligned and its bounds masks known constant over a vector."""
    attrs = {}
    if describe(desc.base).data_ptr % 16 == 0:
        attrs[name] = _DIVISIBLE
    for i, size in enumerate(desc.shape):
        if size % 16 == 0:
            attrs[f"{name}.shape.{i}"] = _DIVISIBLE
    for i, stride in enumerate(desc.strides[:-1]):
        if stride % 16 == 0:
            attrs[f"{name}.stride.{i}"] = _DIVISIBLE
    return attrs
