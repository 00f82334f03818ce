"""Tutorial 02 — fused softmax (Triton's `python/tutorials/02-fused-softmax.py`, run by Naiad).

The persistent row-softmax kernel is Triton's, unchanged but for the imports: each program walks
the rows `row_start, row_start + row_step, ...` with `tl.range(..., num_stages=num_stages)`. The host
code is Naiad's own; in the interpreter there is no occupancy to compute, so the number of
persistent programs is a fixed, smaller-than-rows count. The tensors are made on DEVICE, the
active driver's device. Run alone: `python examples/02_fused_softmax.py`.
"""

import numpy as np
import torch

import naiad as triton
import naiad.language as tl

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr,
                   num_stages: tl.constexpr):
    # starting row of the program
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        # The stride represents how much we need to increase the pointer to advance 1 row
        row_start_ptr = input_ptr + row_idx * input_row_stride
        # The block size is the next power of two greater than n_cols, so we can fit each
        # row in a single block
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        # Load the row into SRAM, using a mask since BLOCK_SIZE may be > than n_cols
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        # Subtract maximum for numerical stability
        row_minus_max = row - tl.max(row, axis=0)
        # Note that exponentiation in Triton is fast but approximate (i.e., think __expf in CUDA)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        # Write back output to DRAM
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


# ---------------------------------------------------------------------------------------------
# Host side (Naiad's own)
# ---------------------------------------------------------------------------------------------

NUM_PERSISTENT_PROGRAMS = 24  # fewer programs than rows, so every program loops over rows


def softmax(x, num_programs=NUM_PERSISTENT_PROGRAMS):
    """Row-wise softmax of a 2-D torch tensor; the output has x's shape, dtype, strides and
    device."""
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_stages = 2
    y = torch.empty_like(x)
    grid = (min(num_programs, n_rows), 1, 1)
    softmax_kernel[grid](y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE, num_stages,
                         num_warps=8)
    return y


def reference(x):
    x = x.cpu().double().numpy()
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check(n_rows=64, n_cols=781, seed=0):
    """Irregular rows and columns, so the masked tail of each row and the row loop are exercised."""
    torch.manual_seed(seed)
    x = torch.randn(n_rows, n_cols, device=DEVICE)
    y = softmax(x)
    ref = reference(x)
    diff = y.cpu().double().numpy() - ref
    rel = float(np.linalg.norm(diff) / np.linalg.norm(ref))
    assert rel <= 1e-6, f"softmax: relative error {rel:.2e}"
    assert torch.allclose(y, torch.softmax(x, dim=1), atol=1e-6, rtol=1e-5)
    return {"max_err": float(np.abs(diff).max()), "rel_err": rel}


def main():
    result = check()
    print(f"fused_softmax: ok (max err {result['max_err']:.2e}, rel {result['rel_err']:.1e})")
    return result


if __name__ == "__main__":
    main()
