"""A kernel compiled from a TTIR file, launched on the GPU as Triton launches one
(runtime/ir_file_launch.py): `compiled[grid](*args)` with the function's parameters in order,
on the current torch stream or the one given; the values against float64.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import pytest
import torch
from fixture_kernels.ir_files import SIGNATURE, scale_add

from naiad.triton.backends.compiler import GPUTarget
from naiad.triton.compiler import ASTSource, compile

pytestmark = pytest.mark.gpu


def test_a_ttir_file_kernel_launches_on_the_gpu(tmp_path):
    major, minor = torch.cuda.get_device_capability()
    target = GPUTarget("cuda", 10 * major + minor, 32)
    source = ASTSource(scale_add, SIGNATURE, constexprs={"BLOCK": 256})
    path = tmp_path / "scale_add.ttir"
    path.write_text(compile(source, target=target).asm["ttir"])
    kernel = compile(str(path), target=target, options={"num_warps": 4})

    x, y = (torch.randn(1000, device="cuda") for _ in range(2))
    expected = 2.5 * x.double() + y.double()
    out = torch.full_like(x, float("nan"))
    kernel[(4, 1, 1)](x, y, out, 1000, 2.5)
    torch.cuda.synchronize()
    torch.testing.assert_close(out.double(), expected, rtol=1e-6, atol=1e-6)

    side = torch.cuda.Stream()
    out.fill_(float("nan"))
    torch.cuda.synchronize()
    kernel[(4,)](x, y, out, 1000, 2.5, stream=side.cuda_stream)
    side.synchronize()
    torch.testing.assert_close(out.double(), expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(TypeError, match="takes 5 arguments"):
        kernel[(4,)](x, y, out, 1000)
