"""Chains of two wgmma dots in a pipelined loop, the second running on across the back edge
until the next iteration's first retires it (passes/asynchronous_dots.py): its accumulator
rescaled in the next iteration (attention's shape), or never read in the loop at all. Compared
with float64 products of the same fp16 operands, for 2 and 3 stages. The TTGIR on the CPU:
tests/backends/nvidia/test_pipeline_loads.py."""

import pytest
import torch
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

import naiad
import naiad.language as tl

pytestmark = pytest.mark.gpu

BLOCK, STEPS = 64, 5


@naiad.jit
def rescaled_chain(a_ptr, b_ptr, v_ptr, out_ptr, K, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None] * BLOCK
    cols = tl.arange(0, BLOCK)[None, :]
    a = tl.load(a_ptr + rows + cols)
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for k in range(0, K, BLOCK):
        s = tl.dot(a, tl.load(b_ptr + k * BLOCK + rows + cols))
        acc = acc * 0.5
        acc = tl.dot(s.to(tl.float16), tl.load(v_ptr + k * BLOCK + rows + cols), acc)
    tl.store(out_ptr + rows + cols, acc)


@naiad.jit
def last_product(a_ptr, b_ptr, v_ptr, out_ptr, K, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None] * BLOCK
    cols = tl.arange(0, BLOCK)[None, :]
    a = tl.load(a_ptr + rows + cols)
    last = tl.zeros((BLOCK, BLOCK), tl.float32)
    for k in range(0, K, BLOCK):
        s = tl.dot(a, tl.load(b_ptr + k * BLOCK + rows + cols))
        last = tl.dot(s.to(tl.float16), tl.load(v_ptr + k * BLOCK + rows + cols))
    tl.store(out_ptr + rows + cols, last)


def _reference(a, bs, vs, rescale: bool):
    acc = torch.zeros((BLOCK, BLOCK), dtype=torch.float64, device="cuda")
    for b, v in zip(bs, vs):
        s = (a.double() @ b.double()).half().double()
        acc = (acc * 0.5 if rescale else 0) + s @ v.double()
    return acc


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("kernel", [rescaled_chain, last_product], ids=["rescaled", "last"])
def test_the_second_dot_of_a_chain_runs_across_the_back_edge(kernel, stages):
    generator = torch.Generator(device="cuda").manual_seed(stages)

    def operand(rows):
        return (torch.rand((rows, BLOCK), device="cuda", generator=generator) - 0.5).half()

    a, b, v = operand(BLOCK), operand(STEPS * BLOCK), operand(STEPS * BLOCK)
    out = torch.full((BLOCK, BLOCK), float("nan"), device="cuda")
    k = STEPS * BLOCK
    kernel[(1,)](a, b, v, out, k, BLOCK=BLOCK, num_warps=4, num_stages=stages)
    expected = _reference(a, b.split(BLOCK), v.split(BLOCK), kernel is rescaled_chain)
    torch.testing.assert_close(out.double(), expected, rtol=2e-2, atol=2e-2)
