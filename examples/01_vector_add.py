"""Tutorial 01 — vector addition (Triton's `python/tutorials/01-vector-add.py`, run by Naiad).

The kernel is Triton's tutorial kernel, unchanged but for the imports. The host code around it
(sizes, reference, checks) is Naiad's own; as in Triton's tutorials, the tensors are made on
DEVICE, the active driver's device (the GPU where one is present, else the CPU).
Run alone: `python examples/01_vector_add.py`.
"""

import numpy as np
import torch

import naiad as triton
import naiad.language as tl

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def add_kernel(x_ptr,  # *Pointer* to first input vector.
               y_ptr,  # *Pointer* to second input vector.
               output_ptr,  # *Pointer* to output vector.
               n_elements,  # Size of the vector.
               BLOCK_SIZE: tl.constexpr,  # Number of elements each program should process.
               # NOTE: `constexpr` so it can be used as a shape value.
               ):
    # There are multiple 'programs' processing different data. We identify which program
    # we are here:
    pid = tl.program_id(axis=0)  # We use a 1D launch grid so axis is 0.
    # This program will process inputs that are offset from the initial data.
    # For instance, if you had a vector of length 256 and block_size of 64, the programs
    # would each access the elements [0:64, 64:128, 128:192, 192:256].
    # Note that offsets is a list of pointers:
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # Create a mask to guard memory operations against out-of-bounds accesses.
    mask = offsets < n_elements
    # Load x and y from DRAM, masking out any extra elements in case the input is not a
    # multiple of the block size.
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    # Write x + y back to DRAM.
    tl.store(output_ptr + offsets, output, mask=mask)


# ---------------------------------------------------------------------------------------------
# Host side (Naiad's own)
# ---------------------------------------------------------------------------------------------

def add(x: torch.Tensor, y: torch.Tensor, block_size=1024):
    """x + y for two contiguous 1-D torch tensors of one dtype, on their device."""
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]), )
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=block_size)
    return output


def _errors(out, ref):
    """(max abs error, norm-wise relative error) of `out` against a float64 NumPy reference."""
    diff = out.cpu().double().numpy() - ref
    return float(np.abs(diff).max()), float(np.linalg.norm(diff) / np.linalg.norm(ref))


def check(size=98432, seed=0):
    """fp32 (the tutorial's test size, a ragged last block) and fp16 tensors on DEVICE."""
    torch.manual_seed(seed)
    x, y = torch.rand(size, device=DEVICE), torch.rand(size, device=DEVICE)
    out = add(x, y)
    max_err, rel = _errors(out, x.cpu().double().numpy() + y.cpu().double().numpy())
    # One correctly rounded fp32 addition per element.
    assert rel <= 2.0 ** -24, f"fp32 vector add: relative error {rel:.2e}"

    # fp16 values drawn on the host, so every device adds the same numbers.
    rng = np.random.default_rng(seed)
    xh = rng.standard_normal(size // 7).astype(np.float16)
    yh = rng.standard_normal(size // 7).astype(np.float16)
    out_h = add(torch.tensor(xh, device=DEVICE), torch.tensor(yh, device=DEVICE))
    max_err_h, rel_h = _errors(out_h, xh.astype(np.float64) + yh.astype(np.float64))
    assert rel_h <= 2.0 ** -11, f"fp16 vector add: relative error {rel_h:.2e}"
    return {"max_err": max(max_err, max_err_h), "rel_err": max(rel, rel_h)}


def main():
    result = check()
    print(f"vector_add: ok (max err {result['max_err']:.2e}, rel {result['rel_err']:.1e})")
    return result


if __name__ == "__main__":
    main()
