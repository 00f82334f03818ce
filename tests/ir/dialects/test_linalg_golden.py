"""Golden files of the `linalg` and `tensor` ops: tests/middle/golden/linalg_*.mlir and
tensor_*.mlir hold, hand-checked, the text upstream MLIR prints for these modules (TensorOps.td's
formats and `custom<DynamicIndexList>` lists; LinalgOps.cpp's printers: iterator types as
strings, `attrs = ` before extra attributes, the space after a `dimensions = [...]` list,
`%in` / `%out` / `%init` block arguments; getAsmResultNames' `%extracted_slice`, `%reduced`;
values of nested regions numbered after their parent's).

Each file reads, verifies and prints back unchanged; the result, the generic form and the
form with locations read back structurally equal (locations included); xDSL reads and
verifies it, the ops it lacks (`linalg.map`, `linalg.batch_matmul`, `tensor.generate`,
`tensor.bitcast`; a map's body there is more than one op, so that upstream too prints the long
form) passed to it opaque."""

from pathlib import Path

import pytest
from middle.upstream import XDSL_MISSING, assert_upstream_valid

from naiad.ir import verify
from naiad.ir.equality import assert_structurally_equal
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module

GOLDEN = Path(__file__).resolve().parents[2] / "middle" / "golden"
FILES = sorted([*GOLDEN.glob("linalg_*.mlir"), *GOLDEN.glob("tensor_*.mlir")])

NOT_FOR_XDSL = {
    "linalg_several_results": (
        "upstream parenthesizes several result types (`-> (t1, t2)`); xDSL 0.74 reads one"
    ),
}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_file_prints_back_unchanged(path):
    text = path.read_text()
    module = parse_module(text, str(path))
    verify(module)
    printed = print_module(module, locations=False)
    assert printed == text
    assert_structurally_equal(module, parse_module(printed), locations=False)
    generic = print_module(module, generic=True, locations=False)
    assert_structurally_equal(module, parse_module(generic), locations=False)
    printed_locations = set()
    located = print_module(module, record=printed_locations)
    again = parse_module(located, "again.mlir")
    assert_structurally_equal(module, again, locations=printed_locations.__contains__)
    if path.stem not in NOT_FOR_XDSL:
        missing = {op.name for op in module.walk() if op.name in XDSL_MISSING}
        assert_upstream_valid(printed, allow=missing)


def test_every_op_has_a_golden_file():
    names = {op.name for path in FILES for op in parse_module(path.read_text()).walk()}
    ops = {
        "linalg": "generic yield index map reduce broadcast transpose fill matmul batch_matmul "
        "copy",
        "tensor": "empty extract insert extract_slice insert_slice expand_shape collapse_shape "
        "reshape from_elements splat cast dim bitcast generate yield concat",
    }
    expected = {f"{d}.{name}" for d, names_ in ops.items() for name in names_.split()}
    assert expected <= names, sorted(expected - names)
