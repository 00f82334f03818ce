"""Regenerate the Triton TTGIR fixtures in tests/fixture_kernels/ttgir/.

    /tmp/tvenv/bin/python scripts/ttgir_fixtures.py

Needs the real `triton` (3.8) and no GPU: each kernel below is compiled for one CUDA target with
`triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32))` and `asm["ttgir"]` is written
as `<name>.ttgir`. Naiad's tests never import this script or triton; they parse the files (the
`ttg` dialect's round trip on text Triton itself printed). This script's path in the locations
is cut to its file name, so the fixtures do not depend on the checkout (locations inside Triton's
library, `tl.sum`, keep the path of the triton install that made them).
"""

from __future__ import annotations

from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixture_kernels" / "ttgir"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x + y, mask=m)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(y_ptr + rn[None, :] * M + rm[:, None], x)


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(y_ptr + rm, tl.sum(x, axis=1))
    tl.store(y_ptr + M + rn, tl.max(x, axis=0))


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    c = acc.to(tl.float16)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], c, mask=mask)


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
TABLE = {  # name -> (kernel, ASTSource arguments, compute capability, num_warps)
    "add_sm90": (
        add_kernel,
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
        softmax_kernel,
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
        transpose_kernel,
        dict(
            signature={"x_ptr": "*fp16", "y_ptr": "*fp16", "M": "constexpr", "N": "constexpr"},
            constexprs={"M": 64, "N": 32},
            attrs={(0,): D16, (1,): D16},
        ),
        80,
        4,
    ),
    "row_sum_sm80": (
        row_sum_kernel,
        dict(
            signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "constexpr", "N": "constexpr"},
            constexprs={"M": 32, "N": 64},
            attrs={(0,): D16, (1,): D16},
        ),
        80,
        2,
    ),
    "matmul_sm80": (matmul_kernel, MATMUL, 80, 8),
}


def compile_one(kernel, source_args, capability, num_warps):
    """The TTGIR Triton 3.8 prints for one specialization (locations kept)."""
    source = ASTSource(fn=kernel, **source_args)
    compiled = triton.compile(
        source,
        target=GPUTarget("cuda", capability, 32),
        options={"num_warps": num_warps, "num_stages": 3},
    )
    return compiled.asm["ttgir"].replace(str(Path(__file__).resolve()), "ttgir_fixtures.py")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (kernel, args, capability, num_warps) in TABLE.items():
        (OUT / f"{name}.ttgir").write_text(compile_one(kernel, args, capability, num_warps))
        print("wrote", name)


if __name__ == "__main__":
    main()
