"""Debug mode on the GPU (`debug=True` or `NAIAD_DEBUG=1`): every load, store and atomic through
an argument's pointer is checked against the argument's storage (lowering/bounds.py), and
device_assert reports the kernel's `file:line`.

Each case runs in its own process, from a script written to a file (the frontend reads the
kernel's source, and the report names the script's lines): a device-side assert leaves the
CUDA context unusable. Out of bounds by one element on either side fails for a load, a store
and an atomic; masked-off lanes and views reaching elsewhere into their storage do not; a
correct kernel gives bit-identical results with and without debug mode.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """\
import sys

import torch

import naiad
import naiad.language as tl


@naiad.jit(debug=True)
def shifted_load(x, out, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs + SHIFT, mask=m), mask=m)  # LOAD


@naiad.jit(debug=True)
def shifted_store(x, out, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs + SHIFT, tl.load(x + offs, mask=m), mask=m)  # STORE


@naiad.jit(debug=True)
def shifted_atomic(x, out, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(out + offs + SHIFT, tl.load(x + offs, mask=m), mask=m)  # ATOMIC


@naiad.jit(debug=True)
def vector_load(x, out, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs + SHIFT))  # VECTOR


@naiad.jit
def plain_load(x, out, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs + SHIFT, mask=m), mask=m)  # PLAIN


