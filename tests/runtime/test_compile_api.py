"""`kernel.warmup(..., target=...)`: TTIR for one specialization, with no device, dumped on
request."""

import numpy as np
import pytest
import torch

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.ir.parser import parse_module


@naiad.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(
        out_ptr + offs,
        tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
        mask=mask,
    )


def _ops(ttir: str) -> list:
    module = parse_module(ttir)
    func = next(iter(module.body))
    return [op.name for op in func.body.block]


@pytest.mark.parametrize(
    "pointers",
    [("*fp32",) * 3, (torch.float32,) * 3, tuple(np.zeros(64, np.float32) for _ in range(3))],
    ids=["signature strings", "torch dtypes", "arrays"],
)
def test_warmup_gives_triton_shaped_ttir_for_any_argument_form(pointers):
    compiled = add_kernel.warmup(*pointers, 4096, grid=(1,), BLOCK=1024, target="cuda:sm_90a")
    assert compiled.name == "add_kernel"
    # Python evaluates `out_ptr + offs` (the store's first argument) before the two loads.
    assert [op for op in _ops(compiled.asm["ttir"]) if op != "arith.constant"] == [
        "tt.get_program_id",
        "arith.muli",
        "tt.make_range",
        "tt.splat",
        "arith.addi",
        "tt.splat",
        "arith.cmpi",
        "tt.splat",
        "tt.addptr",
        "tt.splat",
        "tt.addptr",
        "tt.load",
        "tt.splat",
        "tt.addptr",
        "tt.load",
        "arith.addf",
        "tt.store",
        "tt.return",
    ]
    assert "tt.divisibility = 16" in compiled.asm["ttir"]  # aligned pointers, n % 16 == 0


def test_integer_arguments_specialize_as_triton():
    one = add_kernel.warmup("*fp32", "*fp32", "*fp32", 1, grid=(1,), BLOCK=16)
    assert compiled_signature(one)["n"] == "constexpr"
    odd = add_kernel.warmup("*fp32", "*fp32", "*fp32", 17, grid=(1,), BLOCK=16)
    assert compiled_signature(odd)["n"] == "i32"
    big = add_kernel.warmup("*fp32", "*fp32", "*fp32", 2**40, grid=(1,), BLOCK=16)
    assert compiled_signature(big)["n"] == "i64"


def compiled_signature(compiled):
    return compiled.metadata["signature"]


def test_targets_and_dump_dir(tmp_path):
    with pytest.raises(ValueError, match="unknown target"):
        add_kernel.warmup("*fp32", "*fp32", "*fp32", 64, grid=(1,), BLOCK=16, target="tpu")
    with knobs.override(NAIAD_DUMP_DIR=str(tmp_path)):
        add_kernel.warmup("*fp32", "*fp32", "*fp32", 64, grid=(1,), BLOCK=16, target="cuda:sm_80")
    dumped = sorted(p.name for p in tmp_path.rglob("*.ttir"))
    assert dumped == ["add_kernel.source.ttir", "add_kernel.ttir"]


def test_compile_errors_are_located_at_the_kernel_line():
    @naiad.jit
    def bad(x_ptr, n):
        tl.store(x_ptr + tl.arange(0, n), 1.0)

    with pytest.raises(naiad.CompilationError, match=r"test_compile_api.py:\d+:\d+"):
        bad.warmup("*fp32", 64, grid=(1,))


def test_a_launch_dumps_every_stage(tmp_path):
    """NAIAD_DUMP_DIR dumps every compile, whatever starts it: here an ordinary launch."""
    x = np.random.default_rng(4).random(64, dtype=np.float32)
    out = np.full_like(x, np.nan)
    with knobs.override(NAIAD_DUMP_DIR=str(tmp_path), NAIAD_BACKEND="cpu"):
        add_kernel[(1,)](x, x, out, 64, BLOCK=64)
    assert np.array_equal(out, x + x)
    dumped = sorted(p.name for p in tmp_path.rglob("add_kernel.*"))
    stages = ["asm", "linalg", "llir", "obj", "source.ttir", "ttgir", "ttir"]
    assert dumped == [f"add_kernel.{stage}" for stage in stages]
    assert "linalg.generic" in next(tmp_path.rglob("add_kernel.linalg")).read_text()
