"""The loops of a function in x86 assembly text, and what the innermost loop around an
instruction holds: the function cut into basic blocks at its labels, their edges (jumps and
fall-throughs), dominators, and the natural loop of each edge back to a dominator. Tests count
instructions per iteration with it where whole-function counts cannot tell a loop's body from
the code before and after it (test_matmul_amx.py)."""

import re
from collections import Counter

_LABEL = re.compile(r"^\.LBB\w+:")
_FUNCTION = re.compile(r"^[A-Za-z_][\w.]*:")
_JUMP = re.compile(r"j\w+\s+(\.LBB\w+)")


def _blocks(asm: str, function: str) -> list[tuple[str, list[str]]]:
    """(label, instructions) of each basic block of `function`, in the listing's order."""
    lines = asm.splitlines()
    start = lines.index(f"{function}:")
    blocks, name, body = [], function, []
    for line in lines[start + 1 :]:
        if _FUNCTION.match(line) or line.startswith(".Lfunc_end"):
            break
        text = line.strip()
        if _LABEL.match(line):
            blocks.append((name, body))
            name, body = line[:-1], []
        elif text and not text.startswith((".", "#")):
            body.append(text)
    blocks.append((name, body))
    return blocks


def _successors(blocks) -> dict[int, set[int]]:
    index = {name: i for i, (name, _) in enumerate(blocks)}
    successors = {i: set() for i in range(len(blocks))}
    for i, (_, body) in enumerate(blocks):
        for text in body:
            jump = _JUMP.match(text)
            if jump and jump.group(1) in index:
                successors[i].add(index[jump.group(1)])
        if not (body and body[-1].startswith(("jmp", "ret"))) and i + 1 < len(blocks):
            successors[i].add(i + 1)
    return successors


def _dominators(successors) -> dict[int, set[int]]:
    """Of each block reachable from the entry (block 0), the blocks that dominate it."""
    predecessors = {i: {p for p in successors if i in successors[p]} for i in successors}
    reached, work = {0}, [0]
    while work:
        for s in successors[work.pop()] - reached:
            reached.add(s)
            work.append(s)
    dominators = {i: set(reached) for i in reached}
    dominators[0] = {0}
    changed = True
    while changed:
        changed = False
        for i in reached - {0}:
            above = [dominators[p] for p in predecessors[i] if p in reached]
            new = {i} | set.intersection(*above)
            changed |= new != dominators[i]
            dominators[i] = new
    return dominators


def _loops(successors) -> dict[int, set[int]]:
    """Each loop header's blocks: the natural loops of its back edges, merged."""
    dominators = _dominators(successors)
    predecessors = {i: {p for p in dominators if i in successors[p]} for i in dominators}
    loops: dict[int, set[int]] = {}
    for latch in dominators:
        for header in successors[latch] & dominators[latch]:
            body, work = {header, latch}, [latch]
            while work:
                for p in predecessors[work.pop()] - body:
                    body.add(p)
                    work.append(p)
            loops.setdefault(header, set()).update(body)
    return loops


def innermost_loop_counts(asm: str, function: str, around: str, words) -> Counter:
    """How often each of `words` begins an instruction of the innermost loop of `function`
    that holds an instruction `around` (a mnemonic); empty where no loop holds one."""
    blocks = _blocks(asm, function)
    loops = _loops(_successors(blocks))
    holding = [i for i, (_, body) in enumerate(blocks) if any(t.startswith(around) for t in body)]
    candidates = [body for body in loops.values() if any(i in body for i in holding)]
    if not candidates:
        return Counter()
    inner = min(candidates, key=len)
    return Counter(
        word for i in inner for text in blocks[i][1] for word in words if text.split()[0] == word
    )
