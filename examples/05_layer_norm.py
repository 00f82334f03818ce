"""Tutorial 05 — layer normalization (Triton's `python/tutorials/05-layer-norm.py`).

The three kernels of the tutorial, unchanged but for the imports: the fused forward
`_layer_norm_fwd_fused`; the backward `_layer_norm_bwd_dx_fused`, which accumulates partial dW/dB
into GROUP_SIZE_M buffers under a spin lock (`tl.atomic_cas` / `tl.atomic_xchg` /
`tl.debug_barrier`); and `_layer_norm_bwd_dwdb`, which reduces those buffers. The host code (a
torch autograd Function, sizes, the float64 reference) is Naiad's own, its tensors made on DEVICE
(the active driver's device).
Run alone: `python examples/05_layer_norm.py`.
"""

import numpy as np
import torch

import naiad as triton
import naiad.language as tl

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def _layer_norm_fwd_fused(
    X,  # pointer to the input
    Y,  # pointer to the output
    W,  # pointer to the weights
    B,  # pointer to the biases
    Mean,  # pointer to the mean
    Rstd,  # pointer to the 1/std
    stride,  # how much to increase the pointer when moving by 1 row
    N,  # number of columns in X
    eps,  # epsilon to avoid division by zero
    BLOCK_SIZE: tl.constexpr,
):
    # Map the program id to the row of X and Y it should compute.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # Compute mean
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # Compute variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    # Write mean / rstd
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # Normalize and apply linear transformation
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        # Write output
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def _layer_norm_bwd_dx_fused(DX,  # pointer to the input gradient
                             DY,  # pointer to the output gradient
                             DW,  # pointer to the partial sum of weights gradient
                             DB,  # pointer to the partial sum of biases gradient
                             X,  # pointer to the input
                             W,  # pointer to the weights
                             Mean,  # pointer to the mean
                             Rstd,  # pointer to the 1/std
                             Lock,  # pointer to the lock
                             stride,  # how much to increase the pointer when moving by 1 row
                             N,  # number of columns in X
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # Map the program id to the elements of X, DX, and DY it should compute.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    # Offset locks and weights/biases gradient pointer for parallel reduction
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    # Load data to SRAM
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    # Compute dx
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    # Write dx
    tl.store(DX + cols, dx, mask=mask)
    # Accumulate partial sums for dw/db
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    # First store doesn't accumulate
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)

    # need a barrier to ensure all threads finished before
    # releasing the lock
    tl.debug_barrier()

    # Release the lock
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _layer_norm_bwd_dwdb(DW,  # pointer to the partial sum of weights gradient
                         DB,  # pointer to the partial sum of biases gradient
                         FINAL_DW,  # pointer to the weights gradient
                         FINAL_DB,  # pointer to the biases gradient
                         M,  # GROUP_SIZE_M
                         N,  # number of columns
                         BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # Map the program id to the elements of DW and DB it should compute.
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    # Iterate through the rows of DW and DB to sum the partial sums.
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    # Write the final sum to the output.
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


# ---------------------------------------------------------------------------------------------
# Host side (Naiad's own)
# ---------------------------------------------------------------------------------------------

class LayerNorm(torch.autograd.Function):
    """Layer norm over the last dimension, forward and backward by the three kernels above."""

    group_size_m = 8  # partial dW/dB buffers; several rows share each one, so the lock is used

    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps):
        y = torch.empty_like(x)
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        mean = torch.empty((M, ), dtype=torch.float32, device=x.device)
        rstd = torch.empty((M, ), dtype=torch.float32, device=x.device)
        # Rows of up to 64 KB are handled in one block.
        BLOCK_SIZE = min(65536 // x.element_size(), triton.next_power_of_2(N))
        if N > BLOCK_SIZE:
            raise RuntimeError("this layer norm supports feature dimensions below 64 KB")
        num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
        _layer_norm_fwd_fused[(M, )](x_arg, y, weight, bias, mean, rstd, x_arg.stride(0), N, eps,
                                     BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps, num_ctas=1)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        ctx.BLOCK_SIZE, ctx.num_warps, ctx.eps = BLOCK_SIZE, num_warps, eps
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w, _, m, v = ctx.saved_tensors
        N = w.shape[0]
        GROUP_SIZE_M = LayerNorm.group_size_m
        locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32, device=w.device)
        _dw = torch.zeros((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
        _db = torch.zeros((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
        dw = torch.empty((N, ), dtype=w.dtype, device=w.device)
        db = torch.empty((N, ), dtype=w.dtype, device=w.device)
        dy = dy.contiguous()
        dx = torch.empty_like(dy)
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        _layer_norm_bwd_dx_fused[(M, )](dx, dy, _dw, _db, x, w, m, v, locks, x_arg.stride(0), N,
                                        BLOCK_SIZE_N=ctx.BLOCK_SIZE, GROUP_SIZE_M=GROUP_SIZE_M,
                                        num_warps=ctx.num_warps)
        grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE_N"]), )
        _layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, min(GROUP_SIZE_M, M), N,
                                   BLOCK_SIZE_M=32, BLOCK_SIZE_N=128, num_ctas=1)
        return dx, None, dw, db, None


layer_norm = LayerNorm.apply


# Norm-wise relative error bounds against float64. fp16 results carry one fp16 rounding (2^-11);
# the partial dW/dB sums are kept in fp16 buffers (as in the tutorial), so they round once per
# row accumulated into a buffer: their bounds are for up to 64 rows and grow with the rows.
BOUNDS = {torch.float16: {"y": 1e-3, "dx": 1e-3, "dw": 4e-3, "db": 4e-3},
          torch.float32: {"y": 1e-6, "dx": 1e-6, "dw": 2e-6, "db": 2e-6}}


def check_one(M, N, dtype, eps=1e-5, seed=0):
    generator = torch.Generator(device=DEVICE).manual_seed(seed)
    weight = torch.rand((N, ), generator=generator, device=DEVICE).to(dtype).requires_grad_(True)
    bias = torch.rand((N, ), generator=generator, device=DEVICE).to(dtype).requires_grad_(True)
    x = -2.3 + 0.5 * torch.randn((M, N), generator=generator, device=DEVICE)
    x = x.to(dtype).requires_grad_(True)
    dy = (0.1 * torch.randn((M, N), generator=generator, device=DEVICE)).to(dtype)

    y = layer_norm(x, (N, ), weight, bias, eps)
    y.backward(dy)
    got = {"y": y, "dx": x.grad, "dw": weight.grad, "db": bias.grad}

    # Reference: torch's own layer norm in float64 on the host, on the same (rounded) inputs.
    x64, w64, b64 = (t.detach().cpu().double().requires_grad_(True) for t in (x, weight, bias))
    y64 = torch.nn.functional.layer_norm(x64, (N, ), w64, b64, eps)
    y64.backward(dy.cpu().double())
    ref = {"y": y64, "dx": x64.grad, "dw": w64.grad, "db": b64.grad}

    max_err = rel_err = 0.0
    for name, bound in BOUNDS[dtype].items():
        assert got[name].dtype == dtype, (name, got[name].dtype)
        if name in ("dw", "db"):
            bound *= max(1.0, M / 64)
        r = ref[name].detach().cpu().numpy()
        diff = got[name].detach().cpu().double().numpy() - r
        rel = float(np.linalg.norm(diff) / np.linalg.norm(r))
        assert rel <= bound, f"layer norm {M}x{N} {dtype}: {name} rel {rel:.2e} > {bound:.0e}"
        max_err, rel_err = max(max_err, float(np.abs(diff).max())), max(rel_err, rel)
    return max_err, rel_err


def check(M=64, N=200):
    """fp16, as the tutorial tests it, and fp32."""
    errors = [check_one(M, N, torch.float16), check_one(M, N, torch.float32, seed=1)]
    return {"max_err": max(e for e, _ in errors), "rel_err": max(r for _, r in errors)}


def main():
    result = check()
    print(f"layer_norm: ok (max err {result['max_err']:.2e}, rel {result['rel_err']:.1e}; "
          "forward + backward)")
    return result


if __name__ == "__main__":
    main()
