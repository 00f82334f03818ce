"""What the op tests share: inputs of every dtype and the comparison with a float64 reference.

A result is compared with torch's op run on the inputs upcast to float64 (integers and bools as
they are), then rounded once to the result's dtype: the error allowed is a few units of the
result dtype's precision, as a kernel that computes in fp32 and rounds once should reach.
"""

from pathlib import Path

import torch
from module_files import module_from_file

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
INTS = (torch.int32, torch.int64, torch.int8, torch.uint8)

# dtype -> (rtol, atol) against the float64 reference rounded to the dtype
TOLERANCE = {
    torch.float64: (1e-12, 1e-12),
    torch.float32: (4e-6, 1e-6),
    torch.float16: (2e-3, 2e-5),
    torch.bfloat16: (1.6e-2, 1e-4),
}


def make(shape, dtype, gen, low=-3.0, high=3.0, nonzero=False):
    """Random values of `dtype`: uniform floats in [low, high), integers in a small range."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype.is_floating_point:
        x = torch.rand(shape, generator=gen, dtype=torch.float64) * (high - low) + low
        if nonzero:
            x = torch.where(x.abs() < 0.1, torch.full_like(x, 0.5), x)
        return x.to(dtype)
    lo = 0 if dtype == torch.uint8 else -20
    x = torch.randint(lo, 20, shape, generator=gen).to(dtype)
    if nonzero:
        x = torch.where(x == 0, torch.ones_like(x), x)
    return x


def upcast(value):
    if isinstance(value, torch.Tensor) and value.dtype.is_floating_point:
        return value.to(torch.float64)
    return value


def reference(fn, *args, dtype=None, **kwargs):
    """`fn` on the arguments upcast to float64, rounded to `dtype` (torch's own result dtype by
    default: fn on the original arguments' meta copies)."""
    if dtype is None:
        meta_kwargs = {k: _meta(v) for k, v in kwargs.items()}
        dtype = fn(*map(_meta, args), **meta_kwargs).dtype
    return fn(*map(upcast, args), **{k: upcast(v) for k, v in kwargs.items()}).to(dtype)


def _meta(value):
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
    return value


def assert_matches(actual, expected, scale=1.0, normwise=False):
    """Same dtype, shape and values (floats within the tolerance, times `scale`; NaN where
    NaN; integers and bools exactly). `normwise`: the largest error measured against the
    largest value instead of each value, for results that subtract rounded terms (gradients of
    normalizations in fp16 and bf16 come from outputs rounded to those)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if not expected.dtype.is_floating_point:
        assert torch.equal(actual, expected), (actual, expected)
        return
    rtol, atol = TOLERANCE[expected.dtype]
    if normwise:
        error = (actual.double() - expected.double()).abs().max().item() if actual.numel() else 0
        bound = rtol * scale * (expected.double().abs().max().item() if expected.numel() else 0)
        assert error <= bound + atol * scale, f"norm-wise error {error:.3g} > {bound:.3g}"
        return
    torch.testing.assert_close(
        actual.double(), expected.double(), rtol=rtol * scale, atol=atol * scale, equal_nan=True
    )


def tiny_llama_model():
    """The Llama-style model class that examples/pytorch/llama_ops.py runs under naiad.ops."""
    path = Path(__file__).resolve().parents[2] / "examples" / "pytorch" / "tiny_llama.py"
    return module_from_file("tiny_llama", path).TinyLlama


def long_rows_with_extremes(gen, n: int = 2500):
    """Eight fp32 rows of n (past one block of a row kernel on either device) that exercise an
    online softmax's rescaling: a row rising past exp's range block by block, leading -inf
    blocks, a row all -inf, a NaN and a +inf in a later block, a falling row whose later
    blocks underflow, plain values, and a row wholly below exp's range."""
    x = make((8, n), torch.float32, gen, -3, 3)
    x[0] += torch.linspace(0, 400, n)  # exp of the first block's max overflows at the last's
    x[1, : n * 3 // 5] = float("-inf")
    x[2] = float("-inf")
    x[3, n * 4 // 5] = float("nan")
    x[4, n * 5 // 6] = float("inf")
    x[5] -= torch.linspace(0, 400, n)
    x[7] -= 200
    return x


def check_tiles_spanning_rows(ops, gen, device: str = "cpu") -> None:
    """index_select, gather, flip, triu/tril and one_hot against torch where their kernels'
    tiles span several rows or matrices (naiad/ops/indexing/row_blocks.py): sizes that are no
    power of 2 and leave part tiles along each dim, rows of one element (gather along the last
    dim, a flip of it), and rows longer than a tile; on `device`."""
    for shape in [(3, 700, 1), (37, 3, 5), (2, 3, 1500), (300, 7)]:
        x = make(shape, torch.float32, gen).to(device)
        for dim in range(len(shape)):
            index = torch.randint(-shape[dim], shape[dim], (5,), generator=gen).to(device)
            expected = torch.index_select(x, dim, index % shape[dim])
            assert_matches(ops.index_select(x, dim, index), expected)
            assert_matches(ops.flip(x, [dim]), torch.flip(x, [dim]))
            taken = list(shape)
            taken[dim] = 3
            at = torch.randint(0, shape[dim], taken, generator=gen).to(device)
            assert_matches(ops.gather(x, dim, at), torch.gather(x, dim, at))
        for diagonal in (-2, 1):
            assert_matches(ops.triu(x, diagonal), torch.triu(x, diagonal))
            assert_matches(ops.tril(x, diagonal), torch.tril(x, diagonal))
    labels = torch.randint(0, 10, (3, 333), generator=gen).to(device)
    assert_matches(ops.one_hot(labels), torch.nn.functional.one_hot(labels))
    wide = torch.randint(0, 1500, (7,), generator=gen).to(device)
    assert_matches(ops.one_hot(wide, 1500), torch.nn.functional.one_hot(wide, 1500))
