"""Every tutorial example on the GPU, through its own host code: the examples make their tensors
on DEVICE, the active driver's device (Triton's `driver.active.get_active_torch_device()`: the GPU
here), so each example's `check()` runs its kernels compiled for the GPU (TTIR -> TTGIR -> LLVM
-> PTX -> cubin) and holds them to its float64 reference and bounds, at its own sizes and at
larger ones: vector add, fused softmax, matmul (each config, the autotuner, leaky_relu fused,
tf32), low-memory dropout (the Philox mask bit for bit), layer norm forward and backward, fused
attention (in-kernel descriptors, block pointers), libdevice calls, grouped GEMM (pointers from
device arrays), persistent matmul (flattened loops, host and in-kernel descriptors), chains of
programmatic dependent launches; and the README demo. Beyond the examples'
checks: the kernels against the interpreter on the same inputs, attention through host
TensorDescriptors, the launcher's clear errors, a launch inside CUDA graph capture, and a kernel
on a second GPU.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import math

import numpy as np
import pytest
import torch
from gpu_helpers import ROOT, compiled, load_module  # noqa: F401 (compiled: autouse fixture)

import naiad
from naiad.runtime import cpu_launcher, cuda_launcher, jit
from naiad.testing import check
from naiad.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu


def example(name: str):
    """A fresh copy of `examples/<name>.py`: its DEVICE is the active driver's, its kernels and
    autotuners have not run yet."""
    return load_module(f"gpu_{name}", ROOT / "examples" / f"{name}.py")


@pytest.fixture
def on_the_gpu_only(monkeypatch):
    """Fails any launch that would run on the CPU (compiled or interpreted), so an example's
    tensor left in host memory shows; yields the list of GPU launches made."""
    launches = []
    launch_cuda = cuda_launcher.CudaLauncher.launch

    def counted(launcher, *args, **kwargs):
        launches.append(launcher.jit_function.__name__)
        return launch_cuda(launcher, *args, **kwargs)

    def refuse_compiled(launcher, *args, **kwargs):
        raise AssertionError(f"{launcher.jit_function.__name__} launched on host memory")

    def refuse(jit_function, *args, **kwargs):
        raise AssertionError(f"{jit_function.__name__} launched on host memory")

    monkeypatch.setattr(cuda_launcher.CudaLauncher, "launch", counted)
    monkeypatch.setattr(cpu_launcher.CpuLauncher, "launch", refuse_compiled)
    monkeypatch.setattr(jit, "run_grid", refuse)
    return launches


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


# 64 x 64 x 32 tiles, 4 warps: more programs' worth of tiles at a small size
SMALL_TILES = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 2, "num_warps": 4}

# Each example's check() with its own sizes ({}), then larger or raggeder ones.
CHECKS = [
    ("01_vector_add", {}),
    ("01_vector_add", {"size": 1 << 20, "seed": 1}),
    ("02_fused_softmax", {}),
    ("02_fused_softmax", {"n_rows": 1823, "n_cols": 781}),
    ("02_fused_softmax", {"n_rows": 256, "n_cols": 4096}),
    ("03_matmul", {}),
    ("03_matmul", {"M": 256, "N": 192, "K": 160, "seed": 1}),
    ("04_low_memory_dropout", {}),
    ("04_low_memory_dropout", {"n": 98_432, "p": 0.5, "seed": 2**33 + 5}),
    ("05_layer_norm", {}),
    ("05_layer_norm", {"M": 128, "N": 1000}),
    ("05_layer_norm", {"M": 37, "N": 4096}),
    ("06_fused_attention", {}),
    ("06_fused_attention", {"Z": 2, "H": 3, "N_CTX": 256, "HEAD_DIM": 32}),
    ("06b_fused_attention_block_ptr", {}),
    ("06b_fused_attention_block_ptr", {"Z": 2, "H": 2, "N_CTX": 256, "HEAD_DIM": 64}),
    ("07_extern_functions", {}),
    ("07_extern_functions", {"size": 1 << 20, "seed": 1}),
    ("08_grouped_gemm", {}),
    ("08_grouped_gemm", {"sizes": ((1024, 512, 256), (300, 700, 129), (7, 5, 3)), "seed": 1}),
    ("08_grouped_gemm", {"sizes": ((256, 256, 256),) * 6, "num_programs": 5}),
    ("09_persistent_matmul", {}),
    ("09_persistent_matmul", {"M": 1000, "N": 1032, "K": 520, "seed": 1}),
    ("09_persistent_matmul", {"M": 300, "N": 264, "K": 136, "programs": 7, **SMALL_TILES}),
    ("11_programmatic_dependent_launch", {}),
    ("11_programmatic_dependent_launch", {"size": 1 << 22, "steps": 32, "seed": 1}),
    ("11_programmatic_dependent_launch", {"size": 1000, "steps": 200, "seed": 2}),
]


@pytest.mark.parametrize("name, sizes", CHECKS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CHECKS)])
def test_the_example_checks_pass_on_the_gpu(name, sizes, on_the_gpu_only):
    """The example's own check(), every config of its autotuner included (matmul, attention):
    its tensors on the GPU, every kernel compiled for it."""
    module = example(name)
    assert module.DEVICE.type == "cuda"
    module.check(**sizes)
    assert on_the_gpu_only


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


def _attention_reference(module, q, k, v, causal, sm_scale):
    """The example's float64 reference (computed on the host), brought to the GPU."""
    out, lse = module.reference(q, k, v, causal, sm_scale)
    return torch.from_numpy(out).cuda(), torch.from_numpy(lse).cuda()


def _check_attention(o, m, ref_o, ref_m):
    # P is rounded to fp16 before the P @ V dot, and O to fp16 at the end (the example's bound)
    assert relative_error(o, ref_o) <= 4e-3
    assert relative_error(m, ref_m) <= 1e-5


