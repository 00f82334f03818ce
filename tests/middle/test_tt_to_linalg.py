"""`tt-to-linalg` on every kernel of the fixture suite, as Naiad's own frontend compiles it and
as Triton's own TTIR dumps hold it (tensor descriptors included): the Linalg form verifies, reads
back structurally equal, is upstream MLIR (xDSL parses and verifies it, ops xDSL lacks
excepted), and the tutorials' memory accesses are structured (strided views, no
element-by-element gathers or scatters; a scalar pointer's load or store is fine)."""

import pytest
from fixture_kernels import FIXTURE_NAMES, FIXTURES, compile_fixture, fixture
from middle.upstream import (
    XDSL_GENERIC_ONLY,
    XDSL_MISSING,
    assert_round_trip,
    assert_upstream_valid,
)

import naiad.passes  # noqa: F401
from naiad.backends.cpu.compiler import LINALG_PIPELINE, TARGET_TTIR_PIPELINE
from naiad.ir import verify
from naiad.ir.parser import parse_module
from naiad.passes.pipeline import run_pipeline
from naiad.runtime.compiler import TTIR_PIPELINE

NAMES = FIXTURE_NAMES

# Kernels whose every block load and store is structured. The matmul tutorial's pointers
# advance in the K loop and wrap with `% M`: carried by their start, read run by run; the
# attention tutorials' descriptors become boxes `0 <= offs < n`.
STRUCTURED = {name for name in NAMES if name[0].isdigit()}
TRITON_TTIR = sorted(p for p in FIXTURES.glob("*.ttir") if not p.name.endswith(".source.ttir"))
FILECHECK_CASES = FIXTURES.parent / "conversion" / "tt-to-linalg.mlir"


def _linalg(name):
    ttir = compile_fixture(fixture(name))
    run_pipeline(TTIR_PIPELINE, ttir)
    run_pipeline(TARGET_TTIR_PIPELINE + LINALG_PIPELINE, ttir)
    return ttir


def _assert_upstream_linalg(module) -> None:
    verify(module)
    text = assert_round_trip(module)
    used = {op.name for op in module.walk()}
    assert not {n for n in used if n.startswith("tt.")}, "TTIR ops left in the Linalg form"
    allow = used & (XDSL_MISSING.keys() | XDSL_GENERIC_ONLY.keys())
    assert_upstream_valid(text, allow)


@pytest.mark.parametrize("name", NAMES)
def test_linalg_form_is_upstream_mlir(name):
    _assert_upstream_linalg(_linalg(name))


@pytest.mark.parametrize("path", TRITON_TTIR, ids=[p.stem for p in TRITON_TTIR])
def test_tritons_own_ttir_converts_structured(path):
    module = parse_module(path.read_text(), str(path))
    run_pipeline(TARGET_TTIR_PIPELINE + LINALG_PIPELINE, module)
    _assert_upstream_linalg(module)
    ops = list(module.walk())
    assert not [op for op in ops if _is_gather(op) or _is_scatter(op)], "an element-wise access"


def _is_gather(op) -> bool:
    """A `memref.load` in the body of a `linalg.generic`: a block read element by element."""
    if op.name != "memref.load":
        return False
    parent = op.parent_op()
    while parent is not None and parent.name != "linalg.generic":
        parent = parent.parent_op()
    return parent is not None


def _is_scatter(op) -> bool:
    """A `memref.store` at a position read from a block of offsets at the induction variables
    of the loops around it: the element loop nest of a block written element by element."""
    if op.name != "memref.store":
        return False
    position = op.indices[0].defining_op
    if position is not None and position.name == "arith.index_cast":
        position = position.operands[0].defining_op
    if position is None or position.name != "tensor.extract":
        return False
    return all(_is_induction_variable(v) for v in position.operands[1:])


def _is_induction_variable(value) -> bool:
    if value.defining_op is not None or value.index != 0:
        return False
    loop = value.owner.parent_op()
    return loop is not None and loop.name == "scf.for"


@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_tutorial_accesses_are_strided_views(name):
    ops = list(_linalg(name).walk())
    assert "memref.reinterpret_cast" in {op.name for op in ops}
    assert not [op for op in ops if _is_gather(op)], "a block load read element by element"
    assert not [op for op in ops if _is_scatter(op)], "a block store written element by element"


def test_filecheck_cases_are_upstream_mlir():
    """The hand-written cases of tests/ir/conversion (descriptors, prints, wraps, ...), except
    the one keeping `tt.extern_elementwise` (a function of the target's math library)."""
    module = parse_module(FILECHECK_CASES.read_text(), str(FILECHECK_CASES))
    run_pipeline(TARGET_TTIR_PIPELINE + LINALG_PIPELINE, module)
    (kept,) = [f for f in module.regions[0].entry_block if f.sym_name.value == "tt_elementwise"]
    kept.erase()
    _assert_upstream_linalg(module)
