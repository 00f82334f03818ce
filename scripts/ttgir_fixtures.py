"""Regenerate the Triton TTGIR fixtures in tests/fixture_kernels/ttgir/.

    /tmp/tvenv/bin/python scripts/ttgir_fixtures.py

Needs the real `triton` (3.8) and no GPU: each kernel of tests/fixture_kernels/ttgir_kernels.py
(the kernels Naiad's TTGIR pass tests compile too) is compiled for one CUDA target with
`triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32))` and `asm["ttgir"]` is written
as `<name>.ttgir`. Naiad's tests never import this script or triton; they parse the files (the
`ttg` dialect's round trip on text Triton itself printed). The kernel file's path in the
locations is cut to its file name, so the fixtures do not depend on the checkout (locations
inside Triton's library, `tl.sum`, keep the path of the triton install that made them).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "tests" / "fixture_kernels" / "ttgir_kernels.py"
OUT = ROOT / "tests" / "fixture_kernels" / "ttgir"
# The kernel file's imports, bound to Triton here: the one change made to its text.
TRITON_IMPORTS = {
    "import naiad\n": "import triton as naiad\n",
    "import naiad.language as tl\n": "import triton.language as tl\n",
}


def load_kernels() -> types.ModuleType:
    """The kernel file as a module of Triton kernels. Only its import lines change, so line
    numbers stay and `inspect` (which Triton reads the kernels' source with) finds the file."""
    source = KERNELS.read_text()
    for naiad_import, triton_import in TRITON_IMPORTS.items():
        if naiad_import not in source:
            raise ValueError(f"{KERNELS} no longer has `{naiad_import.strip()}`")
        source = source.replace(naiad_import, triton_import)
    module = types.ModuleType(KERNELS.stem)
    module.__file__ = str(KERNELS)
    sys.modules[module.__name__] = module
    exec(compile(source, str(KERNELS), "exec"), module.__dict__)
    return module


D16 = [["tt.divisibility", 16]]
MATMUL = dict(
    signature={
        "a_ptr": "*fp16",
        "b_ptr": "*fp16",
        "c_ptr": "*fp16",
        "M": "i32",
        "N": "i32",
        "K": "i32",
        "stride_am": "i32",
        "stride_bk": "i32",
        "stride_cm": "i32",
        "BM": "constexpr",
        "BN": "constexpr",
        "BK": "constexpr",
    },
    constexprs={"BM": 128, "BN": 128, "BK": 64},
    attrs={(i,): D16 for i in range(9)},
)
TABLE = {  # name -> (kernel name, ASTSource arguments, compute capability, num_warps)
    "add_sm90": (
        "add_kernel",
        dict(
            signature={
                "x_ptr": "*fp32",
                "y_ptr": "*fp32",
                "out_ptr": "*fp32",
                "n": "i32",
                "BLOCK": "constexpr",
            },
            constexprs={"BLOCK": 1024},
            attrs={(i,): D16 for i in range(4)},
        ),
        90,
        4,
    ),
    "softmax_sm90": (
        "softmax_kernel",
        dict(
            signature={
                "out_ptr": "*fp32",
                "in_ptr": "*fp32",
                "stride": "i32",
                "n_cols": "i32",
                "BLOCK": "constexpr",
            },
            constexprs={"BLOCK": 1024},
            attrs={(i,): D16 for i in range(4)},
        ),
        90,
        4,
    ),
    "transpose_sm80": (
        "transpose_kernel",
        dict(
            signature={"x_ptr": "*fp16", "y_ptr": "*fp16", "M": "constexpr", "N": "constexpr"},
            constexprs={"M": 64, "N": 32},
            attrs={(0,): D16, (1,): D16},
        ),
        80,
        4,
    ),
    "row_sum_sm80": (
        "row_sum_kernel",
        dict(
            signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "constexpr", "N": "constexpr"},
            constexprs={"M": 32, "N": 64},
            attrs={(0,): D16, (1,): D16},
        ),
        80,
        2,
    ),
    "matmul_sm80": ("matmul_kernel", MATMUL, 80, 8),
}


def compile_one(kernel, source_args, capability, num_warps):
    """The TTGIR Triton 3.8 prints for one specialization (locations kept)."""
    source = ASTSource(fn=kernel, **source_args)
    compiled = triton.compile(
        source,
        target=GPUTarget("cuda", capability, 32),
        options={"num_warps": num_warps, "num_stages": 3},
    )
    return compiled.asm["ttgir"].replace(str(KERNELS), KERNELS.name)


def main():
    kernels = load_kernels()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (kernel, args, capability, num_warps) in TABLE.items():
        ttgir = compile_one(getattr(kernels, kernel), args, capability, num_warps)
        (OUT / f"{name}.ttgir").write_text(ttgir)
        print("wrote", name)


if __name__ == "__main__":
    main()
