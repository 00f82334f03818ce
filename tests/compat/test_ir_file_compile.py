"""`triton.compile` of a `.ttir` file (runtime/ir_files.py): the file's kernel goes through the
TTIR pipeline and the target's stages, and comes out as the same code a launch of the kernel it
was printed from compiles (whose values are checked against NumPy here), for the CPU and for an
NVIDIA target without a GPU; compiled for the CPU, it launches here with its function's
parameters (runtime/ir_file_launch.py; the GPU's launch: tests/gpu/test_ir_file_launch_gpu.py)."""

import re

import numpy as np
import pytest
from fixture_kernels.ir_files import SIGNATURE, scale_add
from fixture_kernels.warp_partitions import REGION_WARPS, SCALARS, reductions

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.errors import CompilationError
from naiad.triton.backends.compiler import GPUTarget
from naiad.triton.compiler import ASTSource, compile

# A TTGIR kernel of TTIR's ops in two layouts, a converted tensor and a laid-out constant:
# out[i] = x[i] * 3 over 128 elements.
TIMES_THREE = """
#a = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @times_three(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %three = arith.constant dense<3.0> : tensor<128xf32, #a>
    %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #a>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #a>
    %ptrs = tt.addptr %xs, %offs : tensor<128x!tt.ptr<f32>, #a>, tensor<128xi32, #a>
    %vals = tt.load %ptrs : tensor<128x!tt.ptr<f32>, #a>
    %prod = arith.mulf %vals, %three : tensor<128xf32, #a>
    %moved = ttg.convert_layout %prod : tensor<128xf32, #a> -> tensor<128xf32, #b>
    %offs_b = ttg.convert_layout %offs : tensor<128xi32, #a> -> tensor<128xi32, #b>
    %os = tt.splat %out : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #b>
    %dst = tt.addptr %os, %offs_b : tensor<128x!tt.ptr<f32>, #b>, tensor<128xi32, #b>
    tt.store %dst, %moved : tensor<128x!tt.ptr<f32>, #b>
    tt.return
  }
}
"""

# Shared memory: TTGIR's alone, which the CPU refuses.
SHARED_MEMORY = """
#a = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @staged(%x: !tt.ptr<f32>) {
    %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #a>
    %buf = ttg.local_alloc : () -> !ttg.memdesc<128xf32, #s, #smem, mutable>
    tt.return
  }
}
"""


def _renamed(code: str) -> str:
    """`code` with its local values numbered in order of appearance: LLVM's optimizer may name
    the values it makes in another order in a second compile of the same IR in one process
    (`%sext` and `%sext2` swapped), which is the same code."""
    names: dict[str, str] = {}
    return re.sub(r"%[\w.$-]+", lambda m: names.setdefault(m.group(), f"%v{len(names)}"), code)


