"""One row of bench/gpu/tensor_cores.py: the same launch through three compilers, checked, then
timed.

The three columns (VARIANTS): Naiad; Triton as it compiles by default (on Hopper, `wgmma` where a
config allows it); Triton forced to `mma.sync` by the environment variable DISABLE_MMA_V3=1.
Triton reads that variable in its C++ passes at each compile (and keys its disk cache on it), not
at launch, and its JIT functions keep what they compiled in memory keyed without it: so the
mma.sync column launches its own copy of the module (own JIT functions, own memory cache), and
its first launch, which compiles, runs with the variable set (`mma_sync`). Each column's PTX says
which instruction it got (`instruction`).
"""

from __future__ import annotations

import contextlib
import math
import os

import torch
import triton.testing

VARIANTS = ("naiad", "triton_mma", "triton")
DEVICE = "cuda"  # where the rows' tensors are made (a test of the plumbing may say "cpu")
TITLES = {"naiad": "Naiad", "triton_mma": "Triton mma.sync", "triton": "Triton default"}


@contextlib.contextmanager
def mma_sync():
    """Triton's compiles inside choose `mma.sync` over `wgmma` (DISABLE_MMA_V3=1)."""
    before = os.environ.get("DISABLE_MMA_V3")
    os.environ["DISABLE_MMA_V3"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["DISABLE_MMA_V3"]
        else:
            os.environ["DISABLE_MMA_V3"] = before


def modules(through, path) -> dict:
    """The module at `path` loaded once per variant (`through` is bench/gpu/kernels.py's): the
    mma.sync column's is a copy of its own (a tagged file), so its JIT functions are too."""
    return {
        "naiad": through(path, "naiad"),
        "triton": through(path, "triton"),
        "triton_mma": through(path, "triton", tag="_mma"),
    }


def instruction(ptx: str) -> str:
    """The matrix instruction family a kernel's PTX uses."""
    if "wgmma.mma_async" in ptx:
        return "wgmma"
    if "mma.sync" in ptx:
        return "mma.sync"
    return "none"


def kernel_facts(compiled) -> dict:
    """Registers, spills (4-byte words of local memory per thread) and matrix instruction of a
    compiled kernel, Naiad's or Triton's (Triton counts once the kernel is loaded, which its
    first launch did). Facts that cannot be read are left out: they describe, never decide."""
    facts = {}
    if compiled is None:
        return facts
    try:
        asm = compiled.asm
        facts["instruction"] = instruction(asm["ptx"]) if "ptx" in asm else "?"
        if type(compiled).__module__.startswith("triton") and not hasattr(compiled, "n_regs"):
            compiled._init_handles()
        facts["n_regs"] = getattr(compiled, "n_regs", None)
        facts["n_spills"] = getattr(compiled, "n_spills", None)
    except Exception as exc:
        facts["facts_error"] = short(exc)
    return facts


def short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:240]}"


def first_launch(variant: str, launch, output, poison, verify, tol: float) -> dict:
    """Compile and run `launch` once into `output` poisoned first, then check it: the column's
    facts, relative error and status ("ok", "FAIL" or the error)."""
    column = {"status": "ok"}
    try:
        output.fill_(poison)
        with mma_sync() if variant == "triton_mma" else contextlib.nullcontext():
            compiled = launch()
        if DEVICE == "cuda":
            torch.cuda.synchronize()
        column.update(kernel_facts(compiled))
        error = verify(output)
        column["rel_err"] = error
        if not error <= tol:  # NaN fails too
            column["status"] = "FAIL"
        elif variant == "triton_mma" and column.get("instruction") == "wgmma":
            column["status"] = "FAIL"  # DISABLE_MMA_V3 did not reach the compile
            column["note"] = "wgmma despite DISABLE_MMA_V3=1"
    except Exception as exc:  # the row goes on without this column, saying why
        column["status"] = short(exc)
    return column


def interleaved(launches: dict, rounds: int) -> dict:
    """do_bench medians (ms) of each launch, the launches taken in turn, best of `rounds`."""
    best = {name: math.inf for name in launches}
    failed = {}
    for _ in range(rounds):
        for name, launch in launches.items():
            if name in failed:
                continue
            try:
                best[name] = min(best[name], triton.testing.do_bench(launch, return_mode="median"))
            except Exception as exc:
                failed[name] = short(exc)
    return {name: (failed.get(name) or best[name]) for name in launches}


def measure(launches: dict, outputs: dict, poison, verify, tol: float, flops, rounds: int):
    """A row: each variant's first launch checked (`first_launch`), the ones that pass timed
    (`interleaved`); TFLOP/s and the ratios Naiad / Triton of each Triton column."""
    row = {}
    for variant in VARIANTS:
        if variant in launches:
            row[variant] = first_launch(
                variant, launches[variant], outputs[variant], poison, verify, tol
            )
    passed = {v: launches[v] for v, column in row.items() if column["status"] == "ok"}
    for variant, ms in interleaved(passed, rounds).items():
        if isinstance(ms, str):
            row[variant]["status"] = ms
        else:
            row[variant].update(ms=ms, tflops=flops / ms / 1e9)
    return with_ratios(row)


def config_rows(case, configs, make_launches, outputs, poison, verify, tol, rounds, emit):
    """`measure` each config of `case` (`make_launches(config)`: its launch per variant), then
    the best of them, passing each row to `emit`; a config that raises is a row saying so."""
    rows = []
    for config in configs:
        try:
            timed = measure(make_launches(config), outputs, poison, verify, tol, case.flops, rounds)
            rows.append({"case": case.label, "config": config.label, **timed})
            emit(rows[-1])
        except Exception as exc:  # this config's row says why; the next one runs
            emit({"case": case.label, "config": config.label, "error": short(exc)})
    emit({"case": case.label, "config": "best", **best_of(rows)})


def with_ratios(row: dict) -> dict:
    """`row` with "vs_<variant>": Naiad's TFLOP/s over that Triton column's (> 1: Naiad faster)."""
    naiad = row.get("naiad", {}).get("tflops")
    for variant in ("triton_mma", "triton"):
        theirs = row.get(variant, {}).get("tflops")
        row[f"vs_{variant}"] = naiad / theirs if naiad and theirs else None
    return row


def best_of(rows: list) -> dict:
    """The best-of-configs row: each column's fastest config among `rows` (dicts of `measure`),
    and which config that was."""
    best = {}
    for variant in VARIANTS:
        timed = [r for r in rows if r.get(variant, {}).get("tflops")]
        if timed:
            source = max(timed, key=lambda r, v=variant: r[v]["tflops"])
            best[variant] = {**source[variant], "config": source["config"]}
        else:
            best[variant] = {"status": "no config ran"}
    return with_ratios(best)
