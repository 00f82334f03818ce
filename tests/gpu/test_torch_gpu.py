"""PyTorch integration on the GPU (issue 17), the CPU tier's programs (tests/torch/programs) run
with NAIAD_TORCH_DEVICE=cuda under `python -m naiad.run`: Naiad kernels inside
torch.compile(fullgraph=True) through wrap_triton and triton_op, also replayed as CUDA graphs
(`mode="reduce-overhead"`), and Inductor's generated Triton kernels for CUDA compiled by Naiad,
each against eager.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import sys

import pytest
from gpu_helpers import ROOT

pytestmark = pytest.mark.gpu

sys.path.insert(0, str(ROOT / "tests" / "torch"))
from test_user_kernels import USER_KERNELS, run_program  # noqa: E402

ON_CUDA = {"NAIAD_BACKEND": "auto", "NAIAD_TORCH_DEVICE": "cuda"}


@pytest.mark.parametrize(
    "backend, mode", [("aot_eager", None), ("inductor", None), ("inductor", "reduce-overhead")]
)
def test_user_kernels_in_torch_compile_on_cuda(backend, mode):
    args = [backend] + ([mode] if mode else [])
    assert run_program("user_kernels.py", *args, **ON_CUDA) == USER_KERNELS


def test_inductor_kernels_on_cuda_through_naiad():
    cases = ["pointwise", "softmax", "layer_norm_gelu", "odd_reductions", "mlp", "block"]
    seen = run_program("inductor_cpu.py", *cases, **ON_CUDA)
    assert seen.pop("inductor sees triton") == "True"
    expected = {case: "True True" if case in ("mlp", "block") else "True" for case in cases}
    assert seen == expected
