"""Real `@naiad.jit` kernels through TTIR -> TTGIR -> LLVM IR -> PTX -> ptxas, for sm_80 and
sm_90a: the tutorials' memory-bound kernels, control flow, and the operations whose GPU meaning
LLVM leaves undefined.

The TTGIR is made here without the TTGIR passes, so that these tests exercise the lowering
alone: every tensor of these one-dimensional kernels gets one blocked layout
(`with_blocked_layout`), which is what convert-to-ttgir and coalesce choose for them.
"""

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from test_lowering import ARCHES, assemble, count
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl
from naiad.backends.nvidia import ptx
from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.lowering import lower_module
from naiad.errors import KernelNotImplementedError
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module
from naiad.runtime.compiler import build_ttir

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
_TENSOR = re.compile(r"tensor<(\d+)x(!tt\.ptr<[^>]+>|[a-z0-9]+)>")


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"lowering_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def with_blocked_layout(ttir: str, size_per_thread: int, num_warps: int) -> str:
    """The TTIR of a kernel whose tensors are all 1-D, as TTGIR with one blocked layout."""
    header = (
        f"#blocked = #ttg.blocked<{{sizePerThread = [{size_per_thread}], threadsPerWarp = [32], "
        f"warpsPerCTA = [{num_warps}], order = [0]}}>\n"
    )
    attributes = (
        f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {num_warps} : i32, '
        'ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {'
    )
    text = _TENSOR.sub(r"tensor<\1x\2, #blocked>", ttir)
    return header + text.replace("module {", attributes, 1)


def ttgir(kernel, args, kwargs=None, size_per_thread=4, num_warps=4):
    bound = kernel._bind(args, kwargs or {})
    module = build_ttir(kernel, bound, "cuda:sm_90a").module
    text = with_blocked_layout(print_module(module), size_per_thread, num_warps)
    return parse_module(text)


def compile_all(module, tmp_path) -> dict[str, str]:
    """arch -> PTX of `module`, each assembled by ptxas."""
    texts = {}
    for arch in ARCHES:
        llir = lower_module(module, f"cuda:{arch}")
        text = ptx.compile_ptx(llir, nv_target.cuda_target(arch)).text
        assemble(text, arch, tmp_path)
        texts[arch] = text
    return texts


# -- the tutorials --------------------------------------------------------------------------
@needs_ptxas
def test_vector_add(tmp_path):
    add = example("01_vector_add").add_kernel
    module = ttgir(add, ("*fp32", "*fp32", "*fp32", 4096), {"BLOCK_SIZE": 1024})
    text = compile_all(module, tmp_path)["sm_90a"]
    assert count(r"ld\.global\.v4\.b32", text) == 4


@needs_ptxas
def test_persistent_softmax(tmp_path):
    """Rows in a loop over program ids (scf.for with the program count as step)."""
    softmax = example("02_fused_softmax").softmax_kernel
    args = ("*fp32", "*fp32", 1024, 1024, 4096, 1000)
    module = ttgir(softmax, args, {"BLOCK_SIZE": 1024, "num_stages": 4}, num_warps=8)
    text = compile_all(module, tmp_path)["sm_90a"]
    assert "%nctaid.x" in text
    assert count(r"shfl\.sync\.bfly\.b32", text) == 10
    assert count(r"ex2\.approx\.f32", text) == 4  # 1024 / 256 threads


@needs_ptxas
def test_layer_norm_forward(tmp_path):
    """f16 in and out, three loops over the row carrying f32 accumulators, two reductions,
    sqrt.approx and f32 division: 16-byte accesses of 8 f16 each."""
    forward = example("05_layer_norm")._layer_norm_fwd_fused
    args = ("*fp16", "*fp16", "*fp16", "*fp16", "*fp32", "*fp32", 4096, 4096, 1e-5)
    module = ttgir(forward, args, {"BLOCK_SIZE": 1024}, size_per_thread=8, num_warps=4)
    text = compile_all(module, tmp_path)["sm_80"]
    assert count(r"ld\.global\.v4\.b32", text) == 5  # x twice, w, b, x again
    assert count(r"st\.global\.v4\.b32", text) == 1
    assert "sqrt.approx.ftz.f32" in text
    assert count(r"cvt\.f32\.f16", text) >= 8 * 5


