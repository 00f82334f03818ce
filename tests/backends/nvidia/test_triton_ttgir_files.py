"""TTGIR that Triton 3.6 prints, compiled from the file for sm_90a without a GPU
(runtime/ir_files.py, fixture_kernels/triton_ttgir.py): every printed file and the hand-written
ones compile to PTX that ptxas accepts, whose kernel takes the file's parameters (Triton's
launch adds two scratch pointers after them, which Naiad's kernels take only when they use
scratch); the ones without shared memory run on the CPU (which drops the layouts) against NumPy.
A GPU launch of them: .device/h35_ttgir_gpu.sh."""

import re

import numpy as np
import pytest
from fixture_kernels.triton_ttgir import (
    PRINTED,
    ROUNDED_DIVISIONS,
    TOKENS,
    TRITON36,
    rounded_reference,
)
from test_lowering import assemble
from test_toolchain import needs_ptxas

from naiad.backends.registry import CompileOptions
from naiad.dialects import ttng
from naiad.errors import KernelNotImplementedError
from naiad.ir import VerificationError, verify
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module
from naiad.runtime.ir_files import compile_ir_file, compile_ir_text
from naiad.runtime.tensor_descriptor import TensorDescriptor

OPTIONS = CompileOptions(num_warps=4, num_stages=3)

# A wait of Triton's shape: the accumulator and the buffers its dot reads pass through.
WAIT = """\
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module {
  tt.func @f(%arg0: tensor<64x64xf32, #mma>) {
    %0 = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %1:2 = ttng.warp_group_dot_wait %arg0, %0 {pendings = 1 : i32} : tensor<64x64xf32, #mma>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}
"""  # noqa: E501


def _entry_parameters(ptx: str) -> list[str]:
    """The PTX types of the `.entry`'s parameters, in order."""
    entry = ptx[ptx.index(".entry") :]
    return re.findall(r"\.param \.(\w+)", entry[: entry.index(")")])


def _ptx_type(kind: str) -> str:
    return "u64" if kind.startswith("*") else {"i32": "u32", "fp32": "f32"}[kind]


def test_a_wait_passes_each_input_to_its_output():
    module = parse_module(WAIT)
    verify(module)
    assert print_module(module, locations=False) == WAIT
    (wait,) = (op for op in module.walk() if isinstance(op, ttng.WarpGroupDotWaitOp))
    assert [v.type for v in wait.outputs] == [v.type for v in wait.inputs]
    generic = print_module(module, generic=True, locations=False)
    wrong = generic.replace("-> (tensor<64x64xf32, #mma>,", "-> (tensor<64x64xf16, #mma>,")
    assert wrong != generic
    with pytest.raises(VerificationError, match="output #0 has the type of input #0"):
        verify(parse_module(wrong))


@needs_ptxas
@pytest.mark.parametrize("name", sorted(PRINTED))
def test_tritons_printed_ttgir_compiles_for_sm90a(name, tmp_path):
    warps, parameters = PRINTED[name]
    kernel = compile_ir_file(TRITON36 / f"{name}.ttgir", "cuda:sm_90a", OPTIONS)
    assert kernel.metadata.num_warps == warps
    assert kernel.metadata.parameters == parameters
    ptx = kernel.asm["ptx"]
    assert _entry_parameters(ptx) == [_ptx_type(kind) for kind in parameters]
    report = assemble(ptx, "sm_90a", tmp_path)
    assert "0 bytes spill stores" in report


@needs_ptxas
def test_the_persistent_matmul_keeps_its_wgmma_pipeline(tmp_path):
    """Tutorial 09's loop: one asynchronous wgmma chain a k-step, waited down to one in
    flight (the wait of three values: the accumulator and both buffers), 3 copy stages."""
    kernel = compile_ir_file(TRITON36 / "persistent_matmul.ttgir", "cuda:sm_90a", OPTIONS)
    ptx = kernel.asm["ptx"]
    assert "wgmma.wait_group.sync.aligned 1;" in ptx
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in ptx
    assert "cp.async.wait_group 2;" in ptx
    assert kernel.metadata.shared >= 3 * (128 * 64 + 64 * 256) * 2


