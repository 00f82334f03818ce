"""A tensor descriptor's fp16/bf16 `atomic_max` / `atomic_min` on the NVIDIA path, without a
GPU: PTX has no 16-bit float `atom.max`/`atom.min`, so each element is a compare-and-swap loop
(lowering/atomics.py, the loop that also adds bf16 before sm_90) whose step is `max.NaN` /
`min.NaN` (llvm.maximum / llvm.minimum: IEEE 754-2019's, as the interpreter's atomics). The
PTX of sm_90a and sm_80 assembles with ptxas and holds the loop: one load, the combine, the
`cas.b16` and the branch back while another thread changed the element.

The frontend takes these atomics as Triton does: for CUDA from sm_90 on (Hopper's bulk tensor
reduction there), refused for sm_80; the TTIR of an sm_90a compile still lowers for sm_80, as
any `tt.atomic_rmw max` on 16-bit floats in an IR file does. The values: on the GPU
(tests/gpu/test_atomics16_gpu.py).
"""

import re

import ml_dtypes
import numpy as np
import pytest
from fixture_kernels.half_extremes import race_into_block
from test_lowering import assemble
from test_toolchain import needs_ptxas

from naiad.errors import CompilationError
from naiad.runtime.compiler import compile_options
from naiad.runtime.ir_files import compile_ir_text
from naiad.tools.tensor_descriptor import TensorDescriptor

_NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}


def _compile(kind: str, op: str, descriptor: str, target: str):
    a = np.ones((40, 96), _NP[kind])
    desc = TensorDescriptor.from_tensor(a, [16, 64]) if descriptor == "host" else None
    args = (desc, a, np.ones((4, 16, 64), _NP[kind]), 40, 96, 8, 16, op, 16, 64)
    return race_into_block.warmup(*args, grid=(4,), target=target)


def _loops(ptx: str, kind: str, op: str) -> list[str]:
    """The compare-and-swap loops of `ptx`: from each loop label to its branch back."""
    loops = re.findall(r"(\$L__BB\d+_\d+):\n(.*?)bra\s+\1;", ptx, re.S)
    return [body for _, body in loops if f"{op}.NaN.{kind}" in body]


def _check_loops(ptx: str, kind: str, op: str) -> None:
    # 16 x 64 elements, 128 threads, 8 registers a thread, each its own loop.
    loops = _loops(ptx, kind, op)
    assert len(loops) == 8, ptx
    for body in loops:
        assert re.search(r"atom\.release\.gpu\.global\.cas\.b16", body)
        assert re.search(r"setp\.ne\.b16", body)  # again while the swap saw other bits
    assert f"atom.global.gpu.release.{op}" not in ptx  # no such 16-bit float atom


@needs_ptxas
@pytest.mark.parametrize("descriptor", ["host", "kernel"])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_sm_90a_loops_assemble(kind, op, descriptor, tmp_path):
    ptx = _compile(kind, op, descriptor, "cuda:sm_90a").asm["ptx"]
    assemble(ptx, "sm_90a", tmp_path)
    _check_loops(ptx, kind, op)


@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_sm_80_refuses_them_as_triton(kind):
    with pytest.raises(CompilationError, match=r"bulk tensor reduction.*cuda:sm_80"):
        _compile(kind, "max", "kernel", "cuda:sm_80")


@needs_ptxas
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_their_ttir_lowers_for_sm_80(kind, op, tmp_path):
    ttir = _compile(kind, op, "kernel", "cuda:sm_90a").asm["ttir"]
    assert f"tt.atomic_rmw {op}, release, gpu" in ttir
    ptx = compile_ir_text(ttir, "race.ttir", "cuda:sm_80", compile_options()).asm["ptx"]
    assemble(ptx, "sm_80", tmp_path)
    _check_loops(ptx, kind, op)
