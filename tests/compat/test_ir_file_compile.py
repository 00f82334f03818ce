"""`triton.compile` of a `.ttir` file (runtime/ir_files.py): the file's kernel goes through the
TTIR pipeline and the target's stages, and comes out as the same code a launch of the kernel it
was printed from compiles (whose values are checked against NumPy here), for the CPU and for an
NVIDIA target without a GPU. Such a kernel is inspected, not launched."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.triton.backends.compiler import GPUTarget
from naiad.triton.compiler import ASTSource, compile


@naiad.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "alpha": "fp32"}


@pytest.mark.parametrize(
    "target, stage",
    [(GPUTarget("cpu", "x86_64", 1), "llir"), (GPUTarget("cuda", 90, 32), "ptx")],
)
def test_a_ttir_file_compiles_to_the_code_of_its_kernel(target, stage, tmp_path):
    source = ASTSource(scale_add, SIGNATURE, constexprs={"BLOCK": 128})
    from_ast = compile(source, target=target)
    path = tmp_path / "scale_add.ttir"
    path.write_text(from_ast.asm["ttir"])
    from_file = compile(str(path), target=target, options={"num_warps": 4})
    assert from_file.name == from_ast.name and from_file.metadata.name == from_ast.name
    assert from_file.asm["source"] == from_ast.asm["ttir"]
    assert from_file.asm[stage] == from_ast.asm[stage]
    assert from_file.binary is not None or stage == "ptx"

    rng = np.random.default_rng(16)
    x, y = (rng.standard_normal(300).astype(np.float32) for _ in range(2))
    out = np.empty_like(x)
    with knobs.override(NAIAD_BACKEND="cpu"):
        scale_add[(3,)](x, y, out, 300, 0.75, BLOCK=128)
    expected = 0.75 * x.astype(np.float64) + y.astype(np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="compiled from an IR file"):
        from_file[(3,)](x, y, out, 300, 0.75, 128)


def test_what_a_file_compile_refuses(tmp_path):
    cpu = GPUTarget("cpu", "x86_64", 1)
    with pytest.raises(NotImplementedError, match=r"`\.ttgir` file"):
        compile(str(tmp_path / "kernel.ttgir"), target=cpu)
    two = tmp_path / "two.ttir"
    body = "tt.func public @{}() {{\n  tt.return\n}}\n"
    two.write_text(body.format("a") + body.format("b"))
    with pytest.raises(ValueError, match=r"one public tt\.func; found 2"):
        compile(two, target=cpu)
    with pytest.raises(TypeError, match="an ASTSource or a path"):
        compile(scale_add, target=cpu)
