"""Every tutorial example's kernels compiled for the GPU (TTIR -> TTGIR -> LLVM -> PTX -> cubin)
and launched on torch CUDA tensors: vector add, fused softmax, matmul (each config, the
autotuner, leaky_relu fused, tf32), low-memory dropout (the Philox mask bit for bit), layer norm
forward and backward, fused attention (in-kernel descriptors, host descriptors, block pointers),
against float64 references with the examples' own bounds and against the interpreter on the
same inputs; plus the launcher's clear errors and a launch inside CUDA graph capture. The
examples' host code makes its tensors on the CPU, so where it does, the tests launch the
kernels with host code of their own.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import naiad
from naiad.testing import check
from naiad.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"gpu_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    """Launches on CUDA tensors compile for the GPU (the test-wide default is the
    interpreter)."""
    monkeypatch.setenv("NAIAD_BACKEND", "auto")


def interpreted(monkeypatch, run):
    """`run()` in the interpreter (the executable reference), then back to compiled."""
    monkeypatch.setenv("NAIAD_BACKEND", "interpreter")
    try:
        return run()
    finally:
        monkeypatch.setenv("NAIAD_BACKEND", "auto")


def relative_error(out, ref) -> float:
    diff = out.double() - ref
    return float(diff.norm() / ref.norm())


@pytest.mark.parametrize("size", [1, 1000, 98432, 1 << 20])
def test_vector_add(size, monkeypatch):
    add = example("01_vector_add")
    torch.manual_seed(size)
    x = torch.rand(size, device="cuda")
    y = torch.rand(size, device="cuda")
    out = add.add(x, y)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)  # one rounded add, as torch
    reference = interpreted(monkeypatch, lambda: add.add(x, y))
    assert torch.equal(out, reference)


@pytest.mark.parametrize("shape", [(64, 781), (1823, 781), (256, 4096)])
def test_fused_softmax(shape, monkeypatch):
    softmax = example("02_fused_softmax")
    torch.manual_seed(shape[1])
    x = torch.randn(*shape, device="cuda")
    y = softmax.softmax(x)
    ref = torch.softmax(x.double(), dim=1)
    # ex2.approx and div.full, as Triton's: a few ulp per element
    assert relative_error(y, ref) <= 1e-6
    reference = interpreted(monkeypatch, lambda: softmax.softmax(x))
    torch.testing.assert_close(y, reference, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", [(64, 1000), (128, 4096), (32, 8192)])
def test_layer_norm_forward(shape, monkeypatch):
    layer_norm = example("05_layer_norm")
    torch.manual_seed(shape[1])
    m, n = shape
    x = torch.randn(m, n, device="cuda", dtype=torch.float16)
    w = torch.rand(n, device="cuda", dtype=torch.float16)
    b = torch.rand(n, device="cuda", dtype=torch.float16)

    def run():
        y = torch.full_like(x, float("nan"))
        mean = torch.full((m,), float("nan"), device="cuda")
        rstd = torch.full((m,), float("nan"), device="cuda")
        block = min(65536 // x.element_size(), naiad.next_power_of_2(n))
        layer_norm._layer_norm_fwd_fused[(m,)](
            x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK_SIZE=block, num_warps=8
        )
        return y, mean, rstd

    y, mean, rstd = run()
    ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double(), 1e-5)
    assert relative_error(y, ref) <= 2e-3  # f16 output
    torch.testing.assert_close(mean.double(), x.double().mean(dim=1), rtol=1e-5, atol=1e-5)
    y_i, _, rstd_i = interpreted(monkeypatch, run)
    torch.testing.assert_close(y, y_i, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(rstd, rstd_i, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "shape, dtype, activation",
    [((128, 96, 64), torch.float16, ""), ((101, 75, 50), torch.float16, "leaky_relu"),
     ((256, 192, 160), torch.float16, ""), ((128, 96, 64), torch.float32, "")],
)  # fmt: skip
def test_matmul_every_config(shape, dtype, activation):
    matmul = example("03_matmul")
    m, n, k = shape
    generator = torch.Generator(device="cuda").manual_seed(m * n + k)
    a = torch.randn((m, k), device="cuda", generator=generator).to(dtype)
    b = torch.randn((k, n), device="cuda", generator=generator).to(dtype)
    ref = a.double() @ b.double()
    if activation == "leaky_relu":
        ref = torch.where(ref >= 0, ref, 0.01 * ref)
    # The example's bound: the fp16 rounding of C, fp32 accumulation, tf32 inputs for fp32.
    bound = 2.0**-11 + 4 * k * 2.0**-24 + (2.0**-9 if dtype == torch.float32 else 0.0)
    for config in matmul.matmul_kernel.configs:
        c = matmul.matmul(a, b, activation, config)
        assert relative_error(c, ref) <= bound, config


def test_matmul_autotuned_against_the_interpreter(monkeypatch):
    matmul = example("03_matmul")
    generator = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randn((96, 80), device="cuda", generator=generator).half()
    b = torch.randn((80, 72), device="cuda", generator=generator).half()
    c = matmul.matmul(a, b, "leaky_relu")  # the autotuner runs every config on the GPU
    config = matmul.matmul_kernel.best_config
    reference = interpreted(monkeypatch, lambda: matmul.matmul(a, b, "leaky_relu", config))
    k = a.shape[1]
    check("dot", c.float().cpu().numpy(), reference.float().cpu().numpy(), "gpu", np.float16, k)


@pytest.mark.parametrize("n, p", [(10_000, 0.3), (98_432, 0.5), (7, 0.9)])
def test_dropout(n, p, monkeypatch):
    dropout = example("04_low_memory_dropout")
    generator = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, device="cuda", generator=generator)
    x_keep = (torch.rand(n, device="cuda", generator=generator) > p).to(torch.int32)
    out = dropout.dropout(x, x_keep, p)
    scaled = x.cpu().numpy() / (np.float32(1) - np.float32(p))  # fp32 `/`, correctly rounded
    expected = np.where(x_keep.cpu().numpy() != 0, scaled, np.float32(0))
    check("truediv_fp32", out.cpu().numpy(), expected, "gpu", np.float32)
    reference = interpreted(monkeypatch, lambda: dropout.dropout(x, x_keep, p))
    check("truediv_fp32", out.cpu().numpy(), reference.cpu().numpy(), "gpu", np.float32)


@pytest.mark.parametrize("seed", [123, 512, 2**33 + 5])
def test_seeded_dropout_mask_is_philox(seed, monkeypatch):
    dropout = example("04_low_memory_dropout")
    n, p = 50_000, 0.3
    x = torch.randn(n, device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
    out = dropout.seeded_dropout(x, p, seed)
    keep = dropout.philox_uniform(seed, np.arange(n)) > np.float32(p)
    assert np.array_equal(out.cpu().numpy() != 0, keep)  # bit-exact with the NumPy Philox
    reference = interpreted(monkeypatch, lambda: dropout.seeded_dropout(x, p, seed))
    assert torch.equal(out != 0, reference != 0)
    assert torch.equal(dropout.seeded_dropout(x, p, seed), out)


@pytest.mark.parametrize("shape", [(64, 200), (128, 1000), (37, 4096)])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_layer_norm_forward_and_backward(shape, dtype):
    layer_norm = example("05_layer_norm")
    m, n = shape
    generator = torch.Generator(device="cuda").manual_seed(m + n)

    def draw(*size, scale=1.0, shift=0.0):
        values = torch.randn(size, device="cuda", generator=generator) * scale + shift
        return values.to(dtype)

    weight = torch.rand(n, device="cuda", generator=generator).to(dtype).requires_grad_(True)
    bias = torch.rand(n, device="cuda", generator=generator).to(dtype).requires_grad_(True)
    x = draw(m, n, scale=0.5, shift=-2.3).requires_grad_(True)
    dy = draw(m, n, scale=0.1)
    y = layer_norm.layer_norm(x, (n,), weight, bias, 1e-5)
    y.backward(dy)
    got = {"y": y, "dx": x.grad, "dw": weight.grad, "db": bias.grad}
    x64, w64, b64 = (t.detach().double().requires_grad_(True) for t in (x, weight, bias))
    y64 = torch.nn.functional.layer_norm(x64, (n,), w64, b64, 1e-5)
    y64.backward(dy.double())
    ref = {"y": y64, "dx": x64.grad, "dw": w64.grad, "db": b64.grad}
    for name, bound in layer_norm.BOUNDS[dtype].items():
        assert got[name].dtype == dtype
        # The example's bounds are for 64 rows: the partial dW/dB sums are kept in `dtype`, 8
        # buffers rounding once per row added, so their error grows with the rows per buffer.
        scale = max(1.0, m / 64) if name in ("dw", "db") else 1.0
        assert relative_error(got[name].detach(), ref[name].detach()) <= bound * scale, name


def _attention_reference(module, q, k, v, causal, sm_scale):
    out, lse = module.reference(q.cpu(), k.cpu(), v.cpu(), causal, sm_scale)
    return torch.from_numpy(out).cuda(), torch.from_numpy(lse).cuda()


def _check_attention(o, m, ref_o, ref_m):
    # P is rounded to fp16 before the P @ V dot, and O to fp16 at the end (the example's bound)
    assert relative_error(o, ref_o) <= 4e-3
    assert relative_error(m, ref_m) <= 1e-5


def _attention_inputs(z, h, n_ctx, head_dim, seed):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    shape = (z, h, n_ctx, head_dim)
    return [(torch.randn(shape, device="cuda", generator=generator) * 0.5).half() for _ in range(3)]


@pytest.mark.parametrize("host_descriptors", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("z, h, n_ctx, head_dim", [(1, 2, 128, 64), (2, 3, 256, 32)])
def test_fused_attention(z, h, n_ctx, head_dim, causal, host_descriptors):
    """Each config of the example's autotuner, the tensors as pointers (the kernel makes the
    descriptors) or as host TensorDescriptors (5 launch values each)."""
    attention = example("06_fused_attention")
    q, k, v = _attention_inputs(z, h, n_ctx, head_dim, seed=n_ctx + head_dim)
    sm_scale = 1 / math.sqrt(head_dim)
    ref_o, ref_m = _attention_reference(attention, q, k, v, causal, sm_scale)
    configs = attention._attn_fwd.prune_configs({}, {"N_CTX": n_ctx, "HEAD_DIM": head_dim})
    assert configs
    for config in configs:
        o = torch.full_like(q, float("nan"))
        m = torch.full((z, h, n_ctx), float("nan"), device="cuda")
        tensors = q, k, v, o
        block_m, block_n = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        if host_descriptors:
            rows = z * h * n_ctx
            blocks = (block_m, block_n, block_n, block_m)
            tensors = [
                TensorDescriptor(t, [rows, head_dim], [head_dim, 1], [b, head_dim])
                for t, b in zip(tensors, blocks)
            ]
        grid = (naiad.cdiv(n_ctx, block_m), z * h, 1)
        attention._attn_fwd.fn[grid](
            sm_scale, m, z, h, *tensors, N_CTX=n_ctx, HEAD_DIM=head_dim, FP8_OUTPUT=False,
            STAGE=3 if causal else 1, warp_specialize=False, IS_HOPPER=False,
            **config.all_kwargs(),
        )  # fmt: skip
        _check_attention(o, m, ref_o, ref_m)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("blocks", [(64, 32), (32, 32), (128, 64)])
def test_fused_attention_block_pointers(blocks, causal):
    attention = example("06b_fused_attention_block_ptr")
    z, h, n_ctx, head_dim = 2, 2, 256, 64
    q, k, v = _attention_inputs(z, h, n_ctx, head_dim, seed=blocks[0])
    k = k.transpose(2, 3).contiguous().transpose(2, 3)  # the example's transposed K layout
    sm_scale = 0.5
    ref_o, ref_m = _attention_reference(attention, q, k, v, causal, sm_scale)
    o = torch.full_like(q, float("nan"))
    m = torch.full((z, h, n_ctx), float("nan"), device="cuda")
    block_m, block_n = blocks
    grid = (naiad.cdiv(n_ctx, block_m), z * h, 1)
    attention._attn_fwd[grid](
        q, k, v, sm_scale, m, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(), z, h,
        N_CTX=n_ctx, HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n,
        STAGE=3 if causal else 1, num_warps=4, num_stages=3,
    )  # fmt: skip
    _check_attention(o, m, ref_o, ref_m)


def test_the_readme_demo_runs_every_example_on_the_gpu(capsys):
    """`python examples/run_all.py`, the README's first command: on a GPU machine every
    example's kernels run there (its host tensors travel around each launch) and pass the
    example's own checks."""
    run_all = example("run_all")
    assert run_all.main(["-q"]) == 0
    out = capsys.readouterr().out
    count = len(run_all.example_paths())
    assert f"{count}/{count} passed" in out and "executor: compiled back end" in out
    assert "device: GPU (cuda:0" in out


