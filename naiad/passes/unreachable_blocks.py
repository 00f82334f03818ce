"""Erase blocks that no branch reaches: a region's blocks other than its entry, without
predecessors (Triton's frontend leaves one after every `return`). MLIR's canonicalizer simplifies
regions this way; the inliner relies on it, since most callees are then one block again."""

from __future__ import annotations

from ..ir import Operation


def erase_unreachable_blocks(root: Operation) -> bool:
    """Erase unreachable blocks in every region under `root`; return whether any was erased."""
    erased = False
    for op in list(root.walk()):
        for region in op.regions:
            while True:
                reached = {s for block in region.blocks for s in block.successors}
                dead = [b for b in region.blocks[1:] if b not in reached]
                if not dead:
                    break
                for block in dead:
                    for inner in reversed(list(block)):
                        inner.erase(force=True)
                    block.erase()
                erased = True
    return erased
