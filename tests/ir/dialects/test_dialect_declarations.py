"""Every op of Triton's TTIR fixtures is declared, and the declarations are consistent with
what the printer and parser read (formats name real fields, custom syntax is flagged)."""

import json
import re
from pathlib import Path

import pytest

import naiad.dialects
from naiad.dialects.base import EnumAttr
from naiad.ir import op_class, registered_ops

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TTIR_FILES = sorted(FIXTURES.glob("*.ttir"))  # the .source.ttir files included

# An op name where a statement starts: `%x = tt.splat`, `tt.store`, `"tt.reduce"(`.
_OP_AT_START = re.compile(r'^\s*(?:%[^=]*=\s*)?"?([a-z_]+\.[a-z_][a-z0-9_.]*)"?[\s(]')


def _ops_in_text(text: str) -> set[str]:
    names = set()
    for line in text.splitlines():
        if line.startswith("#loc") or line.lstrip().startswith("loc("):
            continue
        match = _OP_AT_START.match(line)
        if match:
            names.add(match.group(1))
    return names


def _ops_in_structure(node) -> set[str]:
    if isinstance(node, str):
        return {node}
    if isinstance(node, dict):
        found = {node["op"]} if "op" in node else set()
        for value in node.values():
            if isinstance(value, list | dict):
                found |= _ops_in_structure(value)
        return found
    if isinstance(node, list):
        return set().union(*(_ops_in_structure(n) for n in node)) if node else set()
    return set()


def test_the_fixtures_are_there():
    assert len(TTIR_FILES) >= 60


def test_every_op_in_the_fixture_text_is_declared():
    seen = set()
    for path in TTIR_FILES:
        seen |= _ops_in_text(path.read_text())
    assert {"tt.func", "tt.load", "arith.constant", "scf.for", "tt.reduce.return"} <= seen
    missing = sorted(name for name in seen if op_class(name) is None)
    assert missing == []


def test_every_op_in_the_fixture_structure_is_declared():
    seen = set()
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text())
        for key in ("ttir", "source"):
            for func in data[key]["funcs"]:
                seen |= _ops_in_structure(func["body"])
    assert "tt.dot" in seen
    missing = sorted(name for name in seen if op_class(name) is None)
    assert missing == []


def _dialect_ops():
    return [op for op in registered_ops() if op.name.partition(".")[0] in naiad.dialects.DIALECTS]


GENERIC_ONLY = {"tt.reduce", "tt.scan", "tt.map_elementwise", "ttg.warp_specialize.partitions"}


@pytest.mark.parametrize("op", _dialect_ops(), ids=lambda op: op.name)
def test_syntax_is_declared_one_way(op):
    custom = getattr(op, "custom_syntax", False)
    if op.name in GENERIC_ONLY:
        assert op.assembly_format is None and not custom
    else:
        assert (op.assembly_format is None) == custom


_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@pytest.mark.parametrize(
    "op", [op for op in _dialect_ops() if op.assembly_format], ids=lambda op: op.name
)
def test_format_variables_are_fields(op):
    fields = op._op_def.fields
    for name in _VARIABLE.findall(op.assembly_format):
        assert name in fields, f"{op.name}: ${name} is not a field"
    assert "attr-dict" in op.assembly_format


@pytest.mark.parametrize("op", _dialect_ops(), ids=lambda op: op.name)
def test_inference_rules_and_defaults_name_fields(op):
    fields = op._op_def.fields
    for target, source, _fn in getattr(op, "type_inference", ()):
        assert target in fields and source in fields
    for name, value in getattr(op, "attribute_defaults", {}).items():
        assert name in fields
        assert fields[name].constraint(value)


def test_enum_attributes_of_the_fixtures_spell_as_triton_does():
    tt = naiad.dialects.tt
    cases = {
        tt.RMWOp: ["fadd", "add", "max", "exch"],
        tt.MemSemantic: ["acq_rel", "relaxed", "acquire", "release"],
        tt.MemSyncScope: ["gpu"],
        tt.InputPrecision: ["tf32", "tf32x3"],
        tt.RoundingMode: ["rtne", "rtz"],
        tt.PropagateNan: ["none"],
        tt.ProgramIDDim: ["x", "y"],
    }
    for enum, words in cases.items():
        assert isinstance(enum, EnumAttr)
        for word in words:
            assert enum.keyword(enum.get(word)) == word