# -- the launcher -------------------------------------------------------------------------------
def test_errors_of_a_bad_launch():
    add = example("01_vector_add")
    x = torch.rand(1000, device="cuda")
    with pytest.raises(ValueError, match=r"y_ptr`.*a tensor on cpu"):
        add.add_kernel[(1,)](x, torch.rand(1000), torch.empty_like(x), 1000, BLOCK_SIZE=1024)
    with pytest.raises(ValueError, match="grid dimension 1"):
        add.add_kernel[(1, 70000)](x, x, torch.empty_like(x), 1000, BLOCK_SIZE=1024)
    if torch.cuda.device_count() > 1:
        other = torch.rand(1000, device="cuda:1")
        with pytest.raises(ValueError, match=r"y_ptr`.* is on cuda:1"):
            add.add_kernel[(1,)](x, other, torch.empty_like(x), 1000, BLOCK_SIZE=1024)


def test_launches_are_captured_by_cuda_graphs():
    add = example("01_vector_add")
    x = torch.rand(4096, device="cuda")
    y = torch.rand(4096, device="cuda")
    out = torch.empty_like(x)
    add.add_kernel[(4,)](x, y, out, 4096, BLOCK_SIZE=1024)  # compiled and loaded outside
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        add.add_kernel[(4,)](x, y, out, 4096, BLOCK_SIZE=1024)
    out.fill_(float("nan"))
    x.copy_(torch.rand(4096, device="cuda"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_a_kernel_runs_on_its_tensors_device():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    from naiad.backends.nvidia import driver

    add = example("01_vector_add")
    x = torch.rand(3000, device="cuda:1")
    y = torch.rand(3000, device="cuda:1")
    with torch.cuda.device(0):
        for _ in range(2):  # the slow path (compile, load), then the hot path
            out = add.add(x, y)
            assert driver.current_device() == 0  # the caller's context is current again
    torch.cuda.synchronize(1)
    assert out.device.index == 1
    assert torch.equal(out, x + y)
