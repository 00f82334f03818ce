"""Inductor launches the kernels Naiad compiles for CUDA through its own C++ launcher, as it
launches Triton's: `triton.compile` leaves the cubin where Triton's compile would
(triton/compiler/binary_files.py), and torch's check takes it with the argument types the
cubin's parameters have. Run without a GPU: nothing is loaded; the launches themselves are
the GPU tier's (tests/gpu/test_torch_gpu.py, bench/gpu/inductor_launch.py)."""

import pytest
from test_user_kernels import run_program

from naiad.backends.nvidia import link

pytest.importorskip("torch._inductor.runtime.static_triton_launcher")


@pytest.mark.skipif(link.linker_version() is None, reason="nvJitLink is not installed")
def test_inductor_statically_launches_a_naiad_cubin(tmp_path):
    seen = run_program("static_launcher.py", TRITON_CACHE_DIR=str(tmp_path))
    assert seen == {
        "pointwise static": "True",
        "pointwise arg types": "OOfi",  # two pointers, an fp32 and an i32, in order
        "pointwise cubin is the kernel's": "True",
        "pointwise entry": "triton_poi_fused_mul_add_0",
        "pointwise parameters": "4",
        "pointwise scratch": "False",
        "pointwise warps, shared": seen["pointwise warps, shared"],
        "descriptor static": "False",  # its cubin takes the descriptor's parts: not written
    }
    assert seen["pointwise warps, shared"].startswith("4, ")
