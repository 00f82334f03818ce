"""Triton's own TTIR, read back, passes Naiad's verifiers: every fixture (after Triton's passes
and as its code generator built it) parses into the declared ops and verifies."""

from pathlib import Path

import pytest

import naiad.dialects  # noqa: F401 (registers the ops)
from naiad.ir import UnregisteredOp, verify

parser = pytest.importorskip("naiad.ir.parser")

FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures").glob("*.ttir"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_verifies(path):
    module = parser.parse_module(path.read_text(), str(path))
    verify(module)
    ops = list(module.walk())
    assert "tt.func" in {op.name for op in ops}
    assert not [op.name for op in ops if isinstance(op, UnregisteredOp)]
