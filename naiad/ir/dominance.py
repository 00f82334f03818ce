"""Dominance between the blocks of a CFG region (Cooper, Harvey and Kennedy, "A Simple, Fast
Dominance Algorithm"): the verifier walks a region in dominator-tree order, so a value is
visible exactly in the blocks its definition dominates."""

from __future__ import annotations

from .block import Block, Region


def dominator_tree(region: Region) -> dict[Block, list[Block]]:
    """The children of each block reachable from the entry in the dominator tree."""
    order = _reverse_post_order(region.blocks[0])
    position = {block: i for i, block in enumerate(order)}
    predecessors: dict[Block, list[Block]] = {block: [] for block in order}
    for block in order:
        for succ in block.successors:
            if succ in predecessors:
                predecessors[succ].append(block)
    idom: dict[Block, Block] = {order[0]: order[0]}
    changed = True
    while changed:
        changed = False
        for block in order[1:]:
            preds = [p for p in predecessors[block] if p in idom]
            new = preds[0]
            for p in preds[1:]:
                new = _intersect(p, new, idom, position)
            if idom.get(block) is not new:
                idom[block] = new
                changed = True
    children: dict[Block, list[Block]] = {block: [] for block in order}
    for block in order[1:]:
        children[idom[block]].append(block)
    return children


def _intersect(a: Block, b: Block, idom: dict, position: dict) -> Block:
    while a is not b:
        while position[a] > position[b]:
            a = idom[a]
        while position[b] > position[a]:
            b = idom[b]
    return a


def _reverse_post_order(entry: Block) -> list[Block]:
    seen = {entry}
    post: list[Block] = []
    stack = [(entry, iter(entry.successors))]
    while stack:
        block, successors = stack[-1]
        for succ in successors:
            if succ not in seen and succ.parent is entry.parent:
                seen.add(succ)
                stack.append((succ, iter(succ.successors)))
                break
        else:
            stack.pop()
            post.append(block)
    return post[::-1]
