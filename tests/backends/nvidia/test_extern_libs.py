"""Triton's `extern_libs` launch option: the bitcode libraries a CUDA kernel links. A
libdevice named there replaces the one Naiad finds; any other library is linked for the
functions the kernel calls; a missing file is a clear error; the CPU back end, which has its
own libdevice functions, runs such a launch as it runs any other."""

import shutil

import llvmlite.binding as llvm
import numpy as np
import pytest
from ir_kernels import _unary
from test_toolchain import needs_libdevice

import naiad
import naiad.language as tl
from naiad.backends.nvidia import extern_libs, libdevice, ptx
from naiad.backends.nvidia import target as nv_target
from naiad.errors import InvalidLaunchOption
from naiad.language.extra import libdevice as tl_libdevice
from naiad.runtime.launch_options import LaunchOptions

SM90 = nv_target.cuda_target("sm_90a")


@naiad.jit
def asin_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl_libdevice.asin(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def test_the_option_is_kept_as_sorted_pairs_and_checked():
    options = LaunchOptions(extern_libs={"mylib": "/b.bc", "libdevice": "/a.bc"})
    assert options.extern_libs == (("libdevice", "/a.bc"), ("mylib", "/b.bc"))
    assert hash(options) == hash(
        LaunchOptions(extern_libs=[("mylib", "/b.bc"), ("libdevice", "/a.bc")])
    )
    assert LaunchOptions(extern_libs=None).extern_libs == ()
    with pytest.raises(InvalidLaunchOption, match="extern_libs must map library names"):
        LaunchOptions(extern_libs={"libdevice": 3})


@needs_libdevice
def test_a_named_libdevice_replaces_the_one_found(tmp_path):
    copy = tmp_path / "libdevice.10.bc"
    shutil.copy(libdevice.path(), copy)
    args = ("*fp32", "*fp32", "i32")
    plain = asin_kernel.warmup(*args, grid=(1,), BLOCK=128, target="cuda:sm_90a")
    named = asin_kernel.warmup(
        *args, grid=(1,), BLOCK=128, target="cuda:sm_90a", extern_libs={"libdevice": str(copy)}
    )
    assert named.asm["ptx"] == plain.asm["ptx"]
    assert "__nv_asinf" not in named.asm["ptx"]  # linked and inlined, not an external call


def test_a_missing_library_names_its_path(tmp_path):
    missing = tmp_path / "nowhere.bc"
    with pytest.raises(extern_libs.ExternLibNotFound, match=f"'libdevice' at {missing}"):
        asin_kernel.warmup(
            "*fp32", "*fp32", "i32", grid=(1,), BLOCK=128, target="cuda:sm_90a",
            extern_libs={"libdevice": str(missing)},
        )  # fmt: skip


def _library(tmp_path):
    """A bitcode library of one function, my_twice(x) = x + x."""
    module = llvm.parse_assembly(
        f'target triple = "{nv_target.TRIPLE}"\n'
        f'target datalayout = "{nv_target.DATA_LAYOUT}"\n'
        "define float @my_twice(float %x) {\n  %r = fadd float %x, %x\n  ret float %r\n}\n"
        "define float @my_unused(float %x) {\n  ret float %x\n}\n"
    )
    path = tmp_path / "mylib.bc"
    path.write_bytes(module.as_bitcode())
    return path


def test_another_library_is_linked_for_what_the_kernel_calls(tmp_path):
    path = _library(tmp_path)
    code = ptx.compile_ptx(
        _unary("twice_kernel", "my_twice"), SM90, extern_libs=(("mylib", str(path)),)
    )
    assert "my_twice" not in code.text and "my_unused" not in code.llir  # inlined, dropped
    assert "add.f32" in code.text or "add.rn.f32" in code.text
    unlinked = ptx.compile_ptx(_unary("twice_kernel", "my_twice"), SM90)
    assert ".extern .func" in unlinked.text and "my_twice" in unlinked.text


def test_the_cpu_runs_a_launch_naming_libraries(tmp_path):
    """The CPU back end computes libdevice's functions itself: the option changes nothing."""
    x = np.random.default_rng(7).uniform(-1, 1, 300).astype(np.float32)
    out = np.full_like(x, 7.0)
    asin_kernel[(3,)](x, out, x.size, BLOCK=128, extern_libs={"libdevice": str(tmp_path / "x")})
    np.testing.assert_allclose(out, np.arcsin(x.astype(np.float64)), rtol=2e-6, atol=1e-7)
