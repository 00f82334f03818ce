"""A Triton program as its users write it, unmodified: run by tests/compat/test_programs.py under
`python -m naiad.run` (on the CPU), which checks its output."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


@triton.jit
def exp_kernel(x_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, libdevice.exp(x), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor):
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, output, n_elements)
    return output


if __name__ == "__main__":
    torch.manual_seed(0)
    size = 98432
    x = torch.rand(size)
    y = torch.rand(size)
    output = add(x, y)
    triton.testing.assert_close(output, x + y)
    e = torch.empty_like(x)
    exp_kernel[(triton.cdiv(size, 1024),)](x, e, size, BLOCK_SIZE=1024)
    triton.testing.assert_close(e, torch.exp(x), rtol=1e-5, atol=1e-6)
    ms = triton.testing.do_bench(lambda: add(x, y), warmup=1, rep=5)
    assert ms > 0
    print("best config:", add_kernel.best_config)
    print("triton from:", triton.__file__)
    print("max error:", (output - (x + y)).abs().max().item())
