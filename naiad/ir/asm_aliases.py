"""Attribute aliases: `#blocked = #ttg.blocked<{...}>` at the top of a module, `#blocked` at
every use, as MLIR prints the attributes a dialect names (its OpAsmDialectInterface `getAlias`).

A dialect attribute class asks for aliases by setting `alias_prefix` (`"blocked"`). The printer
writes the module with every attribute spelled in full, then `apply_aliases` finds the
aliasable attributes the module holds and substitutes them. Names and order follow MLIR:
aliases are sorted by depth (an alias whose text uses another comes after it), then by prefix,
then by where the text first uses them; within a prefix they are numbered in that order
(`#blocked`, `#blocked1`, ..., `#blocked10`). The parser reads such definitions already.
"""

from __future__ import annotations

from .attributes import _DIALECT_ATTRIBUTES
from .interning import Interned


def _markers() -> tuple[str, ...]:
    """The text every aliasable attribute starts with (`#ttg.blocked`): a module whose text
    holds none of them needs no walk."""
    return tuple(
        f"#{c.dialect}.{c.mnemonic}"
        for c in _DIALECT_ATTRIBUTES.values()
        if getattr(c, "alias_prefix", None)
    )


def apply_aliases(root, text: str) -> tuple[list[tuple[int, str, str]], str]:
    """(definitions, text): the alias definitions to print before the module, each as
    (depth, prefix, line) in order, and `text` with every aliased attribute replaced by its
    alias. `merge_definitions` interleaves them with the location aliases."""
    if not any(marker in text for marker in _markers()):
        return [], text
    found = _collect(root)
    if not found:
        return [], text
    depth: dict = {}
    for attr in found:
        _depth(attr, depth)
    spelled = {a: str(a) for a in found}
    position = {a: _position(text, spelled[a]) for a in found}
    ordered = sorted(found, key=lambda a: (depth[a], a.alias_prefix, position[a]))
    counts: dict[str, int] = {}
    names = {}
    for attr in ordered:
        count = counts.get(attr.alias_prefix, 0)
        counts[attr.alias_prefix] = count + 1
        names[attr] = "#" + attr.alias_prefix + (str(count) if count else "")
    # Outer attributes first: their full text contains their parameters' text.
    by_depth = sorted(ordered, key=lambda a: -depth[a])
    for attr in by_depth:
        text = text.replace(spelled[attr], names[attr])
    definitions = []
    for attr in ordered:
        body = spelled[attr]
        for inner in by_depth:
            if depth[inner] < depth[attr]:
                body = body.replace(spelled[inner], names[inner])
        definitions.append((depth[attr], attr.alias_prefix, f"{names[attr]} = {body}\n"))
    return definitions, text


def merge_definitions(attributes: list, locations: list[tuple[int, str]]) -> str:
    """The alias lines before the module in MLIR's order: by depth, then by prefix (`loc`
    among the attributes' prefixes), each group in its own order. `locations` holds the
    location aliases' (depth, line), depth 1 for a leaf."""
    entries = list(attributes) + [(d - 1, "loc", line) for d, line in locations]
    entries.sort(key=lambda e: (e[0], e[1]))  # stable: each group keeps its order
    return "".join(line for _, _, line in entries)


def _position(text: str, spelling: str) -> int:
    found = text.find(spelling)
    return len(text) if found < 0 else found


def _collect(root) -> list:
    """The aliasable attributes that `root` and the ops nested in it hold, in their types,
    attributes and block arguments, nested parameters included."""
    items: set = set()
    for op in root.walk():
        items.update(op.attributes.values())
        for r in op.results:
            items.add(r.type)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    items.add(arg.type)
    seen: set = set()
    found: dict = {}
    for item in items:
        _visit(item, seen, found)
    return list(found)


def _visit(item, seen: set, found: dict) -> None:
    if isinstance(item, Interned):
        if item in seen:
            return
        seen.add(item)
        if getattr(item, "alias_prefix", None):
            found[item] = None
        for name in item._params:
            _visit(getattr(item, name), seen, found)
    elif isinstance(item, tuple | list):
        # Skip scalar payloads (a dense constant's elements) without walking them.
        if item and isinstance(item[0], tuple | list | Interned):
            for x in item:
                _visit(x, seen, found)
    elif isinstance(item, dict):
        for x in item.values():
            _visit(x, seen, found)


def _depth(attr, memo: dict) -> int:
    """0 for an alias whose text uses no other alias, else one more than the deepest it uses."""
    if attr in memo:
        return memo[attr]
    deepest = -1
    stack = [getattr(attr, n) for n in attr._params]
    while stack:
        item = stack.pop()
        if isinstance(item, Interned):
            if getattr(item, "alias_prefix", None):
                deepest = max(deepest, _depth(item, memo))
            else:
                stack.extend(getattr(item, n) for n in item._params)
        elif isinstance(item, tuple | list) and item and isinstance(item[0], tuple | Interned):
            stack.extend(item)
    memo[attr] = deepest + 1
    return deepest + 1