def _attention_inputs(z, h, n_ctx, head_dim, seed):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    shape = (z, h, n_ctx, head_dim)
    return [(torch.randn(shape, device="cuda", generator=generator) * 0.5).half() for _ in range(3)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("z, h, n_ctx, head_dim", [(1, 2, 128, 64), (2, 3, 256, 32)])
def test_fused_attention_through_host_descriptors(z, h, n_ctx, head_dim, causal):
    """Each config of the example's autotuner with the tensors passed as host TensorDescriptors
    (5 launch values each) instead of the pointers the example passes."""
    attention = example("06_fused_attention")
    q, k, v = _attention_inputs(z, h, n_ctx, head_dim, seed=n_ctx + head_dim)
    sm_scale = 1 / math.sqrt(head_dim)
    ref_o, ref_m = _attention_reference(attention, q, k, v, causal, sm_scale)
    configs = attention._attn_fwd.prune_configs({"N_CTX": n_ctx, "HEAD_DIM": head_dim})
    assert configs
    for config in configs:
        o = torch.full_like(q, float("nan"))
        m = torch.full((z, h, n_ctx), float("nan"), device="cuda")
        block_m, block_n = config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]
        rows = z * h * n_ctx
        descriptors = [
            TensorDescriptor(t, [rows, head_dim], [head_dim, 1], [block, head_dim])
            for t, block in zip((q, k, v, o), (block_m, block_n, block_n, block_m))
        ]
        grid = (naiad.cdiv(n_ctx, block_m), z * h, 1)
        attention._attn_fwd.fn[grid](
            sm_scale, m, z, h, *descriptors, N_CTX=n_ctx, HEAD_DIM=head_dim, FP8_OUTPUT=False,
            STAGE=3 if causal else 1, warp_specialize=False, IS_HOPPER=False,
            **config.all_kwargs(),
        )  # fmt: skip
        _check_attention(o, m, ref_o, ref_m)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "head_dim, block_m, block_n, warps", [(64, 128, 64, 4), (128, 128, 128, 8)]
)
def test_fused_attention_in_its_fp8_mode(head_dim, block_m, block_n, warps, causal):
    """`FP8_OUTPUT`: fp8e5 Q, K, V (passed transposed, (Z, H, D, N) in memory) and output, both
    dots on fp8 wgmma. The kernel's V descriptor spans Z*H*N columns of the transposed V, so the
    first head reads all of its V and the second head none of it (zero-filled: its output is
    zero), under Triton's semantics as here."""
    attention = example("06_fused_attention")
    z, h, n_ctx = 1, 2, 256
    q, k, v = (x.to(torch.float8_e5m2) for x in _attention_inputs(z, h, n_ctx, head_dim, 64))
    exact = [x.float() for x in (q, k, v)]
    ref_o, ref_m = _attention_reference(attention, *exact, causal, 0.5)
    o = torch.empty_like(q)
    m = torch.empty((z, h, n_ctx), device="cuda")
    grid = (n_ctx // block_m, z * h, 1)
    kernel = attention._attn_fwd.fn[grid](
        0.5, m, z, h, q, k, v.transpose(2, 3).contiguous(), o, N_CTX=n_ctx, HEAD_DIM=head_dim,
        FP8_OUTPUT=True, STAGE=3 if causal else 1, warp_specialize=False, IS_HOPPER=False,
        BLOCK_M=block_m, BLOCK_N=block_n, num_warps=warps, num_stages=3,
    )  # fmt: skip
    assert "e5m2" in kernel.asm["ptx"] and "wgmma.mma_async" in kernel.asm["ptx"]
    assert relative_error(o[0, 0].float(), ref_o[0, 0]) <= 0.1  # an fp8e5 output
    assert relative_error(m[0, 0], ref_m[0, 0]) <= 1e-4  # fp8 wgmma's narrower accumulation
    assert torch.count_nonzero(o[0, 1].float()) == 0


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_block_pointers_in_wide_tiles(causal):
    """128 x 64 tiles (the example's check runs 64 x 32 and 32 x 32), through the example's host
    code, K transposed as there."""
    attention = example("06b_fused_attention_block_ptr")
    q, k, v = _attention_inputs(2, 2, 256, 64, seed=128)
    k = k.transpose(2, 3).contiguous().transpose(2, 3)
    ref_o, ref_m = _attention_reference(attention, q, k, v, causal, 0.5)
    o, m = attention.attention(q, k, v, causal, 0.5, BLOCK_M=128, BLOCK_N=64)
    _check_attention(o, m, ref_o, ref_m)


def test_the_readme_demo_runs_every_example_on_the_gpu(capsys, on_the_gpu_only):
    """`python examples/run_all.py`, the README's first command: on a GPU machine the examples
    make their tensors there, and every kernel runs compiled for it and passes the example's
    own checks."""
    run_all = example("run_all")
    assert run_all.main(["-q"]) == 0
    out = capsys.readouterr().out
    count = len(run_all.example_paths())
    assert f"{count}/{count} passed" in out and "executor: compiled back end" in out
    assert f"device: GPU (cuda:0, {torch.cuda.get_device_name(0)})" in out
    assert on_the_gpu_only


def test_the_readme_demo_with_cpu_on_a_gpu_machine(capsys):
    """`--cpu` selects the CPU driver while the examples run (their tensors in host memory,
    the kernels compiled for the CPU) and gives the process its CUDA driver back after."""
    from naiad.runtime import driver

    run_all = example("run_all")
    assert run_all.main(["-q", "-k", "01", "--cpu"]) == 0
    out = capsys.readouterr().out
    assert "1/1 passed" in out and "device: CPU" in out
    assert driver.active.backend == "cuda"


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
