"""Tutorial 04 — low-memory dropout (Triton's `python/tutorials/04-low-memory-dropout.py`).

Both kernels of the tutorial, unchanged but for the imports and one comparison: `_dropout` with
an explicit keep mask, and `_seeded_dropout`, whose mask is regenerated from one seed with
`tl.rand(seed, offsets)` (Philox-4x32-10). The tutorial hands `tl.where` the int32 mask itself,
which Triton (3.6 and 3.8 alike) accepts with a deprecation warning; here it is compared with 0
first, so the condition is boolean and the example runs without that warning. The host code is Naiad's own, its tensors made on DEVICE (the active driver's
device); it checks the seeded mask bit for bit against an independent NumPy Philox.
Run alone: `python examples/04_low_memory_dropout.py`.
"""

import numpy as np
import torch

import naiad as triton
import naiad.language as tl

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def _dropout(
    x_ptr,  # pointer to the input
    x_keep_ptr,  # pointer to a mask of 0s and 1s
    output_ptr,  # pointer to the output
    n_elements,  # number of elements in the `x` tensor
    p,  # probability that an element of `x` is changed to zero
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    # Load data
    x = tl.load(x_ptr + offsets, mask=mask)
    x_keep = tl.load(x_keep_ptr + offsets, mask=mask) != 0
    # The line below is the crucial part, described in the paragraph above!
    output = tl.where(x_keep, x / (1 - p), 0.0)
    # Write-back output
    tl.store(output_ptr + offsets, output, mask=mask)


@triton.jit
def _seeded_dropout(
    x_ptr,
    output_ptr,
    n_elements,
    p,
    seed,
    BLOCK_SIZE: tl.constexpr,
):
    # compute memory offsets of elements handled by this instance
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # load data from x
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # randomly prune it
    random = tl.rand(seed, offsets)
    x_keep = random > p
    # write-back
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


# ---------------------------------------------------------------------------------------------
# Host side (Naiad's own)
# ---------------------------------------------------------------------------------------------

def dropout(x, x_keep, p):
    output = torch.empty_like(x)
    assert x.is_contiguous()
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]), )
    _dropout[grid](x, x_keep, output, n_elements, p, BLOCK_SIZE=1024)
    return output


def seeded_dropout(x, p, seed):
    output = torch.empty_like(x)
    assert x.is_contiguous()
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]), )
    _seeded_dropout[grid](x, output, n_elements, p, seed, BLOCK_SIZE=1024)
    return output


_MASK32 = np.uint64(0xFFFFFFFF)


def philox_uniform(seed, offsets, rounds=10):
    """NumPy Philox-4x32 (Salmon et al., SC'11) on counters (offset, 0, 0, 0) with key = seed;
    the first output word mapped to [0, 1) as Triton's `uint_to_uniform_float` does."""
    c0 = offsets.astype(np.uint64) & _MASK32
    c1 = c2 = c3 = np.zeros_like(c0)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    for _ in range(rounds):
        p0 = np.uint64(0xD2511F53) * c0  # full 64-bit products of 32-bit words
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & _MASK32,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & _MASK32)
        k0 = (k0 + np.uint64(0x9E3779B9)) & _MASK32
        k1 = (k1 + np.uint64(0xBB67AE85)) & _MASK32
    bits = c0.astype(np.uint32).view(np.int32)
    bits = np.where(bits < 0, -(bits.astype(np.int64)) - 1, bits)
    return bits.astype(np.float32) * np.float32(4.6566127342e-10)


def _rel(out, ref):
    diff = out.cpu().double().numpy() - ref
    return float(np.abs(diff).max()), float(np.linalg.norm(diff) / np.linalg.norm(ref))


def check(n=10_000, p=0.3, seed=123):
    torch.manual_seed(0)
    x = torch.randn(n, device=DEVICE)
    x64 = x.cpu().double().numpy()

    # Baseline: an explicit int32 keep mask.
    x_keep = (torch.rand(n, device=DEVICE) > p).to(torch.int32)
    out = dropout(x, x_keep, p)
    ref = np.where(x_keep.cpu().numpy() != 0, x64 / (1 - p), 0.0)
    err0, rel0 = _rel(out, ref)
    assert rel0 <= 1e-6, f"dropout: rel {rel0:.2e}"

    # Seeded: the mask is a pure function of (seed, offset).
    out1 = seeded_dropout(x, p, seed)
    keep = philox_uniform(seed, np.arange(n)) > np.float32(p)
    assert np.array_equal(out1.cpu().numpy() != 0, keep), "seeded dropout mask differs from Philox"
    err1, rel1 = _rel(out1, np.where(keep, x64 / (1 - p), 0.0))
    assert rel1 <= 1e-6, f"seeded dropout: rel {rel1:.2e}"
    assert torch.equal(out1, seeded_dropout(x, p, seed)), "same seed, different mask"
    assert not torch.equal(out1, seeded_dropout(x, p, 512)), "different seeds, same mask"
    kept = keep.mean()
    assert abs(kept - (1 - p)) < 0.03, f"kept fraction {kept:.3f}, expected {1 - p}"
    return {"max_err": max(err0, err1), "rel_err": max(rel0, rel1)}


def main():
    result = check()
    print(f"low_memory_dropout: ok (max err {result['max_err']:.2e}, rel {result['rel_err']:.1e}; "
          "Philox mask bit-exact)")
    return result


if __name__ == "__main__":
    main()
