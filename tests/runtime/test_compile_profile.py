"""NAIAD_PROFILE_COMPILE's table and the slow-compile notice (naiad/compile_profile.py, issue 18).

A CPU compile with the setting on prints one table on stderr: every stage of the trip, the
CPU back end's steps inside `llir` indented, the load, and a total; without it nothing is
printed. A compile running past `SLOW_SECONDS` says which kernel and which stage, setting or not.
Each kernel's result is checked against NumPy, so the profiled compile is a working one.
"""

import re

import numpy as np

import naiad
import naiad.language as tl
from naiad import compile_profile, knobs


@naiad.jit
def _scaled_add(X, Y, Z, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    tl.store(Z + offs, x * alpha + y, mask=mask)


def _launch_and_check(kernel_fn, seed):
    rng = np.random.default_rng(seed)
    x, y = (rng.uniform(-4, 4, 300).astype(np.float32) for _ in range(2))
    z = np.full(300, np.nan, np.float32)
    kernel_fn[(3,)](x, y, z, 300, 1.5, BLOCK=128)
    np.testing.assert_allclose(z, x * np.float32(1.5) + y, rtol=1e-6)


STAGES = [
    "TTIR cache lookup",
    "AST → TTIR",
    "TTIR passes",
    "cache lookup",
    "ttgir",
    "linalg",
    "llir",
    "  cpu passes",
    "  code generation",
    "  LLVM parse, verify",
    "  LLVM optimize",
    "obj",
    "load",
    "total",
]


def test_the_table_lists_every_stage(capfd):
    kernel_fn = naiad.jit(_scaled_add.fn)  # a JIT function of its own: nothing loaded yet
    with knobs.override(NAIAD_BACKEND="cpu", NAIAD_PROFILE_COMPILE="1", NAIAD_ALWAYS_COMPILE="1"):
        _launch_and_check(kernel_fn, seed=1)
    err = capfd.readouterr().err
    assert "naiad: compile profile of `_scaled_add` for cpu" in err
    rows = re.findall(r"^  (\S.*?|\s+\S.*?)\s+([\d.]+)\s+([\d.]+)$", err, re.M)
    assert [name.rstrip() for name, _, _ in rows] == STAGES
    for column in (1, 2):  # wall, CPU
        times = [float(row[column]) for row in rows]
        assert min(times) >= 0 and times[-1] >= max(times[:-1])


def test_nothing_is_printed_without_the_setting(capfd):
    kernel_fn = naiad.jit(_scaled_add.fn)
    with knobs.override(NAIAD_BACKEND="cpu", NAIAD_PROFILE_COMPILE="0", NAIAD_ALWAYS_COMPILE="1"):
        _launch_and_check(kernel_fn, seed=2)
    assert "compile profile" not in capfd.readouterr().err


def test_a_slow_compile_says_what_it_is_doing(capfd, monkeypatch):
    monkeypatch.setattr(compile_profile, "SLOW_SECONDS", 0.05)
    kernel_fn = naiad.jit(_scaled_add.fn)
    with knobs.override(NAIAD_BACKEND="cpu", NAIAD_ALWAYS_COMPILE="1"):
        _launch_and_check(kernel_fn, seed=3)
    err = capfd.readouterr().err
    notices = re.findall(
        r"naiad: still compiling `_scaled_add` for cpu after \d+ s, in (.*) \(", err
    )
    assert notices, err
    # a notice names the open stage, or says the timer fired between two of them
    known = {s.strip() for s in STAGES} | {"between stages"}
    assert all(where.split(" > ")[0] in known for where in notices), err
