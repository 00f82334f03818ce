"""The differential harness's generated kernels (tests/differential/test_generated.py, the
default tier's seeds) compiled for the GPU and checked against the interpreter, each output
with the tolerance table's "gpu" row for the operation that made it (naiad.testing.tolerance:
fp32 `/` within 2 ulp, exp within 78, ... exact everywhere else).

The "cuda" executor launches through `kernel[grid]` with the NumPy arrays moved to the GPU and
back as the language tier moves them (tests/language/cuda_transfer.py). Float `%` is the table's
one exception to "the interpreter is the reference": compiled for the GPU it is LLVM's `frem`,
which NVPTX expands to fma(-trunc(x / y), y, x), not C's fmod, exactly as Triton's; so the
interpreter serving as reference here computes `%` of floats by that expansion
(tests/language/exact_arithmetic.py's `gpu_float_rem`); fp32 sqrt and rsqrt flush a subnormal
input to zero as the GPU's approximations do, and everything else is as always. The kernels are
compiled with `enable_fp_fusion=False`: by default a float multiply feeding an add fuses into
one fma, rounded once where the interpreter rounds twice (seed 528's `acc + a * b` differs in
its last bit), and an add is checked bit for bit.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import sys

import numpy as np
import pytest
from gpu_helpers import ROOT, compiled, load_module  # noqa: F401 (compiled: autouse fixture)

from naiad.runtime.interpreter import elementwise
from naiad.runtime.jit import JITFunction
from naiad.testing.differential import register_executor, unregister_executor

pytestmark = pytest.mark.gpu


def _module(name: str, relative: str):
    """A test helper file as a module, once per session (the language tier's conftest may have
    imported it by its bare name already)."""
    return sys.modules.get(name) or load_module(name, ROOT / relative)


generated = _module("differential_generated", "tests/differential/test_generated.py")
cuda_transfer = _module("cuda_transfer", "tests/language/cuda_transfer.py")
exact_arithmetic = _module("exact_arithmetic", "tests/language/exact_arithmetic.py")


def run_cuda(kernel, args: dict, grid: tuple) -> dict:
    """The harness's executor for the GPU: launch compiled for it, arrays there and back, with
    `enable_fp_fusion=False` (see the module doc)."""
    launch = cuda_transfer.launch_on_cuda(JITFunction.run)
    launch(kernel, grid=tuple(grid), enable_fp_fusion=False, **args)
    return {name: value for name, value in args.items() if isinstance(value, np.ndarray)}


def gpu_remf(a, b, ty, **_):
    """The interpreter's float `%` replaced by the GPU's (see the module doc)."""
    a, b = np.broadcast_arrays(a, b)
    return exact_arithmetic.gpu_float_rem(a, b, a.dtype.name).astype(a.dtype)


def gpu_fast_root(interpreted):
    """The interpreter's sqrt or rsqrt as the GPU computes them on fp32 (`sqrt.approx.ftz`,
    `rsqrt.approx.ftz`, Triton's `tl.sqrt` and `tl.rsqrt`): a subnormal input is flushed to a
    zero of its sign first."""

    def root(a, ty, **kwargs):
        if a.dtype == np.float32:
            tiny = np.abs(a) < np.finfo(np.float32).tiny
            a = np.where(tiny, np.copysign(np.float32(0), a), a).astype(np.float32)
        return interpreted(a, ty, **kwargs)

    return root


@pytest.fixture
def cuda_executor(monkeypatch):
    register_executor("cuda", run_cuda, backend="gpu")
    monkeypatch.setitem(elementwise.BINARY, "arith.remf", gpu_remf)
    for name in ("math.sqrt", "math.rsqrt"):
        monkeypatch.setitem(elementwise.UNARY, name, gpu_fast_root(elementwise.UNARY[name]))
    yield
    unregister_executor("cuda")


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("generated_kernels_gpu")


@pytest.mark.parametrize("seed", generated.DEFAULT_SEEDS)
def test_generated_kernel_agrees_on_the_gpu(seed, kernel_dir, cuda_executor):
    generated._agree(seed, kernel_dir, ("interpreter", "cuda"))


@pytest.mark.full
@pytest.mark.parametrize("seed", generated.FULL_SEEDS)
def test_generated_kernel_agrees_on_the_gpu_full(seed, kernel_dir, cuda_executor, request):
    generated.expect_order_dependence(request, "cuda", seed)
    generated._agree(seed, kernel_dir, ("interpreter", "cuda"))