@needs_ptxas
@pytest.mark.parametrize("name", ["persistent_matmul_tma", "attention_tma_causal"])
def test_tensor_descriptor_kernels_copy_by_tma(name, tmp_path):
    """Tutorials 09 and 06 through host descriptors: Triton 3.6 spells a descriptor's type
    `!tt.tensordesc<tensor<...>>`; its kernel takes each 128-byte tensor map by value, then the
    shape (i32) and strides (i64), as Triton's does; the tiles come in by
    `cp.async.bulk.tensor` on mbarriers and go out by it, the stores waited for before the
    buffer is written again."""
    kernel = compile_ir_file(TRITON36 / f"{name}.ttgir", "cuda:sm_90a", OPTIONS)
    ptx = kernel.asm["ptx"]
    descriptor = ["align", "u32", "u32", "u64", "u64"]
    expected = {
        "persistent_matmul_tma": descriptor * 3 + ["u32"] * 3,
        "attention_tma_causal": ["f32", "u64", "u32", "u32", *descriptor * 4, "u32"],
    }
    assert _entry_parameters(ptx) == expected[name]
    assert "mbarrier::complete_tx::bytes" in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx
    assert "cp.async.bulk.wait_group.read 0;" in ptx
    assert "0 bytes spill stores" in assemble(ptx, "sm_90a", tmp_path)


def test_a_descriptor_parameter_takes_a_tensor_descriptor():
    """A launch reads a `!tt.tensordesc` parameter as the signature spells a descriptor, and
    refuses anything but a TensorDescriptor of its block shape (before any GPU is asked)."""
    kernel = compile_ir_file(TRITON36 / "persistent_matmul_tma.ttgir", "cuda:sm_90a", OPTIONS)
    kinds = kernel.metadata.parameters
    assert kinds[:6] == ["tensordesc<fp16[128, 64]>", "i32", "i32", "i64", "i64"] + [
        "tensordesc<fp16[256, 64]>"
    ]
    a = np.zeros((256, 64), np.float16)
    wrong = TensorDescriptor.from_tensor(a, [64, 64])
    with pytest.raises(TypeError, match=r"parameter 0 .* block shape \[128, 64\]"):
        kernel[(1,)](wrong, *range(17))
    with pytest.raises(TypeError, match=r"parameter 0 .* got array"):
        kernel[(1,)](a, *range(17))


@needs_ptxas
def test_descriptors_made_in_the_kernel_take_global_scratch(tmp_path):
    """Tutorial 09 with `tl.make_tensor_descriptor`: each of its three maps takes a 128-byte
    slot of the launch's global scratch, which the kernel takes after its own parameters (where
    Triton's takes its global scratch too), written by `tensormap.replace` and acquired before
    the copies read it."""
    path = TRITON36 / "persistent_matmul_descriptors.ttgir"
    kernel = compile_ir_file(path, "cuda:sm_90a", OPTIONS)
    assert kernel.metadata.parameters == PRINTED["persistent_matmul"][1][:6]
    assert kernel.metadata["global_scratch_size"] == 3 * 128
    ptx = kernel.asm["ptx"]
    assert _entry_parameters(ptx) == ["u64"] * 3 + ["u32"] * 3 + ["u64"]
    assert ptx.count("tensormap.replace.tile.global_address") == 3
    assert "fence.proxy.tensormap::generic.acquire.gpu" in ptx
    assert "0 bytes spill stores" in assemble(ptx, "sm_90a", tmp_path)