@pytest.mark.parametrize(
    "target, stage",
    [(GPUTarget("cpu", "x86_64", 1), "llir"), (GPUTarget("cuda", 90, 32), "ptx")],
)
def test_a_ttir_file_compiles_to_the_code_of_its_kernel(target, stage, tmp_path):
    source = ASTSource(scale_add, SIGNATURE, constexprs={"BLOCK": 128})
    from_ast = compile(source, target=target)
    path = tmp_path / "scale_add.ttir"
    path.write_text(from_ast.asm["ttir"])
    from_file = compile(str(path), target=target, options={"num_warps": 4})
    assert from_file.name == from_ast.name and from_file.metadata.name == from_ast.name
    assert from_file.asm["source"] == from_ast.asm["ttir"]
    assert _renamed(from_file.asm[stage]) == _renamed(from_ast.asm[stage])
    assert from_file.binary is not None or stage == "ptx"

    rng = np.random.default_rng(16)
    x, y = (rng.standard_normal(300).astype(np.float32) for _ in range(2))
    out = np.empty_like(x)
    with knobs.override(NAIAD_BACKEND="cpu"):
        scale_add[(3,)](x, y, out, 300, 0.75, BLOCK=128)
    expected = 0.75 * x.astype(np.float64) + y.astype(np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    assert from_file.metadata.parameters == ["*fp32", "*fp32", "*fp32", "i32", "fp32"]
    if target.backend == "cpu":
        again = np.full_like(x, np.nan)
        from_file[(3,)](x, y, again, 300, 0.75)
        np.testing.assert_array_equal(again, out)


def test_a_file_kernel_launches_on_the_cpu_with_its_parameters(tmp_path):
    """Launched as Triton launches a file's kernel: `compiled[grid](*args)` in the function's
    parameter order, and a launcher's `compiled.run(...)`; the CPU launches' checks hold."""
    cpu = GPUTarget("cpu", "x86_64", 1)
    path = tmp_path / "scale_add.ttir"
    path.write_text(
        compile(ASTSource(scale_add, SIGNATURE, constexprs={"BLOCK": 64}), cpu).asm["ttir"]
    )
    kernel = compile(str(path), target=cpu)
    rng = np.random.default_rng(17)
    x, y = (rng.standard_normal(200).astype(np.float32) for _ in range(2))
    expected = -1.5 * x.astype(np.float64) + y.astype(np.float64)
    out = np.full_like(x, np.nan)
    kernel[4](x, y, out, 200, -1.5)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    out[:] = np.nan
    kernel.run(4, 1, 1, None, kernel.function, kernel.packed_metadata, None, None, None,
               x, y, out, 200, -1.5)  # fmt: skip
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(
        TypeError, match=r"takes 5 arguments \(\*fp32, \*fp32, \*fp32, i32, fp32\), got 4"
    ):
        kernel[4](x, y, out, 200)
    frozen = out.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only, and `scale_add` stores through it"):
        kernel[4](x, y, frozen, 200, -1.5)


@naiad.jit
def square_product(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    offsets = rows[:, None] * BLOCK + rows[None, :]
    c = tl.dot(tl.load(a_ptr + offsets), tl.load(b_ptr + offsets))
    tl.store(c_ptr + offsets, c)


@pytest.mark.parametrize(
    "kernel, signature, constexprs",
    [
        (scale_add, SIGNATURE, {"BLOCK": 128}),
        (square_product, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}, {"BLOCK": 64}),
    ],
)
def test_a_ttgir_file_goes_on_from_its_layouts(kernel, signature, constexprs, tmp_path):
    """A `.ttgir` file (here the TTGIR a compile printed, wgmma's layouts in the product's)
    skips the TTIR and TTGIR passes: the same PTX, shared memory and warps as the compile it
    came from, its module's `ttg.num-warps` (8) over the options' (4)."""
    hopper = GPUTarget("cuda", 90, 32)
    from_ast = compile(
        ASTSource(kernel, signature, constexprs=constexprs), hopper, {"num_warps": 8}
    )
    path = tmp_path / "kernel.ttgir"
    path.write_text(from_ast.asm["ttgir"])
    from_file = compile(str(path), target=hopper, options={"num_warps": 4})
    assert from_file.asm["ttgir"] == from_ast.asm["ttgir"] and "ttir" not in from_file.asm
    assert from_file.asm["ptx"] == from_ast.asm["ptx"]
    assert from_file.metadata.num_warps == 8
    assert from_file.metadata.shared == from_ast.metadata.shared
    assert from_file.metadata.parameters == list(signature.values())


def test_what_a_file_compile_refuses(tmp_path):
    cpu = GPUTarget("cpu", "x86_64", 1)
    with pytest.raises(NotImplementedError, match=r"`\.llir` file"):
        compile(str(tmp_path / "kernel.llir"), target=cpu)
    shared = tmp_path / "shared.ttgir"
    shared.write_text(SHARED_MEMORY)
    with pytest.raises(CompilationError, match=r"`ttg\.local_alloc` holds what only a GPU has"):
        compile(str(shared), target=cpu)
    two = tmp_path / "two.ttir"
    body = "tt.func public @{}() {{\n  tt.return\n}}\n"
    two.write_text(body.format("a") + body.format("b"))
    with pytest.raises(ValueError, match=r"one public tt\.func; found 2"):
        compile(two, target=cpu)
    with pytest.raises(TypeError, match="an ASTSource or a path"):
        compile(scale_add, target=cpu)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_ttir_files_partitions_run_one_after_another_on_the_cpu(seed, tmp_path):
    """A hand-written `ttg.warp_specialize` (fixture_kernels/warp_partitions.py) compiles for
    the CPU with its regions in sequence (backends/cpu/sequence_partitions.py) and stores
    each region's value."""
    path = tmp_path / "scalars.ttir"
    path.write_text(SCALARS)
    kernel = compile(str(path), target=GPUTarget("cpu", "x86_64", 1))
    assert "ttg.warp_specialize" not in kernel.asm["ttgir"]
    base = int(np.random.default_rng(seed).integers(-30000, 30000))
    out = np.full(3, -1, np.int32)
    kernel[(1, 1, 1)](out, base)
    assert out.tolist() == [base + 7, base * base, base]


@pytest.mark.parametrize("seed", [0, 1])
def test_a_ttgir_file_runs_on_the_cpu_without_its_layouts(seed, tmp_path):
    """A `.ttgir` file compiled for the CPU drops its layouts (passes/drop_layouts.py): the
    converted tensor and the laid-out constant keep their values, and a `ttg.warp_specialize`
    of four regions in three layouts (Triton's warpgroup-reduction test's shape) runs its
    regions in sequence."""
    cpu = GPUTarget("cpu", "x86_64", 1)
    rng = np.random.default_rng(seed)
    path = tmp_path / "times_three.ttgir"
    path.write_text(TIMES_THREE)
    kernel = compile(str(path), target=cpu)
    assert "#ttg" not in kernel.asm["ttir"] and "convert_layout" not in kernel.asm["ttir"]
    x = rng.standard_normal(128).astype(np.float32)
    out = np.full_like(x, np.nan)
    kernel[(1, 1, 1)](x, out)
    np.testing.assert_array_equal(out, (x.astype(np.float64) * 3).astype(np.float32))

    path = tmp_path / "reductions.ttgir"
    path.write_text(reductions())
    kernel = compile(str(path), target=cpu)
    x = rng.integers(-(2**20), 2**20, 256 * len(REGION_WARPS)).astype(np.int32)
    out = np.full(len(REGION_WARPS), -1, np.int32)
    kernel[(1, 1, 1)](x, out)
    parts = x.astype(np.int64).reshape(len(REGION_WARPS), 256)
    expected = [part.max() if r % 2 else part.sum() for r, part in enumerate(parts)]
    assert out.tolist() == expected
