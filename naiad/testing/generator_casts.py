"""Narrowed scalars in masks and offsets: statements the kernel generator adds to about half of
its kernels, after everything else (issue 13, item 3).

A runtime scalar (`s0`, `flag` or the program id, scaled and shifted) is cast to a narrower or
unsigned dtype, or compared into a bool, where the cast changes its value: `(s0 * 37).to(tl.int8)`
wraps, `(flag - 41).to(tl.uint16)` is near 65535. One such scalar shifts the columns an input is
loaded from, under a two-sided bounds mask on the shifted offsets; another limits the lanes kept
(`offs < limit` or `limit <= offs`), in the load's mask or in the mask of the store that writes
the loaded block to an output of its own (`NW<i>`). The CPU back end's pointer and mask analyses
once read such casts as identities.

The choices come from a stream of their own and the statements only read the kernel's prologue,
so every seed keeps the kernel it had before, with these added.
"""

from __future__ import annotations

import random

from .generator_graph import Assign, KernelSpec, Store, Value
from .generator_ops import OpKind

_RATE = 0.5
_SOURCES = ("s0", "flag", "pid")
_SCALES = (1, 37, 3001, -5)
_BIASES = (0, -41, 100)
_BOOL_BIASES = (0, 1, 2)  # a bool true for some of the values of `flag`, `s0` and `pid`
_DTYPES = ("int1", "int8", "uint8", "int16", "uint16", "uint32", "bool")

_NARROW = OpKind("narrow", "({source} * {scale} + {bias}).to(tl.{dtype})", (), "cast")
_BOOL = OpKind("bool", "{source} * {scale} > {bias}", (), "compare")
_BELOW = OpKind("below", "{lanes} < {0}", (), "compare")
_AT_LEAST = OpKind("at_least", "{0} <= {lanes}", (), "compare")

# Per rank: the lanes a limit applies to (and the shape of the bool it makes), the shifted
# load's template ({0} the shift, {1} a lane limit or none), and the bounds of its rows.
_LANES = {1: (("offs", "block"),), 2: (("cols", "row"), ("rows", "col"))}
# The shifted lanes are parenthesized: with an unsigned shift they wrap at 32 bits, where the
# pointer itself would not (`X0 + offs + shift` may point far past X0 when `offs + shift` is 0).
_SHIFTED = {
    1: (
        "tl.load({x} + (offs + {0}), mask=(offs + {0} >= 0) & (offs + {0} < n){keep}, "
        "other={other})"
    ),
    2: (
        "tl.load({x} + rows[:, None] * n + (cols[None, :] + {0}), mask=(rows[:, None] < m) & "
        "(cols[None, :] + {0} >= 0) & (cols[None, :] + {0} < n){keep}, other={other})"
    ),
}


def add_narrowed_access(spec: KernelSpec) -> None:
    """Maybe add a load through narrowed offsets and masks, and its store, to `spec`."""
    rng = random.Random(f"naiad-generator-narrowed-{spec.seed}")
    if rng.random() >= _RATE:
        return
    names = (f"nw{i}" for i in range(1_000))
    shift = _narrowed(spec, rng, next(names))
    limit = _narrowed(spec, rng, next(names))
    lanes, shape = rng.choice(_LANES[spec.rank])
    keep = Value(next(names), "int1", shape)
    spec.body.append(Assign(keep, rng.choice((_BELOW, _AT_LEAST)), (limit,), {"lanes": lanes}))
    source = spec.inputs[0]  # a block, as every kernel's first input
    loaded = Value(next(names), source.dtype, "block")
    in_load = rng.random() < 0.5
    params = {"x": source.name, "other": source.other, "keep": ""}
    if in_load:
        params["keep"] = " & " + (keep.name if spec.rank == 1 else _broadcast(keep))
    template = OpKind("shifted_load", _SHIFTED[spec.rank], (), "load")
    spec.body.append(Assign(loaded, template, (shift,), params))
    output = f"NW{len([s for s in spec.stores if s.output.startswith('NW')])}"
    spec.stores.append(Store(loaded, output, None if in_load else keep))


def _narrowed(spec: KernelSpec, rng: random.Random, name: str) -> Value:
    """A scalar of the prologue, scaled, shifted and cast (or compared into a bool)."""
    dtype = rng.choice(_DTYPES)
    params = {
        "source": rng.choice(_SOURCES),
        "scale": rng.choice(_SCALES),
        "bias": rng.choice(_BOOL_BIASES if dtype == "bool" else _BIASES),
        "dtype": dtype,
    }
    target = Value(name, "int1" if dtype == "bool" else dtype, "scalar")
    spec.body.append(Assign(target, _BOOL if dtype == "bool" else _NARROW, (), params))
    return target


def _broadcast(keep: Value) -> str:
    return keep.name + ("[None, :]" if keep.shape == "row" else "[:, None]")
