"""wgmma's matrix descriptors as the lowering writes them (LLVM IR of `ttng.warp_group_dot`,
sm_90a): each operand of a dot has one address field (its first element's shared address / 16,
through a `mov` with side effects that LLVM keeps at the dot) and every instruction's
descriptor is that field plus one 64-bit constant, so ptxas sees one value per operand rather
than one per block, made where the dot is (attention backward's loop-invariant K, V, Q and dO
buffers had every block's descriptor held across its loops, spilled; the PTX of two loops:
test_wgmma_loop_descriptors.py). The descriptors are evaluated for buffers placed anywhere in
shared memory against the descriptor of each block's own address: the K step moves 32 bytes
along a K-major row, 16 rows of an M- or N-major buffer."""

import re

import numpy as np
import pytest
from test_pipeline_loads import DOT_KERNELS

import naiad.language as tl
from naiad.backends.nvidia.lowering import lower_module
from naiad.ir.parser import parse_module

_SHIFT = re.compile(r"^\s*(%\w+) = lshr i32 (%\w+), 4$")
_FIELD = re.compile(r"^\s*(%\w+) = and i32 (%\w+), 16383$")
_KEPT = re.compile(
    r'^\s*(%\w+) = call i32 asm sideeffect "mov\.b32 \$0, \$1;", "=r,r"\(i32 (%\w+)\)$'
)
_WIDE = re.compile(r"^\s*(%\w+) = zext i32 (%\w+) to i64$")
_BLOCK = re.compile(r"^\s*(%\w+) = add i64 (%\w+), (\d+)$")
_WGMMA = re.compile(r"wgmma\.mma_async.*\(i64 (%\w+), i64 (%\w+), ")
_SWIZZLE = {1: 128, 2: 64, 3: 32}


def _descriptors(llvm: str) -> list[tuple[tuple[str, int], tuple[str, int]]]:
    """Per wgmma instruction, (kept field, constant) of its A and B descriptors, traced back
    through the lowering's add and widening to the kept field, and from it through the mask
    to the shifted address."""
    defs = {}
    for pattern in (_SHIFT, _FIELD, _KEPT, _WIDE, _BLOCK):
        for line in llvm.splitlines():
            if m := pattern.match(line):
                defs[m.group(1)] = (pattern, m.groups()[1:])

    def trace(name: str) -> tuple[str, int]:
        value, constants, names = name, [], []
        for pattern in (_BLOCK, _WIDE, _KEPT, _FIELD, _SHIFT):
            got, operands = defs[value]
            assert got is pattern
            value, constants, names = operands[0], constants + list(operands[1:]), names + [value]
        return names[2], int(constants[0])  # the kept field (the asm's result)

    return [(trace(a), trace(b)) for a, b in _WGMMA.findall(llvm)]


def _lowered(a_k_major: bool, b_k_major: bool) -> str:
    compiled = DOT_KERNELS.dot_majors.warmup(
        "*fp16", "*fp16", "*fp32", M=64, N=32, K=64, A_K_MAJOR=a_k_major,
        B_K_MAJOR=b_k_major, OUT=tl.float32, num_warps=4, grid=(1,), target="cuda:sm_90a",
    )  # fmt: skip
    return lower_module(parse_module(compiled.asm["ttgir"]), "cuda:sm_90a")


@pytest.mark.parametrize("a_k_major", [True, False])
@pytest.mark.parametrize("b_k_major", [True, False])
def test_blocks_are_constants_added_to_one_field_per_operand(a_k_major, b_k_major):
    """A 64 x 64 (f16) times 64 x 32: four K steps, one instruction each. A's rows hold 64
    elements (128 bytes) whichever its major order; B's 64 along K, 32 (64 bytes) along N."""
    instructions = _descriptors(_lowered(a_k_major, b_k_major))
    assert len(instructions) == 4
    strides = [32 if a_k_major else 16 * 128, 32 if b_k_major else 16 * 64]
    swizzles = [128, 128 if b_k_major else 64]
    gen = np.random.default_rng(int(a_k_major) * 2 + int(b_k_major))
    for operand in range(2):
        blocks = [instruction[operand] for instruction in instructions]
        assert len({field for field, _ in blocks}) == 1  # one field per operand
        bits = blocks[0][1]  # the constant part: the first block sits at the field itself
        assert bits >> 62 in _SWIZZLE and _SWIZZLE[bits >> 62] == swizzles[operand]
        assert (bits >> 32 & 0x3FFF) << 4 == 8 * swizzles[operand]  # 8 rows of the swizzle
        for start in gen.integers(0, 200, size=20) * 1024:
            for k, (_, constant) in enumerate(blocks):
                got = ((int(start) >> 4) & 0x3FFF) + constant
                moved = int(start) + k * strides[operand]
                assert got == (bits & ~0x3FFF) | ((moved >> 4) & 0x3FFF)
