"""A program that uses Triton through torch, unmodified: torch's Inductor imports Triton's
runtime modules whenever `triton` is importable, and `torch.library.triton_op`/`wrap_triton`
launch a Triton kernel inside a torch op, also under `torch.compile`. Run by
tests/compat/test_programs.py under `python -m naiad.run`."""

import torch
import triton
import triton.language as tl
from torch._inductor.runtime import triton_compat
from torch.library import triton_op, wrap_triton


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton_op("compat_test::add", mutates_args={})
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    wrap_triton(add_kernel)[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)
    return out


def twice_the_sum(x, y):
    return add(x, y) * 2


if __name__ == "__main__":
    x, y = torch.rand(100), torch.rand(100)
    print("inductor sees triton:", triton_compat.HAS_TRITON)
    print("eager:", torch.equal(add(x, y), x + y))
    compiled = torch.compile(twice_the_sum, backend="aot_eager", fullgraph=True)
    print("compiled:", torch.equal(compiled(x, y), (x + y) * 2))
