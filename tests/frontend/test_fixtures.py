"""Every kernel of Triton's TTIR fixtures (`tests/ir/fixtures/`: the tutorials and the `lang_*`
kernels) compiles, verifies, prints and parses back, and its op sequence per region equals the
one Triton 3.8's frontend built (`<fixture>.source.ttir`, before any pass) up to the differences
listed here, each with its reason.

Differences the normalization removes everywhere (op_structure.normalize):

- `arith.constant`s are left out of both sides: Triton sometimes makes a constant twice (a dead
  `to_tensor` of a Python scalar, then the constant in the computation type) and constants come
  in a different order.
- Triton's overflow check of every int32 add/sub/mul (64-bit operation, two compares, an and) is
  emitted even outside debug mode, where its assert is dropped: dead code. Naiad's semantic emits
  the check, with its `tt.assert`, in debug mode only (`lang_debug_ops` compares it).
- A bitcast to the same IR type (`arith.bitcast %x : i32 to i32` for an int32 -> uint32 cast,
  `tt.bitcast` of a value to its own type) is nothing in Naiad: integers are signless.
- A value bitcast is `arith.bitcast` in Naiad's semantic and `tt.bitcast` in Triton's.
- Triton's `ub.poison` placeholder for a loop's induction variable, before each `scf.for`.
- The unreachable blocks Triton leaves after a `return` (`ub.poison`s and a `tt.return`).

Differences of particular kernels (below): tensor descriptors, early return, the sort of the
standard library.
"""

import difflib

import pytest
from fixture_kernels import FIXTURE_NAMES, FIXTURES, compile_fixture, fixture
from op_structure import (
    drop_dead_blocks,
    fixture_structure,
    flatten,
    is_dead_tail,
    module_structure,
    normalize,
)

from naiad import ir
from naiad.ir import parser, printer
from naiad.ir.equality import assert_structurally_equal

NAMES = FIXTURE_NAMES

# Tensor descriptors are values of the language in Naiad (naiad/language/memory.py): a descriptor
# is its base pointer, int64 shape and strides, and a load or store through it is the block of
# pointers and the bounds mask of a block pointer, so every back end sees one kind of memory
# access. Triton keeps `tt.make_tensor_descriptor`, `tt.descriptor_load`/`_store` (TMA on Hopper).
# Each such op of Triton's stands for Naiad's ops below (rank 2, every dimension bound-checked).
_DIMENSION = ["tt.make_range", "arith.extsi", "arith.extsi", "tt.splat", "arith.addi"]
_DIMENSION += ["tt.expand_dims", "tt.broadcast", "tt.splat", "arith.muli"]
_BOUNDS = ["arith.cmpi", "tt.splat", "arith.cmpi", "arith.andi"]
_BLOCK_2D = [*_DIMENSION, "tt.splat", "tt.addptr", *_BOUNDS, *_DIMENSION, "tt.addptr", *_BOUNDS]
DESCRIPTOR_OPS = {
    # Naiad widens the shape and the strides to int64 (4 `arith.extsi`, rank 2); Triton only
    # the strides that are not constants, in the `arith.extsi`s just before the op.
    "tt.make_tensor_descriptor": ["arith.extsi"] * 4,
    "tt.descriptor_load": [*_BLOCK_2D, "arith.andi", "arith.truncf", "tt.load"],
    "tt.descriptor_store": [*_BLOCK_2D, "arith.andi", "tt.store"],
}
# A host descriptor's last stride is the constant 1 (frontend/specialization.py), where
# Triton's is an argument: its multiply takes a constant, not a `tt.splat` of the argument.
_BLOCK_2D_HOST = [*_BLOCK_2D[: -len(_BOUNDS) - 3], "arith.muli", "tt.addptr", *_BOUNDS]
HOST_DESCRIPTOR_OPS = {
    **DESCRIPTOR_OPS,
    "tt.descriptor_load": [*_BLOCK_2D_HOST, "arith.andi", "arith.truncf", "tt.load"],
    "tt.descriptor_store": [*_BLOCK_2D_HOST, "arith.andi", "tt.store"],
}
HOST_DESCRIPTOR_FIXTURES = {"06_fused_attention_host_descriptors"}
# Made in the kernel over memory the specialization proves aligned, a descriptor compiled for
# Hopper (the fixtures' target) is Triton's op (frontend/tensor_maps.py), and so are its loads
# and stores; its int64 shape and strides for the pointer accesses come first.
IN_KERNEL_MAP_OPS = {
    "tt.make_tensor_descriptor": ["arith.extsi"] * 4 + ["tt.make_tensor_descriptor"]
}
IN_KERNEL_MAP_FIXTURES = {
    "lang_tensor_descriptor",
    "06_fused_attention",  # made by a jit helper, which returns the map with the descriptor
    "06_fused_attention_noncausal",
}
DESCRIPTOR_FIXTURES = {
    "06_fused_attention",
    "06_fused_attention_noncausal",
    "06_fused_attention_host_descriptors",
    "lang_tensor_descriptor",
}

