"""The kernels of our own that bench/gpu/tensor_cores.py runs on the GPU (a pointer-based
attention forward, an int8 matmul), checked here against float64 references in the interpreter
and on the CPU (the conftest runs each test in both); and the bench's plan and options, which
need neither torch's CUDA nor triton."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from module_files import module_from_file

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gpu"


def kernels():
    return module_from_file("naiad_bench_tensor_core_kernels", BENCH / "tensor_core_kernels.py")


def bench_script():
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return module_from_file("naiad_bench_tensor_cores", BENCH / "tensor_cores.py")


def attention_reference(q, k, v, causal: bool, sm_scale: float):
    q, k, v = (t.double().numpy() for t in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) * sm_scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


@pytest.mark.parametrize(
    "causal, block_m, block_n, head_dim", [(False, 32, 16, 32), (True, 32, 16, 16)]
)
def test_pointer_attention_matches_float64(causal, block_m, block_n, head_dim):
    generator = torch.Generator().manual_seed(1)
    shape = (2, 2, 64, head_dim)
    q, k, v = (torch.randn(shape, generator=generator).to(torch.float16) for _ in range(3))
    out = torch.full_like(q, float("nan"))
    sm_scale = 1.0 / math.sqrt(head_dim)
    grid = (64 // block_m, 4)
    kernels().attention_fwd_pointers[grid](
        q, k, v, out, sm_scale, q.stride(1), q.stride(2), 64,
        HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal,
    )  # fmt: skip
    want = attention_reference(q, k, v, causal, sm_scale)
    error = np.linalg.norm(out.double().numpy() - want) / np.linalg.norm(want)
    # P and the output are rounded to fp16 (2^-11 each).
    assert error <= 2e-3, f"relative error {error:.2e}"


def test_int8_matmul_is_exact_with_a_ragged_tail():
    generator = torch.Generator().manual_seed(2)
    M, N, K = 40, 48, 80  # masked K tail, wrapped M and N offsets
    a = torch.randint(-128, 128, (M, K), generator=generator, dtype=torch.int8)
    b = torch.randint(-128, 128, (N, K), generator=generator, dtype=torch.int8).T  # K-major
    c = torch.full((M, N), -7, dtype=torch.int32)
    grid = (math.ceil(M / 32) * math.ceil(N / 32),)
    kernels().int_matmul_kernel[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), 1,
        BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, GROUP_SIZE_M=2,
    )  # fmt: skip
    assert torch.equal(c.long(), a.long() @ b.long())


def test_the_plan_lists_without_a_gpu(capsys):
    """`--list` needs only the tables; the quick plan is f16 4096³ on the three large tiles and
    both attention kernels, D64 and D128, non-causal, at N1024."""
    assert bench_script().main(["--list", "--quick"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "matmul f16 4096³: 128x256x64 w8 s3, 64x256x32 w4 s4, 128x128x32 w4 s4"
    assert lines[-1] == "5 cases, 11 config rows"
    assert all("N1024" in line and "non-causal" in line for line in lines[1:-1])


def test_the_full_plan_and_its_parts():
    tables = bench_script().tables
    assert len(tables.MATMUL_CONFIGS) == 8
    full = tables.plan(False, {"matmul", "attention"})
    assert len(full) == 11 + 8 + 2  # matmuls, fp16 attention, tutorial 06 in fp8
    parts = [
        tables.plan(False, {"matmul"}, "matmul f16,matmul bf16"),
        tables.plan(False, {"matmul"}, "f32,int8,fp8"),
        tables.plan(False, {"attention"}),
    ]
    assert sorted(case.label for part in parts for case, _ in part) == sorted(
        case.label for case, _ in full
    )
    for case, configs in full:
        if hasattr(case, "causal"):
            assert all(c.block_n <= case.D and c.block_m % c.block_n == 0 for c in configs)
            assert all(case.N % c.block_m == 0 for c in configs)


def test_bad_options_are_refused():
    script = bench_script()
    with pytest.raises(SystemExit):
        script.parse(["--only", "conv"])
    with pytest.raises(SystemExit):
        script.parse(["--rounds", "0"])
    args = script.parse(["--only", "attention", "--rounds", "2"])
    assert args.sections == {"attention"} and args.rounds == 2 and args.out is None
