"""A pointer tensor's addresses in the PTX: `base + sext(offset) * size` is one `mad.wide`, not a
`mul.wide` whose 64-bit product only an `add.s64` reads (target.MAD_WIDE says why: ptxas
schedules the pairs' loops worse). The fusion is exact, so the CPU's values are the check that
the kernel still reads and writes the right elements."""

import re

import numpy as np
from test_toolchain import assemble, needs_ptxas

import naiad
import naiad.language as tl


@naiad.jit
def _strided_copy(dst, src, rows, stride, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.arange(0, BLOCK_C)
    mask = r[:, None] < rows
    tile = tl.load(src + r[:, None] * stride + c[None, :], mask=mask)
    tl.store(dst + r[:, None] * BLOCK_C + c[None, :], tile * 2, mask=mask)


def _lone_widening_products(ptx: str) -> list[str]:
    """The `mul.wide` results that one `add.s64` reads and nothing else: the pairs MAD_WIDE
    folds."""
    found = []
    for product in re.findall(r"mul\.wide\.[su]32\s+(%rd\d+),", ptx):
        uses = re.findall(rf"^\s*(\S+).*{re.escape(product)}\b", ptx, re.MULTILINE)
        if uses[1:] and all(op == "add.s64" for op in uses[1:]) and len(uses) == 2:
            found.append(product)
    return found


@needs_ptxas
def test_addresses_are_one_mad_wide_each(tmp_path):
    src = np.zeros((64, 64), np.float16)
    dst = np.zeros((64, 64), np.float16)
    compiled = _strided_copy.warmup(
        dst, src, 64, 64, BLOCK_R=16, BLOCK_C=64, grid=(4,), target="cuda:sm_90a"
    )
    ptx = compiled.asm["ptx"]
    assert "mad.wide.s32" in ptx
    assert _lone_widening_products(ptx) == []
    assemble(ptx, "sm_90a", tmp_path)


def test_the_strided_copy_s_values_on_the_cpu():
    rng = np.random.default_rng(3)
    rows, stride = 37, 80
    src = rng.standard_normal((rows, stride)).astype(np.float16)
    dst = np.full((rows, 64), -1, np.float16)
    _strided_copy[(3,)](dst, src, rows, stride, BLOCK_R=16, BLOCK_C=64)
    np.testing.assert_array_equal(dst, src[:, :64] * np.float16(2))
