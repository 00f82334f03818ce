"""wgmma's matrix descriptors stay with the loop of their dot (PTX for sm_90a, no GPU). A buffer
filled once and read by the dots of two loops, the first of a constant trip count (no guard
before it), as attention backward reads K and V in its masked and unmasked loops: every
instruction's descriptors are computed inside the loop that issues it, where ptxas keeps them
in uniform registers; computed once above the first loop and held through both, nvJitLink
spilled them and reloaded one per instruction."""

import re

import pytest

import naiad
import naiad.language as tl


@naiad.jit
def _two_loops_one_buffer(
    k_ptr, q_ptr, out_ptr, STEPS, FIRST: tl.constexpr, N: tl.constexpr, D: tl.constexpr
):
    """out = sum over FIRST + STEPS tiles of k q_i^T: `k` is stored once, before both loops."""
    rn = tl.arange(0, N)
    rm = tl.arange(0, 16)
    rd = tl.arange(0, D)
    k = tl.load(k_ptr + rn[:, None] * D + rd[None, :])
    acc = tl.zeros([N, 16], dtype=tl.float32)
    for step in range(FIRST):
        q_t = tl.load(q_ptr + (step * 16 + rm)[None, :] * D + rd[:, None])
        acc += tl.dot(k, q_t)
    for step in range(STEPS):
        q_t = tl.load(q_ptr + ((step + FIRST) * 16 + rm)[None, :] * D + rd[:, None])
        acc += tl.dot(k, q_t)
    tl.store(out_ptr + rn[:, None] * 16 + rm[None, :], acc)


def _loops(ptx: str) -> list[list[str]]:
    """The instruction lines of each loop (a label and a later branch back to it)."""
    lines = ptx.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines) if (m := re.match(r"^(\$L\w+):", line))}
    loops = []
    for i, line in enumerate(lines):
        m = re.search(r"bra(?:\.uni)?\s+(\$L\w+);", line)
        if m and labels.get(m.group(1), i) < i:
            loops.append(lines[labels[m.group(1)] : i + 1])
    return loops


def _defined(body: list[str]) -> set[str]:
    """The registers an instruction of `body` writes (its first operand)."""
    return {m.group(1) for line in body if (m := re.match(r"\s*[\w.]+\s+(%\w+),", line))}


@pytest.mark.parametrize("d", [64, 128])
def test_each_loop_computes_the_descriptors_of_its_dots(d):
    compiled = _two_loops_one_buffer.warmup(
        "*fp16", "*fp16", "*fp32", 5, FIRST=8, N=128, D=d, num_warps=4, num_stages=3, grid=(1,),
        target="cuda:sm_90a",
    )  # fmt: skip
    loops = _loops(compiled.asm["ptx"])
    assert len(loops) == 2
    for body in loops:
        issued = [m.groups() for line in body if (m := _WGMMA.search(line))]
        assert len(issued) == 2 * d // 16  # two row blocks of m64, one instruction per K step
        inside = _defined(body)
        assert all(a in inside and b in inside for a, b in issued)


_WGMMA = re.compile(r"wgmma\.mma_async\S* \{[^}]*\}, (%rd\d+), (%rd\d+),")
