"""Each of Triton's tutorial kernels, compiled by Naiad and run through the TTIR pipeline
(`naiad/runtime/compiler.py` TTIR_PIPELINE: inline, canonicalize, combine, cse, symbol-dce,
loop-unroll), has the op sequence per region of Triton 3.8's TTIR after its own passes (the
fixture JSON's `ttir`, read from `<fixture>.ttir`), up to the normalizations of
op_structure.normalize (constants left out of both sides, same-type casts, loop placeholders,
unreachable blocks) and the differences of `JUSTIFIED`.

A justified difference is pinned: the ops only one side has (counted by name) and the similarity
ratio of the two sequences are asserted to be exactly the recorded ones, so that a regression, or
an improvement that closes the gap, fails here and the table is updated.
"""

import difflib
from collections import Counter

import pytest
from fixture_kernels import FIXTURES, compile_fixture, fixture
from op_structure import drop_dead_blocks, fixture_structure, flatten, module_structure, normalize
from ttir_op_structure import op_structure

import naiad.passes  # noqa: F401  (registers the passes)
from naiad import ir
from naiad.ir import PassManager
from naiad.runtime.compiler import TTIR_PIPELINE

TUTORIALS = [
    "01_vector_add",
    "02_fused_softmax",
    "03_matmul",
    "04_dropout",
    "04_seeded_dropout",
    "05_layer_norm_fwd",
    "05_layer_norm_bwd_dx",
    "05_layer_norm_bwd_dwdb",
    "06_fused_attention",
    "06_fused_attention_noncausal",
    "06b_fused_attention_block_ptr",
]

# fixture -> (reason, ops only Triton has, ops only Naiad has, similarity ratio to 4 places)
JUSTIFIED = {
    "04_seeded_dropout": (
        "Philox: Naiad folds tt.mulhiui of a constant 0 (the first round's zero counter) and the "
        "arith.xori with the 0 it gives; Triton has no folder for tt.mulhiui.",
        {"tt.mulhiui": 1, "arith.xori": 1},
        {},
        0.9924,
    ),
}


def _ttir_after_naiad_pipeline(record):
    module = compile_fixture(record)  # the fixture's signature, constexprs, attrs, target and debug
    PassManager(list(TTIR_PIPELINE), verify_each=True).run(module)
    ir.verify(module)
    return module_structure(module)["funcs"]


def _lines(blocks) -> list:
    return [line for block in blocks for line in [*flatten(block), "-- end of block"]]


def _sequences(name):
    record = fixture(name)
    text = (FIXTURES / f"{name}.ttir").read_text()
    assert op_structure(text) == record["ttir"], "the .ttir file is the JSON's `ttir`"
    theirs = fixture_structure(text)["funcs"]
    mine = _ttir_after_naiad_pipeline(record)
    assert [f["name"] for f in mine] == [f["name"] for f in theirs]
    got, expected = [], []
    for my_func, their_func in zip(mine, theirs):
        assert my_func["visibility"] == their_func["visibility"]
        got += _lines([normalize(b, drop_sanitizer=False) for b in my_func["body"]])
        their_body = drop_dead_blocks(their_func["body"])
        expected += _lines([normalize(b, drop_sanitizer=False) for b in their_body])
    return got, expected


def _op_names(lines) -> Counter:
    """The ops of `_lines`, by name (without the region ends and the block ends)."""
    ops = (line.strip().removesuffix(" {") for line in lines)
    return Counter(op for op in ops if not op.startswith(("}", "--")))


def test_justified_fixtures_are_tutorials():
    assert set(JUSTIFIED) <= set(TUTORIALS)


@pytest.mark.parametrize("name", TUTORIALS)
def test_pipeline_matches_triton_ttir(name):
    got, expected = _sequences(name)
    diff = "\n".join(difflib.unified_diff(expected, got, "triton", "naiad", lineterm=""))
    if name not in JUSTIFIED:
        assert got == expected, diff
        return
    _, triton_only, naiad_only, ratio = JUSTIFIED[name]
    assert got != expected, f"{name} now matches Triton: remove it from JUSTIFIED"
    mine, theirs = _op_names(got), _op_names(expected)
    measured = difflib.SequenceMatcher(None, expected, got, autojunk=False).ratio()
    assert dict(theirs - mine) == triton_only, diff
    assert dict(mine - theirs) == naiad_only, diff
    assert round(measured, 4) == ratio, diff
