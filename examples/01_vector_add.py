"""Tutorial 01 — vector addition (Triton's `python/tutorials/01-vector-add.py`, run by Naiad).

The kernel is Triton's tutorial kernel, unchanged but for the imports. The host code around it
(sizes, reference, checks) is Naiad's own. Run alone: `python examples/01_vector_add.py`.
"""

import numpy as np
import torch

import naiad as triton
import naiad.language as tl


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

def add(x, y, block_size=1024):
    """x + y for two contiguous 1-D arrays of one dtype: torch CPU tensors or NumPy arrays."""
    output = torch.empty_like(x) if isinstance(x, torch.Tensor) else np.empty_like(x)
    n_elements = x.numel() if isinstance(x, torch.Tensor) else x.size
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]), )
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=block_size)
    return output


def _errors(out, ref):
    """(max abs error, norm-wise relative error) of `out` against a float64 reference."""
    diff = np.asarray(out, dtype=np.float64) - ref
    return float(np.abs(diff).max()), float(np.linalg.norm(diff) / np.linalg.norm(ref))


def check(size=98432, seed=0):
    """fp32 torch tensors (the tutorial's test size, a ragged last block) and fp16 NumPy arrays."""
    torch.manual_seed(seed)
    x, y = torch.rand(size), torch.rand(size)
    out = add(x, y)
    max_err, rel = _errors(out.numpy(), x.double().numpy() + y.double().numpy())
    # One correctly rounded fp32 addition per element.
    assert rel <= 2.0 ** -24, f"fp32 vector add: relative error {rel:.2e}"

    rng = np.random.default_rng(seed)
    xh = rng.standard_normal(size // 7).astype(np.float16)
    yh = rng.standard_normal(size // 7).astype(np.float16)
    max_err_h, rel_h = _errors(add(xh, yh), xh.astype(np.float64) + yh.astype(np.float64))
    assert rel_h <= 2.0 ** -11, f"fp16 vector add: relative error {rel_h:.2e}"
    return {"max_err": max(max_err, max_err_h), "rel_err": max(rel, rel_h)}


def main():
    result = check()
    print(f"vector_add: ok (max err {result['max_err']:.2e}, rel {result['rel_err']:.1e})")
    return result


if __name__ == "__main__":
    main()
