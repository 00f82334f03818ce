"""The rest of the language on the GPU, where the language tier (`pytest tests/language -m gpu`,
its "cuda" backend) does not reach: device_print's lines and device_assert's report (each in a
subprocess: vprintf writes to the process's stdout, and a device assert leaves the CUDA context
unusable), atomics on duplicated addresses and their old values, scans with a combine that does
not commute, inline PTX and `tl.extra.cuda`.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from gpu_helpers import ROOT, compiled  # noqa: F401 (compiled: autouse fixture)

import naiad
import naiad.language as tl
from naiad.language.extra import cuda

pytestmark = pytest.mark.gpu


def _run_script(source: str, backend: str, path: Path) -> subprocess.CompletedProcess:
    """Run `source` as the script file `path`: the frontend reads a kernel's source from its
    file (`python -c` has none)."""
    path.write_text(textwrap.dedent(source))
    env = {**os.environ, "NAIAD_BACKEND": backend, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300
    )


_PRINT_SCRIPT = """
    import numpy as np, torch, naiad, naiad.language as tl

    @naiad.jit
    def show(x, n, N: tl.constexpr):
        offs = tl.arange(0, N)
        v = tl.load(x + offs)
        tl.device_print(" v: ", v)
        tl.device_print(" n: ", n)
        tl.device_print(" bits: ", v.to(tl.int32, bitcast=True), hex=True)
        pair = tl.reshape(v, (N // 8, 8))
        tl.device_print(" row sums: ", tl.sum(pair, 1))

    x = np.random.default_rng(7).standard_normal(64).astype(np.float32)
    if "{device}" == "cuda":
        show[(2,)](torch.from_numpy(x).cuda(), -5, N=64)
        torch.cuda.synchronize()
    else:
        show[(2,)](x, -5, N=64)
"""


def test_device_print_prints_the_interpreters_lines(tmp_path):
    gpu = _run_script(_PRINT_SCRIPT.replace("{device}", "cuda"), "auto", tmp_path / "gpu.py")
    ref = _run_script(_PRINT_SCRIPT.replace("{device}", "cpu"), "interpreter", tmp_path / "ref.py")
    assert gpu.returncode == 0, gpu.stderr
    assert ref.returncode == 0, ref.stderr
    lines = [line for line in gpu.stdout.splitlines() if line.startswith("pid")]
    expected = sorted(line for line in ref.stdout.splitlines() if line.startswith("pid"))
    scalar = [line for line in lines if " n: " in line]  # every thread's, as Triton's GPU
    assert len(scalar) == 2 * 4 * 32 and len(set(scalar)) == 2
    assert sorted(set(scalar) | {line for line in lines if " n: " not in line}) == expected
    assert len(lines) - len(scalar) == len(expected) - 2  # each element's line once


_SCALARS_ONLY_SCRIPT = """
    import naiad, naiad.language as tl

    @naiad.jit
    def hello(n):
        print("x:", tl.program_id(0) + n)

    hello[(2,)](40)
    import torch; torch.cuda.synchronize()
"""


def test_a_launch_without_arrays_runs_on_the_gpu(tmp_path):
    """No tensor says where to run: as Triton's, on the active driver's device (every thread
    prints the scalar, where the CPU prints it once a program)."""
    done = _run_script(_SCALARS_ONLY_SCRIPT, "auto", tmp_path / "scalars.py")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("pid")]
    assert sorted(set(lines)) == [f"pid ({p}, 0, 0) idx () x: {40 + p}" for p in (0, 1)]
    assert len(lines) == 2 * 4 * 32


_ASSERT_SCRIPT = """
    import torch, naiad, naiad.language as tl

    @naiad.jit(debug=True)
    def check(x, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.device_assert(tl.load(x + offs) < 3, "value too large")  # the assert

    x = torch.arange(128, device="cuda", dtype=torch.int32)
    check[(1,)](x, N=128)
    torch.cuda.synchronize()
"""


def test_device_assert_reports_the_kernels_line(tmp_path):
    script = tmp_path / "assert_case.py"
    done = _run_script(_ASSERT_SCRIPT, "auto", script)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "value too large" in output
    lines = script.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.endswith("# the assert"))
    assert f"{script}:{line}" in output, output  # the kernel's file:line


@naiad.jit
def _atomic_duplicates(counter, old, N: tl.constexpr):
    offs = tl.arange(0, N)  # fewer elements than the 128 threads: threads hold copies
    tl.store(old + offs, tl.atomic_add(counter + offs % 4, 1))


def test_atomic_add_happens_once_per_element_and_returns_old_values():
    counter = torch.zeros(4, dtype=torch.int32, device="cuda")
    old = torch.full((16,), -1, dtype=torch.int32, device="cuda")
    _atomic_duplicates[(1,)](counter, old, N=16)
    assert counter.tolist() == [4] * 4
    per_address = old.view(4, 4).cpu().numpy()  # row k: the elements k*4 .. k*4+3
    for column in range(4):  # each address saw 0, 1, 2, 3 once
        assert sorted(per_address[:, column].tolist()) == [0, 1, 2, 3]


@naiad.jit
def _scalar_atomic(counter, out):
    tl.store(out + tl.program_id(0), tl.atomic_add(counter, 1.0))


def test_scalar_atomic_once_per_program():
    counter = torch.zeros(1, dtype=torch.float32, device="cuda")
    out = torch.full((32,), -1.0, device="cuda")
    _scalar_atomic[(32,)](counter, out)
    assert counter.item() == 32
    assert sorted(out.tolist()) == [float(i) for i in range(32)]


@naiad.jit
def _compose(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2  # x -> a1 x + b1, then a2 x + b2: associative, not commutative


@naiad.jit
def _affine_scan(
    a, b, out_a, out_b, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REV: tl.constexpr
):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    sa, sb = tl.associative_scan(
        (tl.load(a + offs), tl.load(b + offs)), AXIS, _compose, reverse=REV
    )
    tl.store(out_a + offs, sa)
    tl.store(out_b + offs, sb)


def _affine_reference(a, b, axis, reverse):
    a, b = np.moveaxis(a.astype(np.int64), axis, -1), np.moveaxis(b.astype(np.int64), axis, -1)
    if reverse:
        a, b = a[..., ::-1], b[..., ::-1]
    sa, sb = a.copy(), b.copy()
    for k in range(1, a.shape[-1]):
        sa[..., k] = sa[..., k - 1] * a[..., k]
        sb[..., k] = sb[..., k - 1] * a[..., k] + b[..., k]
    if reverse:
        sa, sb = sa[..., ::-1], sb[..., ::-1]
    wrap = lambda x: np.moveaxis(x, -1, axis).astype(np.int64).astype(np.int32)
    return wrap(sa), wrap(sb)


@pytest.mark.parametrize(("m", "n"), [(1, 1024), (4, 256), (64, 8), (32, 32), (16, 128)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_order_with_a_combine_that_does_not_commute(m, n, axis, reverse):
    gen = np.random.default_rng(m * 7 + n + axis * 3 + reverse)
    a = gen.integers(-3, 4, (m, n)).astype(np.int32)
    b = gen.integers(-50, 50, (m, n)).astype(np.int32)
    a[a == 0] = 1
    out_a = torch.empty((m, n), dtype=torch.int32, device="cuda")
    out_b = torch.empty_like(out_a)
    _affine_scan[(1,)](
        torch.from_numpy(a).cuda(),
        torch.from_numpy(b).cuda(),
        out_a,
        out_b,
        M=m,
        N=n,
        AXIS=axis,
        REV=reverse,
    )
    ref_a, ref_b = _affine_reference(a, b, axis, reverse)
    assert np.array_equal(out_a.cpu().numpy(), ref_a)
    assert np.array_equal(out_b.cpu().numpy(), ref_b)


@naiad.jit
def _asm_and_extras(x, out, info, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x + offs)
    tripled = tl.inline_asm_elementwise(
        "mul.lo.u32 $0, $1, 3;", "=r,r", [v], dtype=tl.int32, is_pure=True, pack=1
    )
    swapped = tl.inline_asm_elementwise(  # the 4 bytes of each group reversed
        "prmt.b32 $0, $1, 0, 0x0123;",
        "=r,r",
        [v.to(tl.int8)],
        dtype=tl.int8,
        is_pure=True,
        pack=4,
    )
    tl.store(out + offs, tripled)
    tl.store(out + N + offs, swapped.to(tl.int32))
    start = cuda.globaltimer()
    tl.store(info, cuda.smid())
    tl.store(info + 1, cuda.num_threads())
    tl.store(info + 2, (cuda.globaltimer() - start).to(tl.int32))


def test_inline_asm_and_cuda_extras():
    x = torch.arange(512, dtype=torch.int32, device="cuda") - 100
    out = torch.empty(1024, dtype=torch.int32, device="cuda")
    info = torch.full((3,), -1, dtype=torch.int32, device="cuda")
    _asm_and_extras[(1,)](x, out, info, N=512)
    assert torch.equal(out[:512], x * 3)
    bytes_ = x.to(torch.int8).view(-1, 4).flip(1).reshape(-1).to(torch.int32)
    assert torch.equal(out[512:], bytes_)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    smid, threads, elapsed = info.tolist()
    assert 0 <= smid < sms and threads == 128 and elapsed >= 0
