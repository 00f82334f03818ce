"""Op structure of a module in the format of the fixtures' JSON (`tests/ir/fixtures/README.md`),
and the normalization that makes Naiad's and Triton's frontend output comparable.

A function is `{"name", "visibility", "body"}`, a region a list of blocks, a block a list of ops,
an op its name or `{"op": name, "regions": [...]}`. `normalize` removes from a structure what
the comparison ignores on purpose; each rule is one documented difference between Triton 3.8's
frontend and Naiad's (test_fixtures.py lists them all).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from naiad.dialects import tt

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from ttir_op_structure import op_structure  # the fixtures' own scanner


def module_structure(module) -> dict:
    return {
        "funcs": [
            {
                "name": func.sym_name.value,
                "visibility": func.sym_visibility.value if func.sym_visibility else "public",
                "body": _region(func.body),
            }
            for func in module.body
            if isinstance(func, tt.FuncOp)
        ]
    }


def _region(region) -> list:
    return [[_op(op) for op in block] for block in region.blocks]


def _op(op):
    if not op.regions:
        return op.name
    return {"op": op.name, "regions": [_region(r) for r in op.regions]}


# -- Triton's text, with the casts the names alone cannot tell apart -----------------------------
_BITCAST = re.compile(r"= (arith|tt)\.bitcast %[\w$.\-#]+ : (.+?) (?:to|->) (.+?)(?: loc\(|$)")


def fixture_structure(text: str) -> dict:
    """The op structure of a fixture's `.source.ttir`, read as the fixtures' JSON was (the same
    scanner), with two renamings that need the types: a bitcast to its own type (Triton's int
    cast between signednesses of one width, `arith.bitcast %x : i32 to i32`, or a `tt.bitcast`
    of a value to its own type) is `noop.cast`, which Naiad does not emit; a `tt.bitcast` of
    non-pointers is `arith.bitcast`, the op Naiad's semantic names for a value bitcast."""
    lines = []
    for line in text.splitlines():
        m = _BITCAST.search(line)
        if m:
            dialect, source, result = m.groups()
            if source == result:
                line = line.replace(f"{dialect}.bitcast", "noop.cast", 1)
            elif dialect == "tt" and "!tt.ptr" not in source:
                line = line.replace("tt.bitcast", "arith.bitcast", 1)
        lines.append(line)
    return op_structure("\n".join(lines))


# -- normalization -------------------------------------------------------------------------------
# The int32 overflow check Triton's frontend emits before every int add/sub/mul when
# `sanitize_overflow` is on, even outside debug mode, where its `tt.assert` is then dropped
# (dead code, removed by canonicalize). Naiad's semantic emits the check only in debug mode.
_EXTEND = {"arith.extsi", "arith.extui"}
_SANITIZER = (_EXTEND, _EXTEND, {"arith.addi", "arith.subi", "arith.muli"})
_SANITIZER += ({"arith.cmpi"}, {"arith.cmpi"}, {"arith.andi"})


def normalize(ops: list, *, drop_sanitizer: bool) -> list:
    """A block's ops without constants (their number and order differ: Triton sometimes makes
    a constant twice), casts to the same type, Triton's dead overflow checks (outside debug
    mode) and its placeholder for a loop's induction variable; nested regions likewise."""
    ops = [_normalize_op(op, drop_sanitizer) for op in ops]
    ops = [op for op in ops if op not in ("arith.constant", "noop.cast")]
    if drop_sanitizer:
        ops = _drop_pattern(ops, _SANITIZER)
    return _drop_loop_placeholders(ops)


def _normalize_op(op, drop_sanitizer):
    if isinstance(op, str):
        return op
    regions = [
        [normalize(block, drop_sanitizer=drop_sanitizer) for block in region]
        for region in op["regions"]
    ]
    return {"op": op["op"], "regions": regions}


def _drop_pattern(ops, pattern) -> list:
    out, i = [], 0
    while i < len(ops):
        window = ops[i : i + len(pattern)]
        if len(window) == len(pattern) and all(
            isinstance(op, str) and op in allowed for op, allowed in zip(window, pattern)
        ):
            i += len(pattern)
            continue
        out.append(ops[i])
        i += 1
    return out


def _drop_loop_placeholders(ops) -> list:
    """Triton makes an `ub.poison` placeholder for a loop's induction variable before the loop
    (replaced, then left dead)."""
    out = []
    for op in ops:
        if isinstance(op, dict) and op["op"] == "scf.for" and out and out[-1] == "ub.poison":
            out.pop()
        out.append(op)
    return out


def drop_dead_blocks(region: list) -> list:
    """A function body without the unreachable blocks Triton's frontend leaves after a
    `return` (`ub.poison`s and a `tt.return`, or a lone `cf.br`)."""
    if len(region) > 1 and all(is_dead_tail(block) for block in region[1:]):
        return region[:1]
    return region


def is_dead_tail(block) -> bool:
    """A block only Triton's dead code after a `return` fills (poison values, a return)."""
    names = [op for op in block if isinstance(op, str)]
    return len(names) == len(block) and set(names) <= {"ub.poison", "tt.return", "arith.constant"}


def flatten(ops: list, depth: int = 0) -> list:
    """A block as lines (`  ` per nesting level), for readable diffs."""
    lines = []
    for op in ops:
        if isinstance(op, str):
            lines.append("  " * depth + op)
            continue
        lines.append("  " * depth + op["op"] + " {")
        for region in op["regions"]:
            for block in region:
                lines += flatten(block, depth + 1)
            lines.append("  " * depth + "} ---")
    return lines
