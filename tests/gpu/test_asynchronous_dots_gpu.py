"""Chains of two wgmma dots in a pipelined loop, the second running on across the back edge
until the next iteration's first retires it (passes/asynchronous_dots.py): its accumulator
rescaled in the next iteration (attention's shape), or never read in the loop at all; and
rotated, the second dot reading the first product the loop carries from the iteration before
(its A registers written only after the wait: wrong values and NaN before), and overlapped
(the first dot left running while the second is issued). Compared
with float64 products of the same fp16 operands, for 2 and 3 stages. The TTGIR on the CPU:
tests/backends/nvidia/test_pipeline_loads.py."""

import pytest
import torch
from fixture_kernels.chained_dots import chained_products, rotated_products
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

pytestmark = pytest.mark.gpu

BLOCK, STEPS = 64, 5


def _reference(a, bs, vs, rescale: bool):
    acc = torch.zeros((BLOCK, BLOCK), dtype=torch.float64, device="cuda")
    for b, v in zip(bs, vs):
        s = (a.double() @ b.double()).half().double()
        acc = (acc * 0.5 if rescale else 0) + s @ v.double()
    return acc


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("rescale", [True, False], ids=["rescaled", "last"])
def test_the_second_dot_of_a_chain_runs_across_the_back_edge(rescale, stages):
    generator = torch.Generator(device="cuda").manual_seed(stages)

    def operand(rows):
        return (torch.rand((rows, BLOCK), device="cuda", generator=generator) - 0.5).half()

    a, b, v = operand(BLOCK), operand(STEPS * BLOCK), operand(STEPS * BLOCK)
    out = torch.full((BLOCK, BLOCK), float("nan"), device="cuda")
    k = STEPS * BLOCK
    grid = (1,)
    chained_products[grid](a, b, v, out, k, BLOCK, rescale, num_warps=4, num_stages=stages)
    expected = _reference(a, b.split(BLOCK), v.split(BLOCK), rescale)
    torch.testing.assert_close(out.double(), expected, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("overlapped", [False, True], ids=["rotated", "overlapped"])
@pytest.mark.parametrize("stages", [2, 3])
def test_the_rotated_chain_keeps_its_operand_until_the_wait(overlapped, stages):
    """Rotated, and overlapped (the first dot of each step asynchronous too, its result read
    after the second is issued)."""
    generator = torch.Generator(device="cuda").manual_seed(10 + stages)

    def operand(rows):
        return (torch.rand((rows, BLOCK), device="cuda", generator=generator) - 0.5).half()

    a, b, v = operand(BLOCK), operand(STEPS * BLOCK), operand(STEPS * BLOCK)
    out = torch.full((BLOCK, BLOCK), float("nan"), device="cuda")
    rotated_products[(1,)](a, b, v, out, STEPS * BLOCK, BLOCK, overlapped, num_warps=4,
                           num_stages=stages)  # fmt: skip
    expected = _reference(a, b.split(BLOCK), v.split(BLOCK), True)
    torch.testing.assert_close(out.double(), expected, rtol=2e-2, atol=2e-2)