@pytest.mark.parametrize(
    "written, said",
    [("[%c32_i32, %c128_i32]", "box [32, 128]"), ("swizzle_mode = 2", "swizzle mode 2")],
)
def test_a_map_whose_box_the_copies_would_misread_is_refused(written, said):
    """The copies through a map the kernel writes move its block in Naiad's boxes and swizzle
    (lowering/tma.py): a map that says other ones (the A map's 64 columns of a 128x64 block
    as 32, its 128-byte swizzle as 64 bytes) is refused where it would be misread."""
    text = (TRITON36 / "persistent_matmul_descriptors.ttgir").read_text()
    first = "ttng.tensormap_create %a_desc_4, %a_ptr, [%c64_i32, %c128_i32]"
    assert first in text
    if written.startswith("["):
        text = text.replace(first, first.replace("[%c64_i32, %c128_i32]", written), 1)
        text = text.replace(
            "%c64_i32 = arith.constant 64",
            "%c32_i32 = arith.constant 32 : i32\n    %c64_i32 = arith.constant 64",
            1,
        )
    else:
        at = text.index(first)
        end = text.index("\n", at)
        text = text[:at] + text[at:end].replace("swizzle_mode = 3", written) + text[end:]
    with pytest.raises(KernelNotImplementedError, match=re.escape(said)):
        compile_ir_text(text, "edited.ttgir", "cuda:sm_90a", OPTIONS, laid_out=True)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_views_carried_by_a_loop_cross_as_their_slot(arch, tmp_path):
    """Triton 3.8's sm_80 matmul (fixture_kernels/ttgir/matmul_sm80.ttgir) carries the slot
    views of its two rings through its loop: each crosses the back edge as its slot's byte
    offset, one i32 phi (carried_values.py)."""
    path = TRITON36.parent / "matmul_sm80.ttgir"
    kernel = compile_ir_file(path, f"cuda:{arch}", OPTIONS)
    assert kernel.metadata.parameters == PRINTED["matmul"][1]
    assert "mma.sync.aligned.m16n8k16" in kernel.asm["ptx"]
    assemble(kernel.asm["ptx"], arch, tmp_path)


@needs_ptxas
def test_rounded_divisions_use_the_gpus_division(tmp_path):
    """`arith.ceildivsi`, `floordivsi` and `ceildivui` by a divisor known at run time: PTX's
    own `div` and `rem` (defined for 0), never LLVM's (undefined there)."""
    kernel = compile_ir_text(ROUNDED_DIVISIONS, "rounded.ttgir", "cuda:sm_90a", OPTIONS, True)
    assert not re.search(r"\b[su](div|rem) ", kernel.asm["llir"])
    ptx = kernel.asm["ptx"]
    for instruction in ("div.s32", "rem.s32", "div.u32", "rem.u32"):
        assert instruction in ptx
    assemble(ptx, "sm_90a", tmp_path)


@pytest.mark.parametrize("seed", [0, 1])
def test_rounded_divisions_run_on_the_cpu(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-(2**31), 2**31, 128, dtype=np.int64).astype(np.int32)
    d = rng.integers(-50, 50, 128).astype(np.int32)
    a[:8] = [7, -7, 7, -7, 0, 5, -5, -(2**31)]
    d[:8] = [2, 2, -2, -2, 3, 0, 0, -1]
    kernel = compile_ir_text(ROUNDED_DIVISIONS, "rounded.ttgir", "cpu", OPTIONS, True)
    out = np.zeros(384, np.int32)
    kernel[(1,)](a, d, out)
    for got, expected in zip(np.split(out, 3), rounded_reference(a, d), strict=True):
        np.testing.assert_array_equal(got, expected)


@needs_ptxas
def test_tokens_flow_without_registers(tmp_path):
    """`!ttg.async.token`s carried by an scf.if and an scf.for cost no phi: none of the PTX's
    registers is a token's."""
    kernel = compile_ir_text(TOKENS, "tokens.ttgir", "cuda:sm_90a", OPTIONS, True)
    llir = kernel.asm["llir"]
    assert "cp.async.commit_group" in llir and llir.count("cp.async.wait_group 0") == 3
    assert not re.search(r"phi i32 \[ 0,", llir)
    assemble(kernel.asm["ptx"], "sm_90a", tmp_path)


def test_the_printed_vector_add_runs_on_the_cpu():
    rng = np.random.default_rng(5)
    kernel = compile_ir_file(TRITON36 / "vector_add.ttgir", "cpu", OPTIONS)
    x, y = (rng.standard_normal(3000).astype(np.float32) for _ in range(2))
    out = np.full_like(x, np.nan)
    kernel[(3,)](x, y, out, 3000)
    np.testing.assert_allclose(out, x.astype(np.float64) + y, rtol=1e-6, atol=1e-7)
