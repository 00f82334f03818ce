"""Matrix multiplication: `dot` (`dot_scaled`, which upcasts to it, is block_scaled.py's)."""

from __future__ import annotations

from .core import builtin


@builtin
def dot(
    input,
    other,
    acc=None,
    input_precision=None,
    allow_tf32=None,
    max_num_imprecise_acc=None,
    out_dtype=None,
    _semantic=None,
):
    """The matrix product of two 2-D blocks, or of batches of them (any number of leading
    dimensions, equal in both), plus `acc` when given.

    int8 operands accumulate in int32, fp16 in `out_dtype` (fp32 or fp16), bf16 and fp32 in fp32.
    `out_dtype` left out is `acc`'s dtype, or fp32 without `acc` (Triton 3.8's default: an fp16
    accumulator needs no `out_dtype=tl.float16` beside it).
    fp32 operands use `input_precision` ("tf32" by default on NVIDIA, "tf32x3", "ieee", ...).
    Batches of more than one dimension are folded into one (a row-major reshape, which moves no
    element) around a 3-D `tt.dot`, as Triton does: the IR's dot is 2-D or 3-D.
    """
    batch = _batch_shape(input, other)
    if len(batch) < 2:
        return _semantic.dot(
            input, other, acc, input_precision, allow_tf32, max_num_imprecise_acc, out_dtype
        )
    folded = 1
    for extent in batch:
        folded *= extent

    def fold(x):
        return None if x is None else _semantic.reshape(x, [folded, *x.shape[-2:]])

    product = _semantic.dot(
        fold(input),
        fold(other),
        fold(acc if acc is None else _semantic.to_tensor(acc)),
        input_precision,
        allow_tf32,
        max_num_imprecise_acc,
        out_dtype,
    )
    return _semantic.reshape(product, [*batch, *product.shape[-2:]])


def _batch_shape(input, other) -> list[int]:
    """The leading dimensions of two dot operands of one rank (the semantic layer reports
    every other mismatch)."""
    shapes = [list(getattr(x, "shape", ())) for x in (input, other)]
    if len(shapes[0]) != len(shapes[1]) or len(shapes[0]) < 4:
        return []
    if shapes[0][:-2] != shapes[1][:-2]:
        raise ValueError(f"batch dimensions of dot operands differ: {shapes[0]} and {shapes[1]}")
    return [int(getattr(d, "value", d)) for d in shapes[0][:-2]]
