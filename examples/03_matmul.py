"""Tutorial 03 — matrix multiplication (Triton's `python/tutorials/03-matrix-multiplication.py`).

Triton's grouped-ordering ("L2 swizzled") matmul, unchanged but for the imports: `@autotune` over
configs keyed on `M, N, K`, fp16 inputs, an fp32 accumulator (`acc = tl.dot(a, b, acc)`), a masked
K tail, and `leaky_relu` fused through the constexpr `ACTIVATION`. The configs are small ones of our
own, sized for the interpreter (the tutorial's are for GPUs); the host code is Naiad's own, its
tensors made on DEVICE, the active driver's device. Run alone: `python examples/03_matmul.py`.
"""

import time

import numpy as np
import torch

import naiad as triton
import naiad.language as tl

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


def _time_once(fn, quantiles=None):
    """A one-shot benchmarker for the autotuner: the interpreter runs each config once. A GPU
    runs launches asynchronously, so the time is taken after the device is done."""
    start = time.perf_counter()
    fn()
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)
    ms = (time.perf_counter() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


def get_autotune_config():
    # Three small tilings (the tutorial lists 8 GPU-sized ones); GROUP_SIZE_M=2 makes the
    # grouped program ordering visible at these sizes.
    return [
        triton.Config({'BLOCK_SIZE_M': 32, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 2}, num_stages=3,
                      num_warps=4),
        triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=4,
                      num_warps=4),
        triton.Config({'BLOCK_SIZE_M': 32, 'BLOCK_SIZE_N': 64, 'BLOCK_SIZE_K': 64, 'GROUP_SIZE_M': 2}, num_stages=4,
                      num_warps=4),
    ]


# `triton.jit`'ed functions can be auto-tuned by using the `triton.autotune` decorator, which consumes:
#   - A list of `triton.Config` objects that define different configurations of
#       meta-parameters (e.g., `BLOCK_SIZE_M`) and compilation options (e.g., `num_warps`) to try
#   - An auto-tuning *key* whose change in values will trigger evaluation of all the
#       provided configs
@triton.autotune(
    configs=get_autotune_config(),
    key=['M', 'N', 'K'],
    do_bench=_time_once,
)
@triton.jit
def matmul_kernel(
        # Pointers to matrices
        a_ptr, b_ptr, c_ptr,
        # Matrix dimensions
        M, N, K,
        # The stride variables represent how much to increase the ptr by when moving by 1
        # element in a particular dimension. E.g. `stride_am` is how much to increase `a_ptr`
        # by to get the element one row down (A has M rows).
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,
        # Meta-parameters
        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,  #
        GROUP_SIZE_M: tl.constexpr,  #
        ACTIVATION: tl.constexpr  #
):
    """Kernel for computing the matmul C = A x B.
    A has shape (M, K), B has shape (K, N) and C has shape (M, N)
    """
    # -----------------------------------------------------------
    # Map program ids `pid` to the block of C it should compute.
    # This is done in a grouped ordering to promote L2 data reuse.
    # See above `L2 Cache Optimizations` section for details.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # ----------------------------------------------------------
    # Create pointers for the first blocks of A and B.
    # We will advance this pointer as we move in the K direction
    # and accumulate
    # `a_ptrs` is a block of [BLOCK_SIZE_M, BLOCK_SIZE_K] pointers
    # `b_ptrs` is a block of [BLOCK_SIZE_K, BLOCK_SIZE_N] pointers
    # See above `Pointer Arithmetic` section for details
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    # -----------------------------------------------------------
    # Iterate to compute a block of the C matrix.
    # We accumulate into a `[BLOCK_SIZE_M, BLOCK_SIZE_N]` block
    # of fp32 values for higher accuracy.
    # `accumulator` will be converted back to fp16 after the loop.
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        # Load the next block of A and B, generate a mask by checking the K dimension.
        # If it is out of bounds, set it to 0.
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        # We accumulate along the K dimension.
        accumulator = tl.dot(a, b, accumulator)
        # Advance the ptrs to the next K block.
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    # You can fuse arbitrary activation functions here
    # while the accumulator is still in FP32!
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)

    # -----------------------------------------------------------
    # Write back the block of the output matrix C with masks.
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


# We can fuse `leaky_relu` by providing it as an `ACTIVATION` meta-parameter in `matmul_kernel`.
@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


# ---------------------------------------------------------------------------------------------
# Host side (Naiad's own)
# ---------------------------------------------------------------------------------------------

def matmul(a, b, activation="", config=None):
    """C = activation(A @ B) for torch tensors A (M, K), B (K, N); C is fp16. With `config`,
    that config is launched directly instead of the autotuner's choice."""
    assert a.shape[1] == b.shape[0], "incompatible dimensions"
    assert a.is_contiguous(), "A must be contiguous"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), )
    kernel, meta = (matmul_kernel, {}) if config is None else (matmul_kernel.fn, config.all_kwargs())
    kernel[grid](
        a, b, c,
        M, N, K,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        ACTIVATION=activation,
        **meta)
    return c


def reference(a, b, activation=""):
    c = a.cpu().double().numpy() @ b.cpu().double().numpy()
    if activation == "leaky_relu":
        c = np.where(c >= 0, c, 0.01 * c)
    return c


def _check_one(M, N, K, activation, generator, dtype=torch.float16, config=None):
    a = torch.randn((M, K), generator=generator, device=DEVICE).to(dtype)
    b = torch.randn((K, N), generator=generator, device=DEVICE).to(dtype)
    c = matmul(a, b, activation, config)
    ref = reference(a, b, activation)
    diff = c.cpu().double().numpy() - ref
    rel = float(np.linalg.norm(diff) / np.linalg.norm(ref))
    # fp16 products are exact in fp32; the error is the final rounding to fp16 (2^-11) plus fp32
    # accumulation over K terms. fp32 inputs go through tl.dot as tf32 (10-bit mantissas, as on
    # the GPU), which adds up to 2^-11 per input of each product.
    bound = 2.0 ** -11 + 4 * K * 2.0 ** -24 + (2.0 ** -9 if dtype == torch.float32 else 0.0)
    assert rel <= bound, f"matmul {M}x{N}x{K} {dtype} {activation!r}: rel {rel:.2e} > {bound:.1e}"
    return float(np.abs(diff).max()), rel


def check(M=128, N=96, K=64, seed=0, every_config=True):
    """The tutorial's fp16 test at a small size; a ragged shape (masked K tail, wrapped M/N
    offsets) with leaky_relu fused; fp32 inputs (a tf32 dot). Each case is a new tuning key.
    The autotuner runs every config but keeps the best one's output only, so with
    `every_config` each config's result is checked too."""
    generator = torch.Generator(device=DEVICE).manual_seed(seed)
    errors = [_check_one(M, N, K, "", generator)]
    best = matmul_kernel.best_config.kwargs
    errors.append(_check_one(M - 27, N - 21, K - 14, "leaky_relu", generator))
    errors.append(_check_one(M, N, K, "", generator, dtype=torch.float32))
    for config in matmul_kernel.configs if every_config else ():
        errors.append(_check_one(M - 27, N - 21, K - 14, "leaky_relu", generator, config=config))
    return {"max_err": max(e for e, _ in errors), "rel_err": max(r for _, r in errors),
            "best_config": "x".join(str(best[f"BLOCK_SIZE_{d}"]) for d in "MNK")}


def main():
    result = check()
    print(f"matmul: ok (max err {result['max_err']:.2e}, rel {result['rel_err']:.1e}; "
          f"best config {result['best_config']})")
    return result


if __name__ == "__main__":
    main()
