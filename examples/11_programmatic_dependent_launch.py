"""Tutorial 11 — programmatic dependent launch (what Triton's
`python/tutorials/11-programmatic-dependent-launch.py` shows).

A kernel launched with `launch_pdl=True` may start while the kernel before it on the stream is
still running (Hopper and later): its programs first do the work that does not depend on that
kernel, then call `tl.extra.cuda.gdc_wait()`, which returns once the kernel before has finished
and its writes are visible. A kernel lets its dependent start early with
`tl.extra.cuda.gdc_launch_dependents()`: once every one of its programs has called it (or
finished), the dependent may be scheduled; it orders no memory, `gdc_wait` does. So a chain of
short kernels overlaps each one's start with the end of the one before.

The kernels and host code are Naiad's own: a chain of launches, each one step of the recurrence
x_{i+1} = a_i * x_i + b_i over a vector. Each step loads its own b_i before waiting (that read
does not depend on the step before), then waits and reads x_i, which the step before wrote, and
lets the next step start before its own store. The steps ping-pong between two buffers, so a
missing wait would read a half-written vector. Checked against float64 NumPy. Where kernels run
one after another (the CPU, the interpreter, GPUs before Hopper) both calls do nothing and the
launches are ordinary ones. `--bench` times the chain with and without PDL. Run alone:
`python examples/11_programmatic_dependent_launch.py [--bench]`.
"""

import sys

import numpy as np
import torch

import naiad as triton
import naiad.language as tl

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def affine_step_kernel(x_ptr, b_ptr, out_ptr, a, n, BLOCK: tl.constexpr, USE_GDC: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offsets < n
    # b was written before the chain started: read it while the step before may still run.
    b = tl.load(b_ptr + offsets, mask=in_bounds)
    if USE_GDC:
        tl.extra.cuda.gdc_wait()  # x is the step before's output
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    if USE_GDC:
        tl.extra.cuda.gdc_launch_dependents()  # the next step may start its own loads of b
    tl.store(out_ptr + offsets, a * x + b, mask=in_bounds)


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

def supports_pdl() -> bool:
    """Whether launches may overlap: an NVIDIA GPU of compute capability 9 or later. Elsewhere
    `launch_pdl=True` is accepted and the launches run one after another."""
    return DEVICE.type != "cuda" or torch.cuda.get_device_capability(DEVICE)[0] >= 9


def affine_chain(x, a, b, launch_pdl=True, block=1024):
    """x after len(a) steps of x <- a[i] * x + b[i], one launch each: `x` a contiguous fp32
    vector, `a` Python floats, `b` a (steps, len(x)) fp32 tensor."""
    pdl = launch_pdl and supports_pdl()
    current, other = x.clone(), torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), block),)
    for step, a_step in enumerate(a):
        affine_step_kernel[grid](current, b[step], other, a_step, x.numel(), BLOCK=block,
                                 USE_GDC=pdl, launch_pdl=pdl)
        current, other = other, current
    return current


def check(size=98432, steps=8, seed=0):
    """The chain with and without PDL against the recurrence in float64 NumPy."""
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal(size).astype(np.float32)
    a = [float(v) for v in rng.uniform(0.5, 1.5, steps).astype(np.float32)]
    b = rng.standard_normal((steps, size)).astype(np.float32)
    ref = x0.astype(np.float64)
    for a_step, b_step in zip(a, b):
        ref = a_step * ref + b_step
    max_err = rel_err = 0.0
    for launch_pdl in (True, False):
        out = affine_chain(torch.tensor(x0, device=DEVICE), a, torch.tensor(b, device=DEVICE),
                           launch_pdl)
        diff = out.cpu().double().numpy() - ref
        rel = float(np.linalg.norm(diff) / np.linalg.norm(ref))
        # Each step rounds a product and a sum (or one fused multiply-add) in fp32.
        assert rel <= 4 * steps * 2.0**-24, f"chain (pdl={launch_pdl}): relative error {rel:.2e}"
        max_err, rel_err = max(max_err, float(np.abs(diff).max())), max(rel_err, rel)
    return {"max_err": max_err, "rel_err": rel_err}


def bench(size=1 << 16, steps=64):
    """Microseconds per step of a chain of short launches, with and without PDL (the median
    of `triton.testing.do_bench` over the whole chain)."""
    x = torch.randn(size, device=DEVICE)
    b = torch.randn(steps, size, device=DEVICE)
    a = [0.5] * steps
    for launch_pdl in (True, False):
        ms = triton.testing.do_bench(lambda pdl=launch_pdl: affine_chain(x, a, b, pdl),
                                     return_mode="median")
        print(f"  launch_pdl={launch_pdl!s:>5}: {ms * 1e3 / steps:.2f} us per step")


def main():
    result = check()
    mode = "overlapping launches" if DEVICE.type == "cuda" and supports_pdl() else "in order"
    print(f"programmatic_dependent_launch (8 dependent steps, {mode}): ok "
          f"(max err {result['max_err']:.2e}, rel {result['rel_err']:.1e})")
    return result


if __name__ == "__main__":
    main()
    if "--bench" in sys.argv[1:]:
        bench()
