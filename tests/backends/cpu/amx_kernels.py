"""bf16 and int8 dots compiled (never run) in test_matmul_amx.py's child process: the
instructions of AMX and of AVX512-BF16 their code for the child's host target holds, and the
tile instructions one iteration of a K loop runs."""

import asm_loops

import naiad
import naiad.language as tl

WORDS = ("tdpbf16ps", "tdpbssd", "ldtilecfg", "tilerelease", "vdpbf16ps")
KERNELS = ("block", "looped", "int8")


@naiad.jit
def block(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    om, on, ok = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + om[:, None] * K + ok[None, :])
    b = tl.load(b_ptr + ok[:, None] * N + on[None, :])
    tl.store(c_ptr + om[:, None] * N + on[None, :], tl.dot(a, b))


@naiad.jit
def looped(at_ptr, b_ptr, c_ptr, K, M: tl.constexpr, N: tl.constexpr, BK: tl.constexpr):
    """C = A @ B with A stored transposed (K × M), K in steps of BK into one accumulator."""
    om, on, ok = tl.arange(0, M), tl.arange(0, N), tl.arange(0, BK)
    acc = tl.zeros((M, N), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(at_ptr + (k0 + ok)[None, :] * M + om[:, None])
        b = tl.load(b_ptr + (k0 + ok)[:, None] * N + on[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + om[:, None] * N + on[None, :], acc)


@naiad.jit
def accumulated(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B in blocks, K in steps of BK into an accumulator of C's type (int32 for int8:
    test_matmul_amx_emulated.py)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), c.dtype.element_ty)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
        y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


def instruction_counts() -> list[int]:
    """How often each of WORDS occurs in each of KERNELS' assembly: `block` and `looped` on
    bf16, `block` on int8 into int32."""
    types = ("*bf16", "*bf16", "*fp32")
    kernels = [
        block.warmup(*types, grid=(1,), M=64, N=64, K=32, target="cpu"),
        looped.warmup(*types, "i32", grid=(1,), M=64, N=32, BK=64, target="cpu"),
        block.warmup("*i8", "*i8", "*i32", grid=(1,), M=64, N=64, K=64, target="cpu"),
    ]
    return [kernel.asm["asm"].count(word) for kernel in kernels for word in WORDS]


LOOP_WORDS = ("tileloadd", "tilestored", "tdpbf16ps")
LOOP_BLOCKS = ((32, 32), (64, 64))  # C's tiles fit the tile registers / do not (16 tiles)


def k_loop_counts() -> list[int]:
    """How often each of LOOP_WORDS occurs in the K loop of `looped` (bf16, BK 32) with each
    of LOOP_BLOCKS' C."""
    types = ("*bf16", "*bf16", "*fp32", "i32")
    counts = []
    for m, n in LOOP_BLOCKS:
        asm = looped.warmup(*types, grid=(1,), M=m, N=n, BK=32, target="cpu").asm["asm"]
        found = asm_loops.innermost_loop_counts(asm, "looped", "tdpbf16ps", LOOP_WORDS)
        counts += [found[word] for word in LOOP_WORDS]
    return counts
