"""Grid dependence control (`tl.extra.cuda.gdc_wait`, `gdc_launch_dependents`) as programmatic
dependent launches use it: a kernel waits for the grid before, then lets the next one start.
Where kernels run one after another (the interpreter, the CPU, and any launch without PDL) both
do nothing and the values are the kernel's; on sm_90a they are `griddepcontrol` instructions
(tests/backends/nvidia/test_lowering_rest.py)."""

import numpy as np
import pytest
from memory_helpers import assert_exact, poisoned, random_array, rng

import naiad
import naiad.language as tl
from naiad.language.extra import cuda


@naiad.jit
def dependent_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, USE_GDC: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    if USE_GDC:
        cuda.gdc_wait()
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if USE_GDC:
        cuda.gdc_launch_dependents()
    tl.store(out_ptr + offsets, x + y, mask=mask)


@pytest.mark.parametrize("use_gdc", [True, False])
def test_two_dependent_launches_keep_their_values(use_gdc):
    """The second launch reads what the first wrote."""
    gen = rng(11)
    n = 1000
    x, y = (random_array((n,), np.float32, gen) for _ in "xy")
    first, second = poisoned((n,), np.float32), poisoned((n,), np.float32)
    grid = (naiad.cdiv(n, 256),)
    dependent_add[grid](x, y, first, n, BLOCK=256, USE_GDC=use_gdc, launch_pdl=use_gdc)
    dependent_add[grid](first, y, second, n, BLOCK=256, USE_GDC=use_gdc, launch_pdl=use_gdc)
    assert_exact(first, x + y)
    assert_exact(second, (x + y) + y)