@naiad.jit(debug=True)
def masked_load(x, out, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    src = offs + SHIFT
    inside = (src >= 0) & (src < n)
    tl.store(out + offs, tl.load(x + src, mask=inside, other=-1.0), mask=offs < n)


@naiad.jit(debug=True)
def check(x, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.device_assert(tl.load(x + offs) < 3, "value too large")  # ASSERT


KERNELS = {"load": shifted_load, "store": shifted_store, "atomic": shifted_atomic}
N, BLOCK = 1000, 1024


def data():
    gen = torch.Generator(device="cuda").manual_seed(3)
    x = torch.randn(N, device="cuda", generator=gen)
    return x, torch.randn(N, device="cuda", generator=gen)


def main(case, shift):
    x, out = data()
    if case in KERNELS:
        KERNELS[case][(1,)](x, out, N, SHIFT=shift, BLOCK=BLOCK)
    elif case == "vector":
        alone = x[: BLOCK // 2].clone()  # a storage of its own, 16-byte aligned
        vector_load[(1,)](alone, out, SHIFT=shift, BLOCK=BLOCK // 2)
    elif case == "env":
        plain_load[(1,)](x, out, N, SHIFT=shift, BLOCK=BLOCK)
    elif case == "masked":
        masked_load[(1,)](x, out, N, SHIFT=shift, BLOCK=BLOCK)
        torch.cuda.synchronize()
        src = torch.arange(N, device="cuda") + shift
        inside = (src >= 0) & (src < N)
        expected = torch.where(inside, x[src.clamp(0, N - 1)], torch.full_like(x, -1.0))
        assert torch.equal(out, expected)
    elif case == "view":
        view = x[2:]  # reaching 2 elements before the view stays inside its storage
        shifted_load[(1,)](view, out, N - 2, SHIFT=shift, BLOCK=BLOCK)
        torch.cuda.synchronize()
        assert torch.equal(out[: N - 2], x[2 + shift : N + shift])
    elif case == "assert":
        check[(1,)](torch.arange(128, device="cuda", dtype=torch.int32), N=128)
    torch.cuda.synchronize()
    print("finished")


main(sys.argv[1], int(sys.argv[2]))
"""


def _run(tmp_path, source: str, *args: str, debug_env: bool = False):
    """Run `source` as a script file with `args`; (the finished process, the script's path)."""
    script = tmp_path / "debug_case.py"
    script.write_text(source)
    env = {**os.environ, "NAIAD_BACKEND": "auto", "PYTHONPATH": str(ROOT)}
    env.pop("NAIAD_DEBUG", None)
    if debug_env:
        env["NAIAD_DEBUG"] = "1"
    done = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    return done, script


def _line(source: str, marker: str) -> int:
    """The 1-based line of `source` that ends with `# marker`."""
    for number, text in enumerate(source.splitlines(), 1):
        if text.endswith(f"# {marker}"):
            return number
    raise AssertionError(f"no line marked {marker}")


def _assert_reports(done, script, marker: str, message: str) -> None:
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "finished" not in done.stdout
    assert message in output, output
    assert f"{script}:{_line(_SCRIPT, marker)}" in output, output


@pytest.mark.parametrize(("case", "argument"), [("load", "x"), ("store", "out"), ("atomic", "out")])
@pytest.mark.parametrize("shift", [1, -1])
def test_out_of_bounds_by_one_element_is_reported(tmp_path, case, argument, shift):
    done, script = _run(tmp_path, _SCRIPT, case, str(shift))
    message = f"out-of-bounds {case} through argument `{argument}`"
    _assert_reports(done, script, case.upper(), message)


def test_a_vector_access_past_the_end_is_reported(tmp_path):
    done, script = _run(tmp_path, _SCRIPT, "vector", "4")
    _assert_reports(done, script, "VECTOR", "out-of-bounds load through argument `x`")


def test_naiad_debug_turns_the_checks_on(tmp_path):
    done, script = _run(tmp_path, _SCRIPT, "env", "1", debug_env=True)
    _assert_reports(done, script, "PLAIN", "out-of-bounds load through argument `x`")


def test_without_debug_mode_nothing_is_checked(tmp_path):
    """Reading one element past the end is undefined outside debug mode (as in Triton): the
    kernel is not checked, and here the stray read lands in the allocator's slack."""
    done, _ = _run(tmp_path, _SCRIPT, "env", "1")
    assert done.returncode == 0, done.stderr
    assert "out-of-bounds" not in done.stdout + done.stderr


@pytest.mark.parametrize("shift", [3, -3])
def test_masked_off_lanes_are_not_reported(tmp_path, shift):
    done, _ = _run(tmp_path, _SCRIPT, "masked", str(shift))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "finished" in done.stdout


def test_a_view_may_reach_elsewhere_into_its_storage(tmp_path):
    done, _ = _run(tmp_path, _SCRIPT, "view", "-2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "finished" in done.stdout


def test_device_assert_reports_the_kernels_line(tmp_path):
    done, script = _run(tmp_path, _SCRIPT, "assert", "0")
    _assert_reports(done, script, "ASSERT", "value too large")


_SAME_SCRIPT = """\
import torch

import naiad
import naiad.language as tl


@naiad.jit
def rows(x, out, counts, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    p = x + row * stride + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        m = start + tl.arange(0, BLOCK) < n_cols
        acc += tl.load(p, mask=m, other=0.0)
        p += BLOCK
    tl.store(out + row, tl.sum(acc))
    tl.atomic_add(counts + row % 4, 1)
    tl.atomic_max(counts + 4, row)
    tl.atomic_cas(counts + 5, 0, 7)


@naiad.jit
def tiles(a, b, M, N, sam, san, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(a, (M, N), (sam, san), (pid * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(b, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    for _ in range(0, N, BN):
        tile = tl.load(src, boundary_check=(0, 1), padding_option="zero")
        tl.store(dst, tile * 2.0 + 1.0, boundary_check=(0, 1))
        src = tl.advance(src, (0, BN))
        dst = tl.advance(dst, (0, BN))


def run(debug):
    gen = torch.Generator(device="cuda").manual_seed(11)
    x = torch.randn(37, 300, device="cuda", generator=gen)
    out = torch.randn(37, device="cuda", generator=gen)
    counts = torch.zeros(8, device="cuda", dtype=torch.int32)
    rows[(37,)](x, out, counts, 300, x.stride(0), BLOCK=128, debug=debug)
    a = torch.randn(70, 90, device="cuda", generator=gen).t()  # 90 x 70, strided
    b = torch.randn(90, 70, device="cuda", generator=gen)
    tiles[(3,)](a, b, 90, 70, a.stride(0), a.stride(1), BM=32, BN=32, debug=debug)
    torch.cuda.synchronize()
    return out, counts, b


plain = run(False)
prepared = (len(rows._launches), len(tiles._launches))
checked = run(True)
for p, c in zip(plain, checked):
    assert torch.equal(p, c), (p, c)
# Debug launches are never prepared for the hot path (their extents are the launch's own).
assert (len(rows._launches), len(tiles._launches)) == prepared
print("identical")
"""


def test_a_correct_kernel_gives_identical_results_in_debug_mode(tmp_path):
    done, _ = _run(tmp_path, _SAME_SCRIPT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "identical" in done.stdout
