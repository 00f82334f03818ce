"""Triton's `arch=` option and `num_ctas` on the NVIDIA back end, compiled without a GPU:
`warmup(arch='sm80')` compiles for that capability (`sm90` for `sm_90a`, as a Hopper device
gets), architectures Naiad does not compile for are refused by name; `num_ctas > 1` is refused
below sm_90 (no thread-block clusters there, Triton's message) and on sm_90 runs each program on
one CTA, the same code as `num_ctas=1`. Values on the GPU: tests/gpu/test_num_ctas_gpu.py."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.errors import InvalidLaunchOption


@naiad.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 1.5 + 1.0, mask=mask)


def _warmup(**options):
    return scale_kernel.warmup("*fp32", "*fp32", 1000, BLOCK=128, grid=(8,), **options)


@pytest.mark.parametrize(
    "arch, target, ttgir",
    [("sm80", "cuda:sm_80", "cuda:80"), ("sm_86", "cuda:sm_86", "cuda:86"),
     ("sm90", "cuda:sm_90a", "cuda:90"), (90, "cuda:sm_90a", "cuda:90")],
)  # fmt: skip
def test_arch_names_the_target(arch, target, ttgir):
    compiled = _warmup(arch=arch)
    assert compiled.metadata.target == target
    assert f'ttg.target = "{ttgir}"' in compiled.asm["ttgir"]


def test_architectures_naiad_does_not_compile_for_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown CUDA target 'cuda:sm_70'"):
        _warmup(arch="sm70")
    with pytest.raises(InvalidLaunchOption, match="arch='gfx942'"):
        _warmup(arch="gfx942")


def test_num_ctas_above_one_needs_hopper():
    with pytest.raises(ValueError, match=r"num_ctas > 1 requires NVIDIA SM90\+ \(Hopper\)"):
        _warmup(arch="sm80", num_ctas=2)
    with pytest.raises(InvalidLaunchOption, match="num_ctas must be a power of 2"):
        _warmup(target="cuda:sm_90a", num_ctas=3)


@pytest.mark.parametrize("num_ctas", [2, 4])
def test_num_ctas_on_hopper_runs_a_program_on_one_cta(num_ctas):
    one = _warmup(target="cuda:sm_90a")
    many = _warmup(target="cuda:sm_90a", num_ctas=num_ctas)
    assert '"ttg.num-ctas" = 1' in many.asm["ttgir"] and many.metadata.num_ctas == 1
    assert many.asm["ptx"] == one.asm["ptx"]


def test_num_ctas_leaves_the_cpus_values_alone(cpu_fresh_cache):
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    y = np.zeros_like(x)
    scale_kernel[(8,)](x, y, 1000, BLOCK=128, num_ctas=2)
    assert np.array_equal(y, x * np.float32(1.5) + np.float32(1.0))
