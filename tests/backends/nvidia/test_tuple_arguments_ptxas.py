"""Tuple arguments on the NVIDIA path without a GPU: a kernel taking tuples (nested, a
NamedTuple, with constant leaves) compiles for sm_80 and sm_90a, its PTX assembles, and its
parameters are the tuples' runtime leaves in order. The launcher's side is
tests/runtime/test_cuda_tuple_arguments.py's; values on a GPU, tests/language's."""

from typing import NamedTuple

from test_lowering import assembled_ptx, count
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl


class Strided(NamedTuple):
    ptr: object
    stride: object


@naiad.jit
def gather_rows(out_ptr, views, sizes, BLOCK: tl.constexpr):
    """out[r, :] = views[r].ptr[offs * views[r].stride] for each view r."""
    offs = tl.arange(0, BLOCK)
    mask = offs < sizes[0]
    for r in tl.static_range(len(views)):
        row = tl.load(views[r].ptr + offs * views[r].stride, mask=mask, other=sizes[1][0])
        tl.store(out_ptr + r * BLOCK + offs, row, mask=mask)


@needs_ptxas
def test_a_kernel_of_tuples_assembles_with_its_leaves_as_parameters(tmp_path):
    """Leaves: out, two (pointer, stride) views (the second's stride the constant 1), the size,
    a float; None is no parameter."""
    views = (Strided("*fp32", "i32"), Strided("*fp32", 1))
    args = ("*fp32", views, ("i32", ("fp32", None)))
    texts = assembled_ptx(gather_rows, args, {"BLOCK": 128}, tmp_path)
    for text in texts.values():
        (entry,) = [t for t in text.split(".entry")[1:]]
        header = entry.split("{")[0]
        assert count(r"\.param \.u64", header) == 3
        assert count(r"\.param \.(u32|f32|b32)", header) == 3
