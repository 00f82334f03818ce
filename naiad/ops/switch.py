"""The switch: Naiad's ops registered for torch's CPU and CUDA dispatch keys, and taken back.

`enable()` registers every implemented ATen overload (registry.py) through one
`torch.library.Library("aten", "IMPL")`, for both keys; ATen's autograd formulas run above them,
so backward passes call Naiad too wherever they reach an overload it implements. Before
registering it keeps torch's own kernel for each (`torch.library.get_kernel`): an op that meets
arguments it does not handle raises `Unsupported`, and the call goes to that kernel instead.
`disable()` destroys the library, which restores torch's kernels.
"""

from __future__ import annotations

import contextlib
import warnings

import torch

from .dtypes import Unsupported
from .registry import base_name, table

__all__ = ["disable", "enable", "registered", "use"]

DISPATCH_KEYS = ("CPU", "CUDA")


class _State:
    """The library while enabled, and what it holds; one per process (reset by disable())."""

    library = None
    names: tuple = ()


def _selected(include, exclude) -> list[str]:
    chosen = []
    for name in table():
        wanted = include is None or name in include or base_name(name) in include
        unwanted = exclude is not None and (name in exclude or base_name(name) in exclude)
        if wanted and not unwanted:
            chosen.append(name)
    return chosen


def _torch_kernel(schema_name: str, key: str):
    """torch's kernel for the overload and key, or None where it has none (CUDA kernels in a
    CPU-only build of torch)."""
    try:
        return torch.library.get_kernel(f"aten::{schema_name}", key)
    except RuntimeError:
        return None


def _with_fallback(fn, fallback, key: str, schema_name: str):
    keyset = torch._C.DispatchKeySet(key)
    tensors = _tensor_positions(schema_name)

    def kernel(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Unsupported:
            if fallback is None:
                raise
            args = [_boxed(a) if i in tensors else a for i, a in enumerate(args)]
            return fallback.call_boxed(keyset, *args, **kwargs)

    kernel.__name__ = kernel.__qualname__ = f"naiad_{fn.__name__}"
    return kernel


def _tensor_positions(schema_name: str) -> frozenset:
    op, _, overload = schema_name.partition(".")
    schema = getattr(getattr(torch.ops.aten, op), overload or "default")._schema
    return frozenset(i for i, a in enumerate(schema.arguments) if str(a.type) == "Tensor")


def _boxed(value):
    """A Python number where the schema takes a Tensor (the dispatcher unwraps torch's
    wrapped numbers for Python kernels) back as a 0-dim tensor for torch's kernel."""
    if isinstance(value, (bool, int, float)):
        return torch.tensor(value)
    return value


def enable(include=None, exclude=None) -> None:
    """Register Naiad's ops for the CPU and CUDA dispatch keys, process-wide.

    Args:
        include: op names ("add", "softmax") or overloads ("add.Tensor") to register; None:
            all of them.
        exclude: op names or overloads to leave to torch.
    """
    disable()
    names = _selected(include, exclude)
    library = torch.library.Library("aten", "IMPL")
    implementations = table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel": meant
        for name in names:
            schema_name = name.removesuffix(".default")  # how the dispatcher spells it
            for key in DISPATCH_KEYS:
                fallback = _torch_kernel(schema_name, key)
                kernel = _with_fallback(implementations[name], fallback, key, schema_name)
                library.impl(schema_name, kernel, key)
    _State.library, _State.names = library, tuple(names)


def disable() -> None:
    """Give every op back to torch."""
    if _State.library is not None:
        _State.library._destroy()
    _State.library, _State.names = None, ()


def registered() -> list[str]:
    """The ATen overloads Naiad handles now (empty while disabled)."""
    return sorted(_State.names)


@contextlib.contextmanager
def use(include=None, exclude=None):
    """Naiad's ops registered within the block; what was on before is on again after it."""
    before = _State.names
    enable(include, exclude)
    try:
        yield
    finally:
        if before:
            enable(include=before)
        else:
            disable()