# `if c: return x` in the middle of a function: Triton branches to `cf` blocks (a `cf.cond_br`,
# a block returning, the rest of the function in another block). Naiad keeps control flow
# structured, as docs/frontend.md says: the rest of the function is the `else` of an `scf.if`
# that yields what each side returns, and the function returns the `scf.if`'s results.
EARLY_RETURN_FIXTURES = {"lang_early_return"}

# `tl.sort` is the standard library's own code in each (a bitonic network written differently,
# same results), so only the kernel's own functions are compared.
OWN_FUNCTIONS_ONLY = {"lang_sort"}


def _base_name(name: str) -> str:
    """`ttir_fixture_kernels._axpy__fp32_...` -> `_axpy` (the module paths differ)."""
    return name.split("__")[0].rsplit(".", 1)[-1]


def _is_kernel_code(name: str) -> bool:
    return "." not in name or name.startswith(("ttir_fixture_kernels.", "fixture_kernels.lang."))


def _substitute(ops: list, table: dict) -> list:
    out, substituted = [], 0  # out[:substituted] holds replacements, never popped
    for op in ops:
        if op == "tt.make_tensor_descriptor":
            while len(out) > substituted and out[-1] == "arith.extsi":
                out.pop()
        if isinstance(op, str) and op in table:
            out += table[op]
            substituted = len(out)
        elif isinstance(op, str):
            out.append(op)
        else:
            regions = [[_substitute(block, table) for block in region] for region in op["regions"]]
            out.append({"op": op["op"], "regions": regions})
    return out


def _structured_early_return(region: list) -> list:
    entry, then, skip, dead, rest = region
    assert entry[-1] == "cf.cond_br" and skip == dead == ["cf.br"], region
    branches = [[then[:-1] + ["scf.yield"]], [rest[:-1] + ["scf.yield"]]]
    return [entry[:-1] + [{"op": "scf.if", "regions": branches}, "tt.return"]]


def _triton_expected(name, record, func) -> list:
    if name in EARLY_RETURN_FIXTURES:
        body, unreachable = func["body"][:5], func["body"][5:]
        assert all(is_dead_tail(block) for block in unreachable)
        body = _structured_early_return(body)
    else:
        body = drop_dead_blocks(func["body"])
    blocks = [normalize(b, drop_sanitizer=not record["debug"]) for b in body]
    if name in DESCRIPTOR_FIXTURES:
        table = HOST_DESCRIPTOR_OPS if name in HOST_DESCRIPTOR_FIXTURES else DESCRIPTOR_OPS
        table = IN_KERNEL_MAP_OPS if name in IN_KERNEL_MAP_FIXTURES else table
        blocks = [_substitute(b, table) for b in blocks]
    return blocks


def _compared(name, funcs):
    if name in OWN_FUNCTIONS_ONLY:
        return [f for f in funcs if _is_kernel_code(f["name"])]
    return funcs


@pytest.mark.parametrize("name", NAMES)
def test_fixture_kernel_matches_triton_frontend(name):
    record = fixture(name)
    module = compile_fixture(record)
    ir.verify(module)
    mine = _compared(name, module_structure(module)["funcs"])
    text = (FIXTURES / f"{name}.source.ttir").read_text()
    theirs = _compared(name, fixture_structure(text)["funcs"])
    assert [_base_name(f["name"]) for f in mine] == [_base_name(f["name"]) for f in theirs]
    for my_func, their_func in zip(mine, theirs):
        assert my_func["visibility"] == their_func["visibility"]
        got = [normalize(block, drop_sanitizer=False) for block in my_func["body"]]
        expected = _triton_expected(name, record, their_func)
        got, expected = _lines(got), _lines(expected)
        assert got == expected, f"@{my_func['name']}:\n" + "\n".join(
            difflib.unified_diff(expected, got, "triton", "naiad", lineterm="")
        )


def _lines(blocks) -> list:
    return [line for block in blocks for line in [*flatten(block), "-- end of block"]]


@pytest.mark.parametrize("name", NAMES)
def test_fixture_kernel_prints_and_parses_back(name):
    """parse(print(M)) is M: ops, types, attributes, regions, and every printed location."""
    module = compile_fixture(fixture(name))
    printed = set()
    text = printer.print_module(module, record=printed)
    again = parser.parse_module(text, f"{name}.mlir")
    ir.verify(again)
    assert_structurally_equal(module, again, locations=printed.__contains__)


def test_normalization_reads_the_fixtures_as_their_json():
    """The scan of `.source.ttir` (before the bitcast renaming) is the JSON's `source`."""
    from ttir_op_structure import op_structure

    for name in NAMES:
        text = (FIXTURES / f"{name}.source.ttir").read_text()
        assert op_structure(text) == fixture(name)["source"], name
