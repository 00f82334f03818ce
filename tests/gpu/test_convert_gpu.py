"""`ttg.convert_layout` on the GPU, along each plan (renumber, shuffles within warps, the
vectorized and swizzled round trip through shared memory, whole and in rounds), for i1, i8,
f16, f32, f64 and pointers; and kernels whose pipelines convert (tl.trans, a row sum broadcast
back, a dot stored, permute / reshape), against NumPy.

The single-conversion kernels are the TTGIR of tests/backends/nvidia/test_convert_lowering.py
(a tile loaded in one layout, converted, stored from the other), linked and launched through
`driver.CubinKernel`; the values must come back bit for bit.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import numpy as np
import pytest
import torch
from gpu_helpers import ROOT, compiled, load_module  # noqa: F401 (compiled: autouse fixture)

from naiad.backends.nvidia import driver, link, ptx
from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.lowering import lower_module
from naiad.runtime.driver import active

pytestmark = pytest.mark.gpu

cases = load_module(
    "gpu_convert_cases", ROOT / "tests" / "backends" / "nvidia" / "test_convert_lowering.py"
)

_TORCH = {
    "i1": torch.int8,
    "i8": torch.int8,
    "f16": torch.float16,
    "f32": torch.float32,
    "f64": torch.float64,
    "ptr": torch.float32,
}
_SIGNATURE = {
    torch.int8: "*i8",
    torch.float16: "*fp16",
    torch.float32: "*fp32",
    torch.float64: "*fp64",
}


def _target():
    major, minor = torch.cuda.get_device_capability()
    return nv_target.target_for_capability(major, minor)


def _random(shape, dtype, gen):
    if dtype == torch.int8:
        return torch.randint(-128, 128, shape, generator=gen, dtype=torch.int8)
    return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("element", cases.ELEMENTS)
@pytest.mark.parametrize("pair", sorted(cases.PAIRS))
def test_one_conversion_keeps_every_element(pair, element):
    module = cases.convert_module(pair, element)
    target = _target()
    code = ptx.compile_ptx(
        lower_module(module, target), target, cuda_version=driver.driver_version()
    )
    cubin = link.link(code.text, code.entry, target)
    dtype = _TORCH[element]
    shared = module.attributes["ttg.shared"].value
    kernel = driver.CubinKernel(cubin.data, code.entry, (_SIGNATURE[dtype],) * 2, shared=shared)
    shape = cases.PAIRS[pair][2]
    gen = torch.Generator().manual_seed(sum(map(ord, pair + element)))
    x = _random(shape, dtype, gen).cuda()
    y = torch.full(shape, 77, dtype=dtype, device="cuda")  # poisoned
    kernel.launch((1,), (x, y), active.get_current_stream(torch.cuda.current_device()))
    torch.cuda.synchronize()
    expected = (x != 0).to(torch.int8) if element == "i1" else x
    assert torch.equal(y.cpu(), expected.cpu())


def test_a_conversion_in_rounds_keeps_every_element():
    """Tutorial 03's 128 x 256 f32 accumulator to its store layout, allocated for sm_86's 99
    KiB: two rounds through 64 KiB, every element bit for bit."""
    module = cases.rounds_module()
    target = _target()
    code = ptx.compile_ptx(
        lower_module(module, target), target, cuda_version=driver.driver_version()
    )
    cubin = link.link(code.text, code.entry, target)
    shared = module.attributes["ttg.shared"].value
    assert shared == 128 * 256 * 4 // 2
    warps = module.attributes["ttg.num-warps"].value
    kernel = driver.CubinKernel(
        cubin.data, code.entry, ("*fp32",) * 2, num_warps=warps, shared=shared
    )
    gen = torch.Generator().manual_seed(86)
    x = _random((128, 256), torch.float32, gen).cuda()
    y = torch.full((128, 256), 77, dtype=torch.float32, device="cuda")  # poisoned
    stream = active.get_current_stream(torch.cuda.current_device())
    kernel.launch((1,), (x, y), stream)
    torch.cuda.synchronize()
    assert torch.equal(y.cpu(), x.cpu())
    # The kernel requires its 8 warps (`.reqntid`): launched with 4 it is refused, where it
    # once ran half of each tile and left the rest unwritten.
    fewer = driver.CubinKernel(cubin.data, code.entry, ("*fp32",) * 2, num_warps=4, shared=shared)
    with pytest.raises(driver.CudaError, match="cuLaunchKernel"):
        fewer.launch((1,), (x, y), stream)


def _kernel_args(name: str, gen):
    """(inputs, output, NumPy reference) of KERNELS[name]."""
    _, _, c, _, _ = cases.KERNELS[name]
    if name.startswith("transpose"):
        dtype = torch.float16 if name == "transpose" else torch.float64
        x = _random((c["M"], c["N"]), dtype, gen)
        return [x], torch.empty((c["N"], c["M"]), dtype=dtype), x.numpy().T
    if name.startswith("centered"):
        x = _random((c["M"], c["N"]), torch.float32, gen)
        total = x.double().sum(axis=1).numpy()
        reference = np.concatenate([(x.double().numpy() - total[:, None] / c["N"]).ravel(), total])
        return [x], torch.empty(c["M"] * c["N"] + c["M"], dtype=torch.float32), reference
    if name == "matmul":
        a = _random((c["M"], c["K"]), torch.float16, gen)
        b = _random((c["K"], c["N"]), torch.float16, gen)
        reference = (a.double() @ b.double()).numpy()
        return [a, b], torch.empty((c["M"], c["N"]), dtype=torch.float32), reference
    x = _random((c["A"], c["B"], c["C"]), torch.int8, gen)
    return [x], torch.empty(x.numel(), dtype=torch.int8), x.numpy().transpose(2, 0, 1).ravel()


@pytest.mark.parametrize("name", sorted(cases.KERNELS))
def test_kernels_that_convert(name):
    kernel, _, constexprs, num_warps, _ = cases.KERNELS[name]
    gen = torch.Generator().manual_seed(len(name))
    inputs, out, reference = _kernel_args(name, gen)
    out = out.fill_(77).cuda()  # poisoned
    kernel[(1,)](*[x.cuda() for x in inputs], out, **constexprs, num_warps=num_warps)
    got = out.cpu().double().numpy()
    if name == "matmul" or name.startswith("centered"):
        error = np.linalg.norm(got - reference) / np.linalg.norm(reference)
        assert error < 1e-5, error
    else:
        np.testing.assert_array_equal(got, np.asarray(reference, dtype=np.float64))
