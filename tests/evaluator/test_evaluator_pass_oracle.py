"""The evaluator as the oracle of the TTIR passes: every registered pass (and a pipeline of them)
runs over every fixture module, and the module after it must store exactly what the module
before it stored, on the same random inputs (ARCHITECTURE.md, "The IR"): bit for bit, except
for the floats of passes that may reassociate (`combine`), compared within a tolerance.

Each pass also keeps its own differential test; this one sweeps every fixture at once, so a new
pass is checked the day it is registered. Skipped while the passes or the parser are missing.
"""

import functools

import numpy as np
import pytest
from evaluator_fixture_cases import CASES
from evaluator_helpers import (
    FIXTURES,
    bits,
    fixture_kernel_name,
    parse_fixture,
    run_evaluator,
)


def _registered_passes() -> list[str]:
    """The TTIR passes (naiad/passes/): not the back ends' passes, which take TTGIR or produce
    Linalg, nor the toy passes other test modules register, whichever were imported first."""
    try:
        import naiad.passes  # noqa: F401 (registers them)
        from naiad.ir import registered_passes
        from naiad.ir.passes import pass_class
    except ImportError:
        return []
    return [n for n in registered_passes() if pass_class(n).__module__.startswith("naiad.passes.")]


@functools.cache
def _before(name: str, variant: str):
    """What the fixture module stores, unchanged (computed once for every pipeline)."""
    case = CASES[name]
    module = parse_fixture(FIXTURES / f"{name}{variant}")
    return run_evaluator(module, fixture_kernel_name(name), case, _args(name))


def _args(name: str) -> dict:
    return CASES[name].args(np.random.default_rng(len(name)))


# Passes that may change float rounding: `combine` turns an add of a dot, and a sum of products,
# into one dot, as Triton's does. Floats after them are compared within a tolerance.
REASSOCIATING = {"combine"}
FULL = ["inline", "canonicalize", "combine", "cse", "licm", "loop-unroll", "dce", "symbol-dce"]

# The whole pipeline (every pass) runs in the default tier; each pass alone under `-m full`.
PIPELINES = [pytest.param([name], id=name, marks=pytest.mark.full) for name in _registered_passes()]
PIPELINES.append(pytest.param(FULL, id=",".join(FULL)))


def _same(before, after, loose: bool) -> bool:
    if loose and before.dtype.kind == "f":
        wide = (x.astype(np.float64) for x in (after, before))
        return np.allclose(*wide, rtol=1e-5, atol=1e-5, equal_nan=True)
    return np.array_equal(bits(before), bits(after))


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_passes_keep_what_every_fixture_stores(pipeline):
    from naiad.ir import PassManager, registered_passes

    missing = [name for name in pipeline if name not in registered_passes()]
    if missing:
        pytest.skip(f"pass(es) {missing} not registered yet")
    loose = bool(REASSOCIATING & set(pipeline))
    changed = []
    for name, case in sorted(CASES.items()):
        for variant in (".source.ttir", ".ttir"):
            path = FIXTURES / f"{name}{variant}"
            before = _before(name, variant)
            module = parse_fixture(path)
            PassManager(pipeline, verify_each=True).run(module)
            after = run_evaluator(module, fixture_kernel_name(name), case, _args(name))
            changed += [
                f"{path.name}: {key}"
                for key, value in before.items()
                if not _same(value, after[key], loose)
            ]
    assert not changed, f"{'+'.join(pipeline)} changed what these store: {changed}"
