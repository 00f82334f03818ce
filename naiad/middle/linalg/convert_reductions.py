"""Reductions, scans and dots.

`tt.reduce` along `axis` with any combine region → `linalg.reduce`, folding left to right: the
first slice along the axis is the initial value and the other slices are reduced into it, so
no identity element is needed and any combine region (argmax's tie-breaking pair, Welford's
triple, ...) lowers. The combine region is called as combine(accumulated, next), the order the
language's reductions assume. A reduction of a 1-D block to a scalar reduces into a rank-0
tensor and extracts its element.

`tt.scan` → an `scf.for` along the axis carrying the running value (a slice), applying the
combine region to each slice by a `linalg.generic` and inserting the result.

`tt.dot` → `linalg.matmul` (3-D: `linalg.batch_matmul`) accumulating into the dot's `c`:
the inputs are widened to the accumulator's type as upstream's matmul semantics say. On the CPU
every input precision (tf32, tf32x3, bf16x3) computes in IEEE fp32, at least as precise as
the GPU.

`tt.histogram` → an `scf.for` nest over the input carrying the counts, each element counted
under `scf.if` (in a bin, and its mask on).
"""

from __future__ import annotations

from ...dialects import tt
from . import emit_tensor
from .conversion import FunctionConversion, converts


@converts(tt.ReduceOp)
def _reduce(c: FunctionConversion, op) -> None:
    sources = [c.value(v) for v in op.srcs]
    results = emit_tensor.reduce(
        c, sources, op.axis.value, op.combineOp, [r.type for r in op.results]
    )
    for old, new in zip(op.results, results):
        c.bind(old, new)


@converts(tt.ScanOp)
def _scan(c: FunctionConversion, op) -> None:
    sources = [c.value(v) for v in op.srcs]
    results = emit_tensor.scan(c, sources, op.axis.value, bool(op.reverse.value), op.combineOp)
    for old, new in zip(op.results, results):
        c.bind(old, new)


@converts(tt.DotOp)
def _dot(c: FunctionConversion, op) -> None:
    c.bind(op.d, emit_tensor.matmul(c, c.value(op.a), c.value(op.b), c.value(op.c)))


@converts(tt.HistogramOp)
def _histogram(c: FunctionConversion, op) -> None:
    mask = None if op.mask is None else c.value(op.mask)
    c.bind(op.result, emit_tensor.histogram(c, c.value(op.src), mask, op.result.type))
