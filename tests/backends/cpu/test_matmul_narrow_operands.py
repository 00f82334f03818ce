"""Half- and low-precision dots on the CPU are never scalar (codegen/lower_matmul.py): the f16,
bf16, fp8 and int8 operands of `tl.dot` are converted to the accumulator's type by vector
loops, once per element, before the micro-kernel (whose values test_matmul_kernel.py checks).

On this machine the kernel is compiled in the test's process; for other CPU models (the full
tier) in a child process (NAIAD_HOST_CPU: the host target is read once per process), and only
compiled there: this machine may not run that code.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import naiad
import naiad.language as tl
from naiad.backends.cpu.codegen import lower_matmul_bf16, lower_matmul_int8

pytestmark = pytest.mark.usefixtures("cpu_fresh_cache")

OPERANDS = ["bf16", "fp16", "fp8e5", "fp8e4nv", "i8"]


@naiad.jit
def _matmul(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    om, on, ok = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + om[:, None] * K + ok[None, :])
    b = tl.load(b_ptr + ok[:, None] * N + on[None, :])
    tl.store(c_ptr + om[:, None] * N + on[None, :], tl.dot(a, b))


def vector_conversions(operand: str) -> int:
    """The vector instructions that take the operand's narrow elements (a conversion's first
    step: an extension, a comparison, a shift) in the optimized LLVM IR of the matmul compiled
    for this process's host; loads and stores, which copying a tile also makes, do not count.
    Where the host has AVX512-BF16 (AVX512-VNNI), a bf16 (int8) dot is not converted but
    multiplied by `vdpbf16ps` (`vpdpbusd`): its count of those instead."""
    out = "*i32" if operand == "i8" else "*fp32"
    kernel = _matmul.warmup(
        f"*{operand}", f"*{operand}", out, grid=(1,), M=32, N=64, K=32, target="cpu"
    )
    if operand == "bf16" and lower_matmul_bf16.has_bf16_pairs():
        return kernel.asm["asm"].count("vdpbf16ps")
    if operand == "i8" and lower_matmul_int8.has_byte_dots():
        return kernel.asm["asm"].count("vpdpbusd")
    narrow = "i8" if operand in ("fp8e5", "fp8e4nv", "i8") else "(?:i16|half)"
    pattern = rf"= (?:zext|sext|fpext|icmp \w+|and|lshr|shl)(?: nuw| nsw| nneg)* <\d+ x {narrow}>"
    return len(re.findall(pattern, kernel.asm["llir"]))


def test_narrow_operands_convert_in_vectors():
    for operand in OPERANDS:
        assert vector_conversions(operand) > 0, operand


@pytest.mark.parametrize(
    "operand,out,instruction,present",
    [
        ("bf16", "*fp32", "vdpbf16ps", lower_matmul_bf16.has_bf16_pairs),
        ("i8", "*i32", "vpdpbusd", lower_matmul_int8.has_byte_dots),
    ],
)
def test_dot_instructions_only_where_the_cpu_has_them(operand, out, instruction, present):
    """The product checks the host's features before it emits AVX-512's dot instructions."""
    kernel = _matmul.warmup(
        f"*{operand}", f"*{operand}", out, grid=(1,), M=32, N=64, K=32, target="cpu"
    )
    count = kernel.asm["asm"].count(instruction)
    assert (count > 0) == present(), count


_ON_ANOTHER_MODEL = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {folder!r})
    from naiad import knobs
    import test_matmul_narrow_operands as t
    with knobs.override(NAIAD_BACKEND="cpu"):
        print("@@", *(t.vector_conversions(operand) for operand in t.OPERANDS))
    """
)


@pytest.mark.full
@pytest.mark.parametrize("model", ["x86-64-v2", "x86-64-v3", "sapphirerapids"])
def test_narrow_operands_convert_in_vectors_on(model):
    """SSE4.2 only, AVX2, AVX-512 with AVX512-BF16, AVX512-FP16 and AVX512-VNNI (bf16:
    `vdpbf16ps`, int8: `vpdpbusd`)."""
    folder = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", _ON_ANOTHER_MODEL.format(folder=folder)],
        capture_output=True,
        text=True,
        env={**os.environ, "NAIAD_HOST_CPU": model},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("@@")]
    conversions = dict(zip(OPERANDS, map(int, line.split()[1:])))
    assert all(count > 0 for count in conversions.values()), conversions