# -- control flow and GPU-defined arithmetic --------------------------------------------------
@naiad.jit
def control_kernel(x_ptr, out_ptr, n, d, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.int32)
    i = 0
    while i < n:
        acc += tl.load(x_ptr + i * BLOCK + offs)
        i += 1
    if n > 2:
        acc = acc // d + (acc % d)
    else:
        acc = (acc << d) + (acc >> d)
    tl.store(out_ptr + offs, acc)


@needs_ptxas
def test_control_flow_and_integer_division(tmp_path):
    module = ttgir(control_kernel, ("*i32", "*i32", 5, 3), {"BLOCK": 256}, num_warps=2)
    text = compile_all(module, tmp_path)["sm_90a"]
    # a divisor known only at run time: PTX's own division, defined for 0 and INT_MIN / -1
    assert "div.s32" in text
    assert "rem.s32" in text


@naiad.jit
def math_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.exp(x) + tl.sqrt(tl.abs(x)) + tl.log(tl.abs(x) + 1.0) + tl.sin(x)
    y = tl.maximum(y, x) / (x + 2.0)
    tl.store(out_ptr + offs, tl.where(x > 0, y, tl.sum(x, axis=0)))


@needs_ptxas
def test_math_matches_the_instructions_triton_uses(tmp_path):
    module = ttgir(math_kernel, ("*fp32", "*fp32"), {"BLOCK": 512})
    text = compile_all(module, tmp_path)["sm_90a"]
    assert "ex2.approx.f32" in text
    assert "sqrt.approx.ftz.f32" in text
    assert "div.full.f32" in text
    assert not re.search(r"\bcall", text)  # libdevice (log, sin) inlined, nothing called


@naiad.jit
def wide_pack_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("mov.b64 $0, $1;", "=l,l", [offs], tl.int32, True, 2)
    tl.store(x_ptr + offs, y)


def test_an_op_without_lowering_is_reported_at_the_users_line():
    """(Two 32-bit elements in one asm operand: a packing the lowering refuses.)"""
    module = ttgir(wide_pack_kernel, ("*i32",), {"BLOCK": 128})
    with pytest.raises(KernelNotImplementedError, match=r"tt\.elementwise_inline_asm") as info:
        lower_module(module, "cuda:sm_90a")
    assert info.value.location.filename.endswith("test_lowering_kernels.py")
    assert info.value.location.lineno == wide_pack_kernel.fn.__code__.co_firstlineno + 3


@naiad.jit
def narrow_kernel(x_ptr, flags_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=3)
    flags = tl.load(flags_ptr + offs, mask=offs < n, other=False)
    tl.store(out_ptr + offs, tl.where(flags, x, -x), mask=offs < n)
    tl.store(flags_ptr + offs, x > 0, mask=offs < n)


@needs_ptxas
@pytest.mark.parametrize("size_per_thread", [1, 2, 4, 16])
def test_bytes_and_booleans_move_in_words(size_per_thread, tmp_path):
    """int8 and bool elements: one byte (a 16-bit register), two, a 32-bit word, or 16 bytes;
    booleans are bytes in memory."""
    module = ttgir(narrow_kernel, ("*i8", "*i1", "*i8", 4096), {"BLOCK": 2048}, size_per_thread)
    text = compile_all(module, tmp_path)["sm_80"]
    width = {1: r"\.b8", 2: r"\.b16", 4: r"\.b32", 16: r"\.v4\.b32"}[size_per_thread]
    assert count(rf"ld\.global{width} ", text) == 2 * 2048 // (128 * size_per_thread)
