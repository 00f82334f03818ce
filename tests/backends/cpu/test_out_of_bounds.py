"""Out-of-bounds accesses in compiled CPU kernels leave the process running (issue 13, item 4).

Every access of a compiled kernel is checked against its argument's storage, debug mode or not
(middle/linalg/bounds_checks.py): the forgotten mask on NumPy arrays and torch tensors, far
gathers, scatters and atomics, `x_ptr - 2**30`, a read past the end of a page, stores past
either end, a 2-D block or a block pointer past the last row, a loop past the row, a pointer
loaded from a table. Before, 8 of those killed the process and the others read or wrote the
memory next to their arrays. They run in a subprocess (oob_cases.py), since a crash must not
take pytest with it: each raises a KernelIndexError naming the kernel, the argument, the lanes
and offsets, writes nothing next to its arrays, and the kernel runs right after on good
arguments. The report is the interpreter's, caret and offsets included.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.errors import KernelIndexError

SCRIPT = pathlib.Path(__file__).with_name("oob_cases.py")

# case: (kernel, access, argument, what the report lists)
EXPECTED = {
    "mask_numpy": ("copy_unmasked", "load", "src", "24 active lane(s)"),
    "mask_torch": ("add_unmasked", "load", "x_ptr", "4095 active lane(s)"),
    "mask_torch_small": ("add_unmasked", "load", "x_ptr", "[100, 101, 102, 103,"),
    "page_end_read": ("copy_unmasked", "load", "src", "storage of 1000 element(s)"),
    "store_past_end": ("store_block", "store", "dst", "[100, 101, 102, 103, 104, 105, 106, 107]"),
    "store_before_start": ("store_block", "store", "dst", "[-4, -3, -2, -1]"),
    "far_gather": ("gather", "load", "src", "[1099511627776]"),
    "negative_gather": ("gather", "load", "src", "1 active lane(s) address element offset(s) [-1]"),
    "far_scatter": ("scatter", "store", "dst", "[1099511627776]"),
    "far_atomic": ("histogram", "atomic", "bins", "[2147483647]"),
    "far_compare_and_swap": ("claim", "atomic", "flags", "[-1099511627776]"),
    "negative_pointer_offset": ("shifted_load", "load", "x_ptr", "[-1073741824, -1073741823,"),
    "scalar_past_end": ("scalar_copy", "load", "src", "storage of 10 element(s)"),
    "rows_past_end": ("tile_copy", "load", "src", "32 active lane(s)"),
    "block_pointer_past_end": ("block_pointer_copy", "load", "src", "[96, 97, 98, 99,"),
    "loop_past_end": ("row_sums", "load", "x_ptr", "in program (3, 0, 0)"),
    "table_pointer_past_end": (
        "through_table",
        "load",
        "x",
        "[16, 17, 18, 19, 20, 21, 22, 23, ...]",
    ),
}


@pytest.fixture(scope="module")
def reports():
    """Every case, run in order in one subprocess of its own, by name."""
    env = {**os.environ, "NAIAD_BACKEND": "cpu"}  # compiled: nothing falls back
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode == 0, f"the process died ({done.returncode}):\n{done.stderr[-3000:]}"
    return {r["case"]: r for r in map(json.loads, done.stdout.splitlines())}


@pytest.mark.parametrize("case", list(EXPECTED))
def test_the_process_survives_with_an_error_naming_the_kernel_and_argument(reports, case):
    kernel, what, argument, listed = EXPECTED[case]
    report = reports[case]
    assert report["error"] == "KernelIndexError"
    first = report["message"].splitlines()[0]
    assert f"out-of-bounds {what} through argument `{argument}`" in first
    assert first.endswith(f"of `{kernel}`")
    assert listed in first
    assert report["untouched"], "it wrote next to its arrays"
    assert report["usable"], "the kernel did not run right after"


# -- the report: the interpreter's, from compiled code
@naiad.jit
def _copy(src, dst, start, n, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    tl.store(dst + offs - start, tl.load(src + offs, mask=offs < n), mask=offs < n)


@naiad.jit
def _through_table(table, x, out, shift, n, BLOCK: tl.constexpr):
    p = tl.load(table).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(p + shift + offs, mask=offs < n), mask=offs < n)


def _reports(kernel, *args, **options) -> dict:
    """The error's text in the interpreter and compiled, in debug mode and not."""
    texts = {}
    for backend, debug in (("interpreter", True), ("cpu", True), ("cpu", False)):
        with knobs.override(NAIAD_BACKEND=backend), pytest.raises(KernelIndexError) as info:
            kernel[(1,)](*args, debug=debug, **options)
        texts[backend, debug] = str(info.value)
    return texts


@pytest.mark.parametrize("start, n", [(0, 16), (-3, 5), (0, 40)])
def test_the_compiled_report_is_the_interpreters(start, n):
    src, dst = np.arange(10, dtype=np.float32), np.zeros(64, np.float32)
    texts = _reports(_copy, src, dst, start, n, 64)
    interpreted = texts["interpreter", True].splitlines()
    for debug in (True, False):
        compiled = texts["cpu", debug].splitlines()
        assert compiled[0] == interpreted[0] + " in program (0, 0, 0) of `_copy`"
        assert compiled[1:] == interpreted[1:]  # the source line and the caret under `tl.load`
    assert interpreted[2].strip() == "^" and "tl.load" in interpreted[1]


@pytest.mark.parametrize("shift, bad", [(0, "[16, 17, 18, 19]"), (-2, "[-2, -1]")])
def test_a_pointer_made_from_an_integer_is_checked_against_the_array_it_points_into(shift, bad):
    """An int64 loaded from a table and cast to a pointer, as Triton's grouped GEMM does:
    the argument it points into is blamed, in the interpreter as in compiled code (the
    interpreter used to blame whichever argument lay below the address)."""
    x, out = np.arange(16, dtype=np.float32), np.zeros(64, np.float32)
    table = np.array([x.ctypes.data], np.int64)
    n = 20 if shift == 0 else 4
    texts = _reports(_through_table, table, x, out, shift, n, 64)
    for text in texts.values():
        first = text.splitlines()[0]
        assert "out-of-bounds load through argument `x`" in first
        assert f"address element offset(s) {bad} outside its storage of 16 element(s)" in first


def test_a_pointer_into_memory_no_argument_holds():
    """Compiled, it is not checked (the kernel was not given the allocation); the
    interpreter finds the live array holding it and reads it too, and says so of an
    address that no array holds instead of blaming an argument."""
    x, out = np.arange(16, dtype=np.float32), np.zeros(64, np.float32)
    table = np.array([x.ctypes.data], np.int64)
    unrelated = np.zeros(1, np.float32)
    for backend in ("cpu", "interpreter"):
        out[:] = 0
        with knobs.override(NAIAD_BACKEND=backend):
            _through_table[(1,)](table, unrelated, out, 0, 16, 64)
        np.testing.assert_array_equal(out[:16], x)
    nowhere = np.array([64], np.int64)
    with knobs.override(NAIAD_BACKEND="interpreter"), pytest.raises(IndexError) as info:
        _through_table[(1,)](nowhere, unrelated, out, 0, 16, 64)
    assert "inside no argument of the kernel" in str(info.value)
    assert "`table`" not in str(info.value) and "`unrelated`" not in str(info.value)
