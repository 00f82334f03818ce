"""Op structure of printed TTIR: the op names per region, in order, from a line-based scan.

MLIR prints one op per line; an op with regions ends its line with `{` and each region closes with
a line starting with `}` (`} else {`, `} do {` and `}, {` open the same op's next region); block
labels (`^bb1(...):`) start new blocks. The scan skips string literals when it counts braces, so
braces in attribute dictionaries, properties and messages do not count. Printers that leave out an
operand-less `scf.yield` (scf.for without iter_args, scf.if without results) get it back: it is in
the IR. scripts/make_ttir_fixtures.py checks every result against the walk of Triton's MLIR
bindings over the same text.

Format: `{"funcs": [FUNC, ...]}` in module order, FUNC = `{"name": sym_name, "visibility":
"public"|"private", "body": REGION}`; REGION = a list of blocks, each block a list of OPs in order;
OP = the op's full name (`arith.constant`) when it has no regions, else
`{"op": name, "regions": [REGION, ...]}`.
"""

import re

_RESULTS = re.compile(r"%[\w$.\-]+(?::\d+)?(?:\s*,\s*%[\w$.\-]+(?::\d+)?)*\s*=\s*")
_BARE_NAME = re.compile(r"[A-Za-z_][\w$.]*")
_LABEL = re.compile(r"\^[\w$.\-]+")


def _braces(line: str) -> tuple[int, int]:
    """(unmatched '}' count, unmatched '{' count) of a line, ignoring string literals."""
    closes = depth = 0
    in_string = escaped = False
    for ch in line:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            if depth:
                depth -= 1
            else:
                closes += 1
    if in_string:
        raise ValueError(f"unterminated string in line: {line!r}")
    return closes, depth


def _op_name(text: str) -> str:
    m = _RESULTS.match(text)
    rest = text[m.end() :] if m else text
    if rest.startswith('"'):
        end = rest.index('"', 1)
        return rest[1:end]
    m = _BARE_NAME.match(rest)
    if not m:
        raise ValueError(f"no op name in line: {text!r}")
    return m.group(0)


# Ops whose custom printer leaves out a region's terminator when it is an operand-less scf.yield
# (MLIR's `printBlockTerminators=false` for scf.for without iter_args and scf.if without results).
# The yield is in the IR, so the structure has it; check_structure confirms it against the bindings.
_ELIDED_YIELD = {"scf.for": "scf.yield", "scf.if": "scf.yield"}


def _add_implicit_terminator(node: dict) -> None:
    terminator = _ELIDED_YIELD.get(node["op"])
    if terminator is None:
        return
    block = node["regions"][-1][-1]
    if not block or block[-1] != terminator:
        block.append(terminator)


def parse_ops(text: str) -> dict:
    """The module's op tree from printed MLIR (one op per line, as MLIR prints): the module op as
    {"op": "builtin.module", "regions": [...], ...} (see the module docstring for the format)."""
    root = {"op": "<top>", "regions": [[[]]], "line": 0}
    stack = [root]  # ops whose regions are open; the innermost last

    def current_block():
        return stack[-1]["regions"][-1][-1]

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("//"):
            continue
        try:
            closes, opens = _braces(line)
            if closes > 1 or opens > 1:
                raise ValueError("more than one region boundary on one line")
            if _LABEL.match(line):  # a block label: ^bb1(%arg: i32 loc(...)):
                # Every block ends with a terminator, so the only empty block is a region's
                # entry block before its first op: a label there names it, elsewhere starts a block.
                region = stack[-1]["regions"][-1]
                if region[-1]:
                    region.append([])
                continue
            if closes:
                if not line.startswith("}") or len(stack) == 1:
                    raise ValueError("unexpected '}'")
                _add_implicit_terminator(stack[-1])
                if opens:  # `} else {`, `} do {`, `}, {`: the same op's next region
                    stack[-1]["regions"].append([[]])
                else:
                    stack.pop()
                continue
            op = _op_name(line)
            if op == "module":
                op = "builtin.module"
            if opens:
                node = {"op": op, "regions": [[[]]], "line": lineno}
                if op == "tt.func":
                    m = re.match(
                        r"tt\.func\s+(?:(public|private|nested)\s+)?@([\w$.\-]+|\"[^\"]*\")", line
                    )
                    node["visibility"] = m.group(1) or "public"
                    node["sym_name"] = m.group(2).strip('"')
                current_block().append(node)
                stack.append(node)
            else:
                current_block().append(op)
        except ValueError as exc:
            raise ValueError(f"line {lineno}: {exc}\n  {raw}") from None
    if len(stack) != 1:
        raise ValueError(f"unclosed region of {stack[-1]['op']} opened on line {stack[-1]['line']}")
    top = root["regions"][0][0]
    if len(top) != 1 or not isinstance(top[0], dict) or top[0]["op"] != "builtin.module":
        raise ValueError("expected exactly one top-level module")
    return top[0]


def _clean(node):
    """Drop the parser's bookkeeping: OP = name, or {"op": name, "regions": [...]}."""
    if isinstance(node, str):
        return node
    return {
        "op": node["op"],
        "regions": [[[_clean(o) for o in block] for block in region] for region in node["regions"]],
    }


def op_structure(text: str) -> dict:
    """{"funcs": [{"name", "visibility", "body"}, ...]} for every tt.func of the module."""
    module = parse_ops(text)
    funcs = []
    for block in module["regions"][0]:
        for op in block:
            name = op if isinstance(op, str) else op["op"]
            if name != "tt.func":
                raise ValueError(f"unexpected op {name} at module level")
            if len(op["regions"]) != 1:
                raise ValueError(f"tt.func @{op['sym_name']} has {len(op['regions'])} regions")
            funcs.append(
                {
                    "name": op["sym_name"],
                    "visibility": op["visibility"],
                    "body": _clean(op)["regions"][0],
                }
            )
    return {"funcs": funcs}


def flatten_post_order(structure: dict) -> list[tuple[str, tuple[int, ...]]]:
    """(op name, blocks per region) for every op, in MLIR's post-order walk order, module last."""
    out = []

    def visit(op):
        if isinstance(op, str):
            out.append((op, ()))
            return
        for region in op["regions"]:
            for block in region:
                for inner in block:
                    visit(inner)
        out.append((op["op"], tuple(len(r) for r in op["regions"])))

    for func in structure["funcs"]:
        visit({"op": "tt.func", "regions": [func["body"]]})
    out.append(("builtin.module", (1,)))
    return out
