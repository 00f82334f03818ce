"""`cpu-versioned-checks` (backends/cpu/versioned_checks.py): a loop of scalar accesses whose
bounds checks follow its variable in a straight line runs a copy without them where they pass
at its first and last iteration, and as written (checks and reports) where they do not.

Each kernel runs compiled (`NAIAD_BACKEND=cpu`) on seeded random data against NumPy; the pass
itself runs on the kernel's Linalg text, which shows the two loops and which checks each
keeps. A loop that reads past its array raises the report it raised before, naming the first
offending element.
"""

import re

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu.versioned_checks import VersionedChecks
from naiad.errors import KernelIndexError
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module


@naiad.jit
def scatter_add_row(index, src, out, n, start):
    """scatter_add's loop: the index and the source follow the variable, the target not."""
    for c in range(0, n):
        j = tl.load(index + start + c)
        target = out + j
        tl.store(target, tl.load(target) + tl.load(src + start + c))


@naiad.jit
def squares_gather(src, out, n):
    """The offset `c * c` is no straight line: both loops keep its check."""
    for c in range(0, n):
        tl.store(out + c, tl.load(src + c * c))


@naiad.jit
def strided_copy(src, out, n, stride):
    """A runtime stride: no bound on how far the offset moves an iteration (it could wrap), so
    both loops keep src's check."""
    for c in range(0, n):
        tl.store(out + c, tl.load(src + c * stride))


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


def _versioned(kernel, *signature) -> str:
    """The kernel's Linalg after cpu-versioned-checks."""
    compiled = kernel.warmup(*signature, grid=(1,), target="cpu")
    lines = [line for line in compiled.asm["linalg"].splitlines() if not line.startswith("#loc")]
    module = parse_module(re.sub(r" loc\([^)]*\)", "", "\n".join(lines)))
    VersionedChecks().run(module)
    return print_module(module)


def _checks(text: str, argument: str) -> int:
    return len(re.findall(rf"cf.assert .*through argument `{argument}`", text))


@pytest.mark.parametrize(("n", "start"), [(1000, 0), (300, 700), (1, 999), (0, 5)])
def test_a_scalar_loop_runs_without_its_linear_checks(n, start):
    rng = np.random.default_rng(n + start)
    index = rng.integers(0, 64, 1000).astype(np.int32)
    src = rng.standard_normal(1000).astype(np.float32)
    out = rng.standard_normal(64).astype(np.float32)
    expected = out.astype(np.float64)
    np.add.at(expected, index[start : start + n], src[start : start + n])
    scatter_add_row[(1,)](index, src, out, n, start)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    text = _versioned(scatter_add_row, "*i32", "*fp32", "*fp32", "i32", "i32")
    assert text.count("scf.for") == 2
    assert _checks(text, "index") == _checks(text, "src") == 1  # the loop as written
    assert _checks(text, "out") == 4  # the target's load and store, in both loops


def test_a_loop_reading_past_its_array_reports_the_first_element():
    index = np.zeros(100, np.int32)
    src = np.ones(100, np.float32)
    out = np.zeros(4, np.float32)
    with pytest.raises(KernelIndexError, match=r"argument `index`.*\[100\] outside its storage"):
        scatter_add_row[(1,)](index, src, out, 10, 95)
    assert out[0] == 5  # the five iterations before the failing one added


def test_a_check_whose_offsets_are_no_straight_line_stays_in_both_loops():
    src = np.arange(100, dtype=np.float32)
    out = np.zeros(10, np.float32)
    squares_gather[(1,)](src, out, 10)
    np.testing.assert_array_equal(out, src[np.arange(10) ** 2])
    text = _versioned(squares_gather, "*fp32", "*fp32", "i32")
    assert text.count("scf.for") == 2
    assert _checks(text, "src") == 2 and _checks(text, "out") == 1
    with pytest.raises(KernelIndexError, match=r"argument `src`.*\[100\] outside"):
        squares_gather[(1,)](src, out, 11)


def test_an_offset_scaled_by_a_runtime_stride_keeps_its_check():
    src = np.arange(100, dtype=np.float32)
    out = np.zeros(20, np.float32)
    strided_copy[(1,)](src, out, 20, 3)
    np.testing.assert_array_equal(out, src[::3][:20])
    text = _versioned(strided_copy, "*fp32", "*fp32", "i32", "i32")
    assert text.count("scf.for") == 2
    assert _checks(text, "src") == 2 and _checks(text, "out") == 1
