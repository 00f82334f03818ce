"""f32 <-> f16 conversions in compiled kernels, on CPUs with and without F16C
(lower_scalar/half_hardware.py): the same bits as NumPy's conversions wherever NumPy's are
defined, NaN aside (Naiad gives the canonical NaN), whichever instructions the CPU model has.

The f32 values are the hard cases of rounding to nearest even: every midpoint between
neighbouring f16 values in the normal and subnormal ranges and the f32 values next to it, the
overflow threshold (65520) and its neighbours, f32 subnormals, signed zeros, infinities and
NaNs with payloads; the f16 values are all 65,536 bit patterns. Kernels on this machine run in
the test's process; the same test runs again in a child process compiled for an x86-64 model
without F16C (NAIAD_HOST_CPU: the host target is read once per process). The full tier compiles
the kernels for models this machine may not run (AVX-512, AVX512-FP16) and reads their code.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from host_code import undefined_symbols

import naiad
import naiad.language as tl
from naiad.backends.cpu import llvm_tools
from naiad.backends.cpu.target import HOST_CPU_MODELS, host_target

pytestmark = pytest.mark.usefixtures("cpu_fresh_cache")

HERE = Path(__file__).resolve().parent

BLOCK = 1024


@naiad.jit
def _cast(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x.to(out_ptr.dtype.element_ty), mask=mask)


def _f32_cases(rng) -> np.ndarray:
    """f32 values on, next to and between the rounding points of f16, and the specials."""
    every_half = np.arange(1 << 15, dtype=np.uint16).view(np.float16)
    finite = every_half[np.isfinite(every_half)].astype(np.float32)
    midpoints = ((finite[:-1].astype(np.float64) + finite[1:]) / 2).astype(np.float32)
    steps = [np.nextafter(midpoints, np.float32(np.inf)), np.nextafter(midpoints, np.float32(0))]
    threshold = np.float32(65520.0)
    edges = np.array(
        [threshold, np.nextafter(threshold, np.float32(0)), np.nextafter(threshold, np.inf),
         np.float32(65504), np.float32(1e30), np.float32(np.inf), np.float32(2.0**-24),
         np.float32(2.0**-25), np.float32(1e-40), np.float32(1e-45), np.float32(0.0)],
        dtype=np.float32,
    )  # fmt: skip
    magnitudes = np.concatenate([finite, midpoints, *steps, edges])
    signed = np.concatenate([magnitudes, -magnitudes])
    payloads = rng.integers(1, 1 << 23, 64, dtype=np.uint32)
    signs = rng.integers(0, 2, 64, dtype=np.uint32) << np.uint32(31)
    nans = np.uint32(0x7F800000) | payloads | signs
    randoms = rng.standard_normal(4096).astype(np.float32) * np.float32(1000)
    return np.concatenate([signed, nans.view(np.float32), randoms]).astype(np.float32)


def _run(x: np.ndarray, dtype) -> np.ndarray:
    out = np.empty(x.shape, dtype)
    _cast[(naiad.cdiv(x.size, BLOCK),)](x, out, x.size, BLOCK=BLOCK)
    return out


def check_conversions() -> bool:
    """Assert both directions' bits on this process's host; say whether the compiled kernel
    converts whole vectors with the f16 instructions (its optimized LLVM IR's vector `fptrunc`
    to half)."""
    rng = np.random.default_rng(19)
    x = _f32_cases(rng)
    got = _run(x, np.float16).view(np.uint16)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    assert np.array_equal(got[~nan], want[~nan])
    assert np.all(got[nan] == 0x7FFF)
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    widened = _run(halves, np.float32).view(np.uint32)
    want = halves.astype(np.float32).view(np.uint32)
    nan = np.isnan(halves)
    assert np.array_equal(widened[~nan], want[~nan])
    assert np.all(widened[nan] == 0x7FFFFFFF)
    compiled = _cast.warmup("*fp32", "*fp16", 4096, grid=(4,), BLOCK=BLOCK, target="cpu")
    return re.search(r"fptrunc <\d+ x float> .* to <\d+ x half>", compiled.asm["llir"]) is not None


def test_f16_conversions_match_numpy_on_this_cpu():
    hardware = check_conversions()
    assert hardware == ("+f16c" in host_target().features.split(","))


_ON_ANOTHER_MODEL = textwrap.dedent(
    """
    import sys
    sys.path[:0] = [{folder!r}, {tests!r}]
    from naiad import knobs
    import test_half_hardware as t
    with knobs.override(NAIAD_BACKEND="cpu"):
        print("@@", t.{function}())
    """
)


def on_another_model(function: str, model: str, tmp_path) -> list[str]:
    """What this module's `function()` prints, in a process compiling for CPU `model`
    (NAIAD_HOST_CPU): its `@@` line's words after the marker."""
    source = _ON_ANOTHER_MODEL.format(
        folder=str(HERE), tests=str(HERE.parents[1]), function=function
    )
    done = subprocess.run(
        [sys.executable, "-c", source],
        capture_output=True,
        text=True,
        env={**os.environ, "NAIAD_HOST_CPU": model, "NAIAD_CACHE_DIR": str(tmp_path)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("@@")]
    return line.split()[1:]


@pytest.mark.skipif(
    not {"+sse4.2", "+popcnt"} <= set(llvm_tools.host_cpu_features().split(",")),
    reason="an x86-64 host that runs x86-64-v2 code",
)
def test_f16_conversions_match_numpy_without_f16c(tmp_path):
    """x86-64-v2 (SSE4.2, no F16C): the integer conversions of float_bits.py, same bits."""
    assert on_another_model("check_conversions", "x86-64-v2", tmp_path) == ["False"]


def compiled_conversions(target: str = "cpu") -> str:
    """For `target` (this process's host by default): whether both directions convert whole
    vectors with the f16 instructions, and the conversion helpers the objects would call, as
    one line."""
    conversions = []
    for types in (("*fp32", "*fp16"), ("*fp16", "*fp32")):
        compiled = _cast.warmup(*types, 4096, grid=(4,), BLOCK=BLOCK, target=target)
        vector = r"fp(?:trunc|ext) <\d+ x (?:float|half)> .* to <\d+ x (?:half|float)>"
        helpers = {name for name in undefined_symbols(compiled.binary) if "hf" in name}
        conversions.append(
            f"{re.search(vector, compiled.asm['llir']) is not None}:{sorted(helpers)}"
        )
    return " ".join(conversions)


@pytest.mark.full
@pytest.mark.parametrize("model", ["x86-64-v2", "x86-64-v3", "skylake-avx512", "sapphirerapids"])
def test_f16_conversions_compile_on(model, tmp_path):
    """Compiled only (this machine may not run the code): vector f16 instructions exactly where
    the model has F16C, and never a call to a conversion helper."""
    if host_target().arch != "x86_64":
        pytest.skip("x86-64 CPU models")
    hardware = "+f16c" in HOST_CPU_MODELS["x86_64"][model].split(",")
    words = on_another_model("compiled_conversions", model, tmp_path)
    assert words == [f"{hardware}:[]", f"{hardware}:[]"]


@pytest.mark.full
def test_f16_conversions_compile_for_aarch64():
    """Every AArch64 core converts f16 in vectors (`fcvtn`, `fcvtl`)."""
    assert compiled_conversions("cpu:aarch64").split() == ["True:[]", "True:[]"]
