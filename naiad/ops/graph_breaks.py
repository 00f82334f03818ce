"""naiad.ops' entry points under `torch.compile`: each runs as it is, between compiled graphs.

A direct call (`naiad.ops.softmax(x, -1)` inside a compiled function) launches kernels: it
reads its tensors' data pointers, strides and devices and calls the back end's launcher, which
dynamo cannot trace (given fake tensors the launch failed inside the kernel: "rshift_cpu not
implemented for 'UInt64'"). Marking the entry points with `torch.compiler.disable` makes dynamo
stop its graph at the call, run the op eagerly on real tensors, autograd included, and go on
compiling after it. A program that wants Naiad's kernels inside its compiled graphs turns the
switch on instead (`naiad.ops.enable()`): the graph's ATen ops reach Naiad's implementations
with nothing to trace (docs/ops_library.md).
"""

from __future__ import annotations

import types

import torch

__all__ = ["run_eagerly_under_compile"]


def run_eagerly_under_compile(namespace: dict, names) -> None:
    """Replace each plain function `namespace[name]` by itself marked to run eagerly under
    torch.compile (the original stays reachable as `__wrapped__`)."""
    for name in names:
        entry = namespace[name]
        if isinstance(entry, types.FunctionType):
            namespace[name] = torch.compiler.disable(entry)
