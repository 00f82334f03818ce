"""Tutorial 07 — extern functions (what Triton's `python/tutorials/07-extern-functions.py` shows).

A kernel can call the functions of an external math library: `libdevice`, NVIDIA's library of
`__nv_*` functions, imported as Triton programs import it
(`from naiad.language.extra import libdevice`). One name covers every dtype: `libdevice.asin` on an
fp32 tensor calls `__nv_asinf`, on an fp64 tensor `__nv_asin`. On the GPU the calls link
NVIDIA's own bitcode into the kernel (Naiad finds the file itself: Triton's `extern_libs=` launch
option, which names it, is accepted and its path not read); the CPU back end compiles each
function from its own definitions, and the interpreter gives each a NumPy meaning.

The kernels and host code are Naiad's own: `asin` over a vector in fp32 and fp64, and a
Cartesian-to-polar conversion that calls two functions of two arguments (`hypot`, `atan2`).
Checked against float64 NumPy, with ragged last blocks. Run alone:
`python examples/07_extern_functions.py`.
"""

import numpy as np
import torch

import naiad as triton
import naiad.language as tl
from naiad.language.extra import libdevice

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # One block of the vector per program; the dtype of x picks the libdevice symbol.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offsets < n
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    tl.store(y_ptr + offsets, libdevice.asin(x), mask=in_bounds)


@triton.jit
def to_polar_kernel(x_ptr, y_ptr, radius_ptr, angle_ptr, n, BLOCK: tl.constexpr):
    # (x, y) -> (sqrt(x^2 + y^2), the angle of (x, y)): hypot avoids the overflow of squaring,
    # atan2 takes the quadrant from both signs.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offsets < n
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    y = tl.load(y_ptr + offsets, mask=in_bounds)
    tl.store(radius_ptr + offsets, libdevice.hypot(x, y), mask=in_bounds)
    tl.store(angle_ptr + offsets, libdevice.atan2(y, x), mask=in_bounds)


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

def asin(x: torch.Tensor, block=1024):
    """arcsin of a contiguous 1-D fp32 or fp64 tensor, on its device."""
    y = torch.empty_like(x)
    asin_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block)
    return y


def to_polar(x: torch.Tensor, y: torch.Tensor, block=1024):
    """(radius, angle) of the points (x, y), two contiguous 1-D tensors of one dtype."""
    radius, angle = torch.empty_like(x), torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), block),)
    to_polar_kernel[grid](x, y, radius, angle, x.numel(), BLOCK=block)
    return radius, angle


def _errors(out, ref):
    """(max abs error, norm-wise relative error) of `out` against a float64 NumPy reference."""
    diff = out.cpu().double().numpy() - ref
    return float(np.abs(diff).max()), float(np.linalg.norm(diff) / np.linalg.norm(ref))


def check(size=98432, seed=0):
    """asin in fp32 and fp64 over [-1, 1], polar coordinates of points in every quadrant."""
    rng = np.random.default_rng(seed)
    errors = []
    # libdevice's fp32 functions are within a few ulp (2^-23 relative each); fp64 ones likewise.
    for dtype, bound in ((np.float32, 2.0**-21), (np.float64, 2.0**-50)):
        x = rng.uniform(-1, 1, size).astype(dtype)
        out = asin(torch.tensor(x, device=DEVICE))
        errors.append(_errors(out, np.arcsin(x.astype(np.float64))))
        assert errors[-1][1] <= bound, f"asin {dtype.__name__}: relative error {errors[-1][1]:.2e}"
    px, py = (rng.standard_normal(size // 3).astype(np.float32) * 10 for _ in range(2))
    radius, angle = to_polar(torch.tensor(px, device=DEVICE), torch.tensor(py, device=DEVICE))
    x64, y64 = px.astype(np.float64), py.astype(np.float64)
    for name, out, ref in (("hypot", radius, np.hypot(x64, y64)),
                           ("atan2", angle, np.arctan2(y64, x64))):
        errors.append(_errors(out, ref))
        assert errors[-1][1] <= 2.0**-21, f"{name}: relative error {errors[-1][1]:.2e}"
    return {"max_err": max(e for e, _ in errors), "rel_err": max(r for _, r in errors)}


def main():
    result = check()
    print(f"extern_functions (libdevice asin, hypot, atan2): ok "
          f"(max err {result['max_err']:.2e}, rel {result['rel_err']:.1e})")
    return result


if __name__ == "__main__":
    main()
