"""Triton 3.8's own TTIR dumps (tests/ir/fixtures, see its README) read and printed back.

For each fixture `print(parse(text))` is compared with `text` byte for byte, and the parsed op
structure with the fixture's `.json`. Where the bytes cannot match, the test says why and
checks what can be checked:

- `scf.for` prints its induction variable and iteration arguments (`%k = ... iter_args(%acc_12
  = ...)`) and `scf.while` its `before` arguments without their locations (MLIR's printers do
  not print them). Triton named those values after the `NameLoc`s of those locations, which
  the text therefore does not hold: read back, the arguments get their position in the text as
  location (as MLIR's parser gives them), and the printer names them `%argN`, as Triton would
  print the module it read. Those fixtures match once every SSA name is blanked out, and the
  reprinted text is a fixed point (print(parse(print(parse(text)))) == print(parse(text))).
"""

import glob
import json
import os
import re

import pytest
from text_helpers import round_trip

from naiad.ir import verify
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
TTIR = sorted(os.path.basename(p) for p in glob.glob(os.path.join(FIXTURES, "*.ttir")))
_SSA_NAME = re.compile(r"%[\w$.\-]+")
_HIDDEN_ARGS = re.compile(r"scf\.for %|scf\.while \(")


def read(name: str) -> str:
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def test_every_fixture_is_here():
    assert len(TTIR) == 66


@pytest.mark.parametrize("name", TTIR)
def test_fixture_prints_back(name):
    text = read(name)
    module = parse_module(text, name)
    printed = print_module(module)
    if not _HIDDEN_ARGS.search(text):
        assert printed == text
        return
    # Only the names of scf.for / scf.while-before arguments may differ (module docstring).
    assert _SSA_NAME.sub("%", printed) == _SSA_NAME.sub("%", text)
    assert print_module(parse_module(printed, name)) == printed


def test_byte_exact_count():
    exact = [n for n in TTIR if print_module(parse_module(read(n), n)) == read(n)]
    hidden = [n for n in TTIR if _HIDDEN_ARGS.search(read(n))]
    assert len(exact) == len(TTIR) - len(hidden) == 38


@pytest.mark.parametrize("name", TTIR)
def test_fixture_round_trips_structurally(name):
    module = parse_module(read(name), name)
    verify(module)
    round_trip(module)
    round_trip(module, generic=True)
    round_trip(module, locations=False)


def _region(region) -> list:
    return [[_op(op) for op in block] for block in region.blocks]


def _op(op):
    return op.name if not op.regions else {"op": op.name, "regions": list(map(_region, op.regions))}


def op_structure(module) -> dict:
    funcs = []
    for op in module.body:
        assert op.name == "tt.func"
        visibility = op.attributes.get("sym_visibility")
        funcs.append(
            {
                "name": op.attributes["sym_name"].value,
                "visibility": visibility.value if visibility is not None else "public",
                "body": _region(op.regions[0]),
            }
        )
    return {"funcs": funcs}


@pytest.mark.parametrize(
    "name", sorted(n[:-5] for n in os.listdir(FIXTURES) if n.endswith(".json"))
)
def test_op_structure_matches_the_json(name):
    with open(os.path.join(FIXTURES, name + ".json")) as f:
        expected = json.load(f)
    for key, file_key in (("ttir", "ttir_file"), ("source", "source_file")):
        module = parse_module(read(expected[file_key]), expected[file_key])
        assert op_structure(module) == expected[key]


def test_elided_yields_are_in_the_ir():
    module = parse_module(read("lang_static_range.ttir"))
    loops = [op for op in module.walk() if op.name == "scf.for"]
    assert loops and all(loop.regions[0].blocks[0].last_op.name == "scf.yield" for loop in loops)


def test_argument_attributes_and_names():
    module = parse_module(read("01_vector_add.ttir"))
    func = module.body.first_op
    assert func.attributes["sym_visibility"].value == "public"
    assert str(func.attributes["arg_attrs"][0]) == "{tt.divisibility = 16 : i32}"
    arg = func.regions[0].blocks[0].arguments[0]
    assert str(arg.location) == 'loc("x_ptr"("scripts/ttir_fixture_tutorials.py":19:1))'
    assert str(func.attributes["noinline"]) == "false"
