"""`tl.extra.libdevice`: the math functions of CUDA's libdevice, with Triton's names and signatures.

Each function is a builtin taking `arg0, arg1, ...` and calling one `__nv_*` symbol chosen by the
exact dtypes of its arguments (the table is in `libdevice_signatures.py`): `libdevice.tanh(x)`
on an fp32 tensor calls `__nv_tanhf`, on fp64 `__nv_tanh`, and on fp16 is an error listing the
accepted types, as in Triton. Python numbers are typed as usual (`pow(x, 2)` is `(fp32, int32)`,
the integer-power routine). The interpreter gives each symbol a NumPy meaning
(`naiad/runtime/interpreter/libdevice/`).

    @naiad.jit
    def kernel(x_ptr, y_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(y_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs)))
"""

from __future__ import annotations

import inspect

from .. import dtypes
from ..core import builtin
from .libdevice_signatures import FUNCTIONS, Function

_ARG = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _describe(function: Function) -> str:
    lines = [function.summary, "", "Accepted argument dtypes and the libdevice symbol each calls:"]
    for args, symbol, result in function.signatures:
        lines.append(f"    ({', '.join(args)}) -> {result}: {symbol}")
    if function.to_bool:
        lines.append("The int32 answer of the symbol is cast to int1, as in Triton.")
    return "\n".join(lines)


def _make(function: Function):
    """The builtin for `function`, with the signature `(arg0, ..., _semantic=None)`."""
    name = function.name
    table = {
        tuple(dtypes.dtype(a) for a in args): (symbol, dtypes.dtype(result))
        for args, symbol, result in function.signatures
    }
    params = [inspect.Parameter(f"arg{i}", _ARG) for i in range(function.arity)]
    arguments = inspect.Signature(params)

    def libdevice_function(*args, _semantic=None, **kwargs):
        try:
            bound = arguments.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"libdevice.{name}(): {e}") from None
        result = _semantic.extern_elementwise(table, list(bound.args), is_pure=True, name=name)
        return _semantic.cast(result, dtypes.int1) if function.to_bool else result

    libdevice_function.__name__ = libdevice_function.__qualname__ = name
    libdevice_function.__doc__ = _describe(function)
    libdevice_function.__module__ = __name__
    libdevice_function.__signature__ = inspect.Signature(
        params + [inspect.Parameter("_semantic", _ARG, default=None)]
    )
    return builtin(libdevice_function)


# One builtin per name of the table, made once at import (`FUNCTIONS` lists them).
globals().update({name: _make(function) for name, function in FUNCTIONS.items()})
