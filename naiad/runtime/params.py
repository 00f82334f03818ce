"""A kernel's parameters as the launcher sees them: name, constexpr-ness, declared type, default."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from ..language import core
from ..language import dtypes as t


@dataclass(frozen=True)
class KernelParam:
    """One parameter of a `@naiad.jit` function."""

    name: str
    index: int
    is_constexpr: bool
    annotation: t.dtype | None  # a declared scalar or pointer type (`x: tl.int64`, `"*fp16"`)
    is_const: bool  # `x: tl.const` (read-only pointer)
    default: object
    do_not_specialize: bool = False
    do_not_specialize_on_alignment: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not inspect.Parameter.empty

    @property
    def num(self) -> int:
        """The parameter's position (Triton's name for `index`)."""
        return self.index


def _annotation_type(annotation):
    if annotation is inspect.Parameter.empty:
        return None
    annotation = core._unwrap_if_constexpr(annotation)
    if isinstance(annotation, t.dtype):
        return annotation
    if isinstance(annotation, str) and annotation not in ("constexpr", "tl.constexpr", "const"):
        try:
            return t.str_to_ty(annotation)
        except TypeError:
            return None
    return None


def _is_constexpr_annotation(annotation) -> bool:
    return annotation is core.constexpr or (
        isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"
    )


def kernel_params(fn, do_not_specialize=(), do_not_specialize_on_alignment=()) -> list[KernelParam]:
    """The launch parameters of `fn`. A `*args` parameter is not one: a jit function taking it is
    called from kernels only, where the extra arguments are a `tl.tuple` (frontend/calls.py),
    and a launch of it is refused (`var_positional`)."""
    signature = inspect.signature(fn)
    params = []
    named = [(n, p) for n, p in signature.parameters.items() if p.kind != p.VAR_POSITIONAL]
    for index, (name, p) in enumerate(named):
        if p.kind == p.VAR_KEYWORD:
            raise TypeError(f"kernel `{fn.__name__}`: **kwargs parameters are not supported")
        params.append(
            KernelParam(
                name,
                index,
                _is_constexpr_annotation(p.annotation),
                _annotation_type(p.annotation),
                p.annotation is core.const or p.annotation == "const",
                p.default,
                name in do_not_specialize or index in do_not_specialize,
                name in do_not_specialize_on_alignment or index in do_not_specialize_on_alignment,
            )
        )
    return params


def var_positional(fn) -> str | None:
    """The name of `fn`'s `*args` parameter, None where it has none."""
    for name, p in inspect.signature(fn).parameters.items():
        if p.kind == p.VAR_POSITIONAL:
            return name
    return None


def integer_argument_type(name: str, value: int, annotation: t.dtype | None = None) -> t.dtype:
    """The type a Python int argument takes, as Triton specializes it: its declared integer
    type, else int32 when it fits, uint64 in [2**63, 2**64), int64 otherwise."""
    if annotation is not None and annotation.is_int():
        return annotation
    if -(2**31) <= value < 2**31:
        return t.int32
    if 2**63 <= value < 2**64:
        return t.uint64
    if -(2**63) <= value < 2**63:
        return t.int64
    raise OverflowError(f"argument `{name}` = {value} is too large for a 64-bit integer")


def bind_arguments(name: str, params, var_positional, args: tuple, kwargs: dict) -> dict:
    """A launch's `args` and `kwargs` for the kernel `name` with `params`, by parameter name
    and in their order, defaults filled in; Python's TypeErrors where they do not fit. A
    kernel taking `*var_positional` is called from kernels only."""
    if var_positional is not None:
        raise TypeError(
            f"{name}() takes *{var_positional}: a jit function with *args "
            "is called from kernels only, not launched"
        )
    if len(args) > len(params):
        raise TypeError(f"{name}() takes {len(params)} arguments but {len(args)} were given")
    names = [p.name for p in params]
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if key in bound:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        bound[key] = value
    for p in params:
        if p.name not in bound:
            if not p.has_default:
                raise TypeError(f"{name}() missing required argument '{p.name}'")
            bound[p.name] = p.default
    return {p.name: bound[p.name] for p in params}


def unsupported_argument(name: str, value) -> TypeError:
    """The error for argument `name`'s `value`, which no kernel parameter takes; a launch says
    the same compiled and interpreted. A NumPy scalar (`np.int32(16)`, `x.sum()`) gets the
    advice that fixes it."""
    kind = type(value).__name__
    if isinstance(value, np.generic):
        return TypeError(
            f"argument `{name}` is a NumPy scalar ({kind}); pass a Python number instead "
            "(int(x) or float(x))"
        )
    return TypeError(
        f"argument `{name}`: expected an array, a tensor, an int, a float, a bool or None, "
        f"got {kind}"
    )
