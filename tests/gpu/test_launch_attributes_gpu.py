"""Launch attributes on the GPU (backends/nvidia/launch_attributes.py): a kernel launched with
`launch_pdl=True` may start before the one ahead of it on the stream has finished, and waits
for its results at `gdc_wait()`; programs of a `launch_cooperative_grid=True` launch are all
resident at once, so they can wait on each other; a cooperative grid larger than the GPU holds
is refused with the driver's reason.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import pytest
import torch

import naiad
import naiad.language as tl
from naiad.backends.nvidia.driver import CudaError
from naiad.language.extra import cuda as tl_cuda

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    monkeypatch.setenv("NAIAD_BACKEND", "auto")


@naiad.jit
def scale(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    """out = x * factor; lets the next launch start as soon as it has begun."""
    tl_cuda.gdc_launch_dependents()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


@naiad.jit
def shift_after(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = in + 1, reading `in` only after the launch before has finished (`gdc_wait`)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl_cuda.gdc_wait()
    tl.store(out_ptr + offs, tl.load(in_ptr + offs, mask=mask) + 1.0, mask=mask)


def test_a_dependent_launch_reads_what_the_launch_before_wrote():
    """Twenty producer/consumer pairs on one stream, each on new values: the consumer, launched
    with `launch_pdl=True`, always sees its producer's output."""
    n, block = 1 << 20, 1024
    grid = (_cdiv(n, block),)
    middle = torch.empty(n, device="cuda")
    for round_ in range(20):
        x = torch.randn(n, device="cuda", generator=torch.Generator("cuda").manual_seed(round_))
        out = torch.empty_like(x)
        scale[grid](x, middle, n, 3.0, BLOCK=block)
        kernel = shift_after[grid](middle, out, n, BLOCK=block, launch_pdl=True)
        torch.testing.assert_close(out, x * 3.0 + 1.0, rtol=0, atol=0)
    assert "griddepcontrol.wait" in kernel.asm["ptx"]


@naiad.jit
def rotate_after_barrier(values_ptr, out_ptr, counter_ptr):
    """Each program writes its value, waits until every program has (a barrier across the
    grid, which only a cooperative launch may rely on), then reads its neighbour's."""
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    tl.store(values_ptr + pid, pid * 10 + 7)
    tl.atomic_add(counter_ptr, 1, sem="release")
    while tl.atomic_add(counter_ptr, 0, sem="acquire") < programs:
        pass
    tl.store(out_ptr + pid, tl.load(values_ptr + (pid + 1) % programs))


def test_a_cooperative_grid_waits_for_all_its_programs():
    programs = torch.cuda.get_device_properties(0).multi_processor_count
    values = torch.zeros(programs, dtype=torch.int32, device="cuda")
    out = torch.full_like(values, -1)
    counter = torch.zeros(1, dtype=torch.int32, device="cuda")
    rotate_after_barrier[(programs,)](values, out, counter, launch_cooperative_grid=True)
    expected = (torch.arange(programs, device="cuda").roll(-1) * 10 + 7).to(torch.int32)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    assert counter.item() == programs


def test_a_cooperative_grid_too_large_to_be_resident_is_refused():
    values = torch.zeros(1 << 20, dtype=torch.int32, device="cuda")
    counter = torch.zeros(1, dtype=torch.int32, device="cuda")
    with pytest.raises(CudaError, match="COOPERATIVE_LAUNCH_TOO_LARGE"):
        rotate_after_barrier[(1 << 20,)](
            values, values, counter, num_warps=32, launch_cooperative_grid=True
        )


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)
