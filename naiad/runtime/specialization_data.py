"""One compile of a JIT function as JSON text, Triton's `specialization_data`: what the JIT
cache hook is given (jit_hooks.py) and `JITFunction.preload` compiles again, in this process or
another, so that a program can store the kernels it compiled and warm a later run with them.

    text = dumps(jit_function, spec, "cpu", options)
    spec, target, options = loads(jit_function, text)

The text holds the kernel's name, the target, the compile options and the specialization (its
signature, constexpr values and attributes). A constexpr value is JSON where it is a number, a
bool, a string or None; `tl.constexpr`s, `tl.dtype`s, tuples (NamedTuples by their class's
module and name) and JIT functions (by theirs) are tagged objects. Any other value is kept as
its `repr` only, and `loads` refuses it, naming it: such a compile cannot be made again from
text.
"""

from __future__ import annotations

import dataclasses
import importlib
import json

from ..backends.registry import CompileOptions
from ..language import core
from ..language import dtypes as t
from ..language.type_spellings import str_to_ty
from .specialization import Specialization
from .tuple_arguments import is_named

FORMAT = "naiad-specialization-1"


def dumps(jit_function, spec: Specialization, target: str, options: CompileOptions) -> str:
    """The JSON text of `jit_function` compiled for `spec` on `target` with `options`."""
    return json.dumps(
        {
            "format": FORMAT,
            "name": _full_name(jit_function),
            "target": target,
            "options": dataclasses.asdict(options),
            "signature": {name: _encode(value) for name, value in spec.signature.items()},
            "constexprs": {name: _encode(value) for name, value in spec.constexprs.items()},
            "attrs": spec.attrs,
        }
    )


def loads(jit_function, text: str) -> tuple[Specialization, str, CompileOptions]:
    """The specialization, target and options `text` (made by `dumps`) holds for
    `jit_function`.

    Raises:
        ValueError: the text is not specialization data, or was made for another kernel, or
            holds a constexpr value that cannot be rebuilt.
    """
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("preload: not specialization data made by Naiad's JIT cache hook")
    if data["name"] != _full_name(jit_function):
        raise ValueError(
            f"preload: the data is of kernel `{data['name']}`, not `{_full_name(jit_function)}`"
        )
    signature = {name: _decode(value) for name, value in data["signature"].items()}
    constexprs = {name: _decode(value) for name, value in data["constexprs"].items()}
    options = data["options"]
    options["extern_libs"] = tuple(tuple(pair) for pair in options["extern_libs"])
    spec = Specialization.make(signature, constexprs, data["attrs"])
    return spec, data["target"], CompileOptions(**options)


def _full_name(jit_function) -> str:
    fn = jit_function.fn
    return f"{fn.__module__}.{fn.__qualname__}"


def _encode(value):
    """`value` as JSON (the module doc's tags)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, core.constexpr):
        return {"constexpr": _encode(value.value)}
    if isinstance(value, t.dtype):
        return {"dtype": t.ty_to_signature(value)}
    if isinstance(value, tuple | list):
        tagged = {"tuple" if isinstance(value, tuple) else "list": [_encode(v) for v in value]}
        if is_named(value):
            tagged["class"] = _class_name(type(value))
        return tagged
    if getattr(value, "__naiad_jit__", False):
        return {"jit": _class_name(value.fn)}
    return {"repr": repr(value)}


def _decode(value):
    """The value `_encode` made `value` of."""
    if not isinstance(value, dict):
        return value
    if "constexpr" in value:
        return core.constexpr(_decode(value["constexpr"]))
    if "dtype" in value:
        return str_to_ty(value["dtype"])
    if "list" in value:
        return [_decode(v) for v in value["list"]]
    if "tuple" in value:
        items = [_decode(v) for v in value["tuple"]]
        return _named(value["class"])(*items) if "class" in value else tuple(items)
    if "jit" in value:
        return _named(value["jit"])
    raise ValueError(f"preload: a constexpr value {value['repr']} cannot be rebuilt from text")


def _class_name(obj) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


def _named(name: str):
    """The object `module:qualname` names (a NamedTuple class, a JIT function)."""
    module, _, qualname = name.partition(":")
    if "<locals>" in qualname:
        raise ValueError(f"preload: `{qualname}` is defined inside a function: not reachable")
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found
