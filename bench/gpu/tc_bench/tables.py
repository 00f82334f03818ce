"""What bench/gpu/tensor_cores.py measures: the cases (dtype and shape of each matmul, head dim and
mask of each attention) and the launch configs each one runs, full and `--quick`. Plain data:
importing this needs neither torch nor a GPU."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MatmulConfig:
    """One tiling of the matmul: block sizes, warps and pipeline stages; GROUP_SIZE_M is 8."""

    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int

    @property
    def label(self) -> str:
        return f"{self.block_m}x{self.block_n}x{self.block_k} w{self.num_warps} s{self.num_stages}"


# The eight tilings tutorial 03 offers the autotuner on NVIDIA GPUs (fp16/bf16 operands).
MATMUL_CONFIGS = (
    MatmulConfig(128, 256, 64, 8, 3),
    MatmulConfig(64, 256, 32, 4, 4),
    MatmulConfig(128, 128, 32, 4, 4),
    MatmulConfig(128, 64, 32, 4, 4),
    MatmulConfig(64, 128, 32, 4, 4),
    MatmulConfig(128, 32, 32, 4, 4),
    MatmulConfig(64, 32, 32, 2, 5),
    MatmulConfig(32, 64, 32, 2, 5),
)
QUICK_MATMUL_CONFIGS = MATMUL_CONFIGS[:3]  # the three large tiles


@dataclass(frozen=True)
class MatmulCase:
    """C (M, N) = A (M, K) @ B (K, N) with operands of `dtype` (a torch dtype's name)."""

    dtype: str
    M: int
    N: int
    K: int

    @property
    def label(self) -> str:
        shape = f"{self.M}³" if self.M == self.N == self.K else f"{self.M}x{self.N}x{self.K}"
        return f"matmul {DTYPE_LABELS.get(self.dtype, self.dtype)} {shape}"

    @property
    def flops(self) -> int:
        return 2 * self.M * self.N * self.K


DTYPE_LABELS = {
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32 (tf32)",
    "int8": "int8",
    "float8_e4m3fn": "fp8e4m3",
}

MATMUL_CASES = (
    MatmulCase("float16", 4096, 4096, 4096),
    MatmulCase("float16", 8192, 8192, 8192),
    MatmulCase("bfloat16", 4096, 4096, 4096),
    MatmulCase("bfloat16", 8192, 8192, 8192),
    MatmulCase("float16", 16, 8192, 8192),
    MatmulCase("float32", 4096, 4096, 4096),
    MatmulCase("float32", 8192, 8192, 8192),
    MatmulCase("int8", 4096, 4096, 4096),
    MatmulCase("int8", 8192, 8192, 8192),
    MatmulCase("float8_e4m3fn", 4096, 4096, 4096),
    MatmulCase("float8_e4m3fn", 8192, 8192, 8192),
)
QUICK_MATMUL_CASES = MATMUL_CASES[:1]


@dataclass(frozen=True)
class AttentionConfig:
    """Query rows and key columns per block, warps and pipeline stages."""

    block_m: int
    block_n: int
    num_warps: int
    num_stages: int

    @property
    def label(self) -> str:
        return f"{self.block_m}x{self.block_n} w{self.num_warps} s{self.num_stages}"


# Per head dim; BLOCK_N never exceeds the head dim (the tutorial kernel asserts it) and divides
# BLOCK_M (the causal split takes whole key blocks).
ATTENTION_CONFIGS = {
    64: (
        AttentionConfig(128, 64, 4, 3),
        AttentionConfig(64, 64, 4, 3),
        AttentionConfig(128, 32, 4, 3),
    ),
    128: (
        AttentionConfig(128, 128, 8, 3),
        AttentionConfig(128, 64, 4, 3),
        AttentionConfig(64, 64, 4, 3),
    ),
}
QUICK_ATTENTION_CONFIGS = {d: configs[:2] for d, configs in ATTENTION_CONFIGS.items()}


@dataclass(frozen=True)
class AttentionCase:
    """Attention forward over fp16 (Z, H, N, D) tensors through `kernel`: "tutorial" (tutorial
    06's `_attn_fwd`, in-kernel tensor descriptors) or "pointers" (tensor_core_kernels.py);
    `fp8`: tutorial 06's fp8 mode (fp8e5 Q, K, transposed V and output: `FP8_OUTPUT`)."""

    kernel: str
    Z: int
    H: int
    N: int
    D: int
    causal: bool
    fp8: bool = False

    @property
    def label(self) -> str:
        mask = "causal" if self.causal else "non-causal"
        kind = f"{self.kernel} fp8" if self.fp8 else self.kernel
        return f"attention {kind} Z{self.Z} H{self.H} N{self.N} D{self.D} {mask}"

    @property
    def flops(self) -> float:
        full = 4 * self.Z * self.H * self.N * self.N * self.D
        return full / 2 if self.causal else full


ATTENTION_CASES = tuple(
    AttentionCase(kernel, 4, 32, 4096, d, causal)
    for kernel in ("tutorial", "pointers")
    for d in (64, 128)
    for causal in (False, True)
) + tuple(AttentionCase("tutorial", 4, 32, 4096, d, False, fp8=True) for d in (64, 128))
QUICK_ATTENTION_CASES = tuple(
    AttentionCase(kernel, 4, 32, 1024, d, False)
    for kernel in ("tutorial", "pointers")
    for d in (64, 128)
)


def plan(quick: bool, only: set[str], contains: str = "") -> list:
    """(case, configs) of each case a run measures, in order; `contains` (comma-separated
    pieces of text) keeps the cases whose label has one of them."""
    rows = []
    if "matmul" in only:
        configs = QUICK_MATMUL_CONFIGS if quick else MATMUL_CONFIGS
        for case in QUICK_MATMUL_CASES if quick else MATMUL_CASES:
            rows.append((case, configs))
    if "attention" in only:
        table = QUICK_ATTENTION_CONFIGS if quick else ATTENTION_CONFIGS
        for case in QUICK_ATTENTION_CASES if quick else ATTENTION_CASES:
            rows.append((case, table[case.D]))
    pieces = [piece.strip() for piece in contains.split(",") if piece.strip()] or [""]
    return [(case, configs) for case, configs in rows if any(p in case.label for p in pieces)]
