"""The tutorial examples (`examples/0X_*.py`): each runs its Triton tutorial kernels in Naiad and
checks them against a float64 reference. One test per tutorial, plus the demo driver."""

from pathlib import Path

import pytest
from module_files import module_from_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(stem):
    return module_from_file(f"naiad_example_{stem}", EXAMPLES / f"{stem}.py")


def test_01_vector_add():
    result = load("01_vector_add").check(size=5000)
    assert result["rel_err"] <= 2.0**-11


def test_02_fused_softmax():
    load("02_fused_softmax").check(n_rows=37, n_cols=300)


def test_02_fused_softmax_fewer_rows_than_programs():
    module = load("02_fused_softmax")
    import torch

    x = torch.randn(5, 100)
    y = module.softmax(x, num_programs=8)
    assert torch.allclose(y, torch.softmax(x, dim=1), atol=1e-6)


def test_03_matmul():
    result = load("03_matmul").check(M=64, N=64, K=48, every_config=True)
    assert result["rel_err"] <= 2e-3


def test_04_low_memory_dropout():
    load("04_low_memory_dropout").check(n=4000, p=0.5, seed=7)


def test_05_layer_norm():
    module = load("05_layer_norm")
    import torch

    module.check_one(24, 130, torch.float16)
    module.check_one(24, 130, torch.float32)


def test_06_fused_attention():
    load("06_fused_attention").check(N_CTX=64, HEAD_DIM=32, every_config=True)


def test_07_extern_functions():
    """libdevice asin in fp32 and fp64 (two symbols), hypot and atan2; ragged last blocks."""
    result = load("07_extern_functions").check(size=3000)
    assert result["rel_err"] <= 2.0**-21


@pytest.mark.parametrize("programs", [1, 3, 40])
def test_08_grouped_gemm(programs):
    """Three products of ragged sizes (one with strided rows) from device arrays of addresses
    and sizes; fewer, some and more programs than tiles."""
    sizes = ((40, 24, 70), (5, 33, 16), (33, 33, 33))
    result = load("08_grouped_gemm").check(sizes=sizes, num_programs=programs)
    assert result["rel_err"] <= 2.0**-11 + 4 * 70 * 2.0**-24


def test_09_persistent_matmul():
    """Every variant (naive, flattened persistent loop, host and in-kernel descriptors) on 3
    programs over 9 ragged tiles, K not a multiple of its block."""
    blocks = {"BLOCK_M": 32, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}
    result = load("09_persistent_matmul").check(M=70, N=40, K=56, programs=3, **blocks)
    assert result["rel_err"] <= 2.0**-11 + 4 * 56 * 2.0**-24


def test_11_programmatic_dependent_launch():
    """Five dependent launches with launch_pdl=True (gdc_wait, gdc_launch_dependents) and five
    without, ping-ponging between two buffers: the launches run in order here."""
    result = load("11_programmatic_dependent_launch").check(size=3000, steps=5)
    assert result["rel_err"] <= 4 * 5 * 2.0**-24


@pytest.mark.full  # a minute of CPU compiles; block pointers have their own default-tier tests
def test_06b_fused_attention_block_ptr():
    load("06b_fused_attention_block_ptr").check(Z=2, H=1, N_CTX=64, HEAD_DIM=32)


def test_10_block_scaled_matmul():
    """fp8 A with fp4 B: both element formats and e8m0 scales, two programs, two K steps."""
    result = load("10_block_scaled_matmul").check(formats=("mixed",), M=40, N=24)
    assert result["rel_err"] <= 2.0**-18


@pytest.mark.full  # four formats' compiles
def test_10_block_scaled_matmul_every_format():
    load("10_block_scaled_matmul").check()


def test_run_all_reports_every_example(capsys):
    run_all = load("run_all")
    assert run_all.main(["-q", "-k", "01"]) == 0
    out = capsys.readouterr().out
    assert "01_vector_add" in out and "1/1 passed" in out
    assert "executor: interpreter (NumPy)" in out or "executor: compiled" in out


@pytest.mark.parametrize("stem", [p.stem for p in sorted(EXAMPLES.glob("[0-9][0-9]*_*.py"))])
def test_every_example_has_a_main(stem):
    assert callable(getattr(load(stem), "main", None))


def test_jit_call_passes_tensor_to_constexpr_parameter():
    """Triton ignores a callee's tl.constexpr annotation when a kernel passes it a tensor (the
    fused-attention tutorial passes `offs_m` so); Naiad must accept it too."""
    import numpy as np

    import naiad
    import naiad.language as tl

    @naiad.jit
    def add_offsets(x, offs: tl.constexpr):
        return x + offs

    @naiad.jit
    def kernel(out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, add_offsets(offs, offs))

    out = np.zeros(16, dtype=np.int32)
    kernel[(1,)](out, BLOCK=16)
    assert np.array_equal(out, 2 * np.arange(16))


def test_04_low_memory_dropout_in_debug_mode():
    """Philox wraps around on purpose: debug mode's overflow check must not fire on tl.rand."""
    from naiad import knobs

    with knobs.override(NAIAD_DEBUG="1"):
        load("04_low_memory_dropout").check(n=3000, p=0.25, seed=99)


def test_05_layer_norm_in_debug_mode():
    """Every access bounds-checked, including the spin lock's atomics."""
    import torch

    from naiad import knobs

    with knobs.override(NAIAD_DEBUG="1"):
        load("05_layer_norm").check_one(16, 70, torch.float32)
