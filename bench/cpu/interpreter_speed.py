"""Interpreter speed: Naiad's vs Triton's, on the same kernel source, in one process — and the
same kernel compiled by Naiad for the CPU against Triton's interpreter (the only way Triton runs a
kernel on a CPU).

Run with an environment that has both `naiad` and `triton` (Triton's interpreter needs torch):
    TRITON_INTERPRET=1 python bench/cpu/interpreter_speed.py
Prints milliseconds per program instance (median of `naiad.testing.do_bench`) and the ratios.
"""

from __future__ import annotations

import os
import platform
import textwrap

import numpy as np

os.environ.setdefault("TRITON_INTERPRET", "1")

KERNELS = {
    "vector add (1024)": textwrap.dedent("""
        @jit
        def kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(
                out_ptr + offs,
                tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
                mask=mask,
            )
        """),
    "row softmax (1024)": textwrap.dedent("""
        @jit
        def kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            z = x - tl.max(x, axis=0)
            e = tl.exp(z)
            tl.store(out_ptr + offs, e / tl.sum(e, axis=0))
        """),
}


def _compile(source, jit, tl, filename):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_generated", filename)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:  # kernels must live in a file for both front ends
        f.write("import naiad.language as tl\n" + source if "naiad" in filename else source)
    namespace = {"jit": jit, "tl": tl}
    with open(path) as f:
        code = compile(f.read(), path, "exec")
    exec(code, namespace)
    return namespace["kernel"]


def main():
    import torch
    import triton
    import triton.language as ttl

    import naiad
    import naiad.language as ntl
    from naiad.testing import do_bench

    block, programs = 1024, 64
    n = block * programs
    x, y = torch.rand(n), torch.rand(n)
    out = torch.empty(n)
    print(
        f"# {platform.processor() or platform.machine()}, naiad {naiad.__version__}, "
        f"triton {triton.__version__}, torch {torch.__version__}"
    )
    print(
        f"{'kernel':<22} {'naiad ms/prog':>14} {'triton ms/prog':>15} {'triton/naiad':>13} "
        f"{'naiad cpu ms/prog':>18} {'triton/cpu':>11}"
    )
    for index, (name, source) in enumerate(KERNELS.items()):
        nk = _compile(source, naiad.jit, ntl, f"naiad_{index}.py")
        tk = _compile(source, triton.jit, ttl, f"triton_{index}.py")
        results = []
        for kernel, backend in ((nk, "interpreter"), (tk, None), (nk, "cpu")):
            with naiad.knobs.override(NAIAD_BACKEND=backend or "interpreter"):
                kernel[(programs,)](x, y, out, n, BLOCK=block)
                results.append(
                    do_bench(
                        lambda k=kernel: k[(programs,)](x, y, out, n, BLOCK=block),
                        warmup=100,
                        rep=1000,
                    )
                    / programs
                )
        print(
            f"{name:<22} {results[0]:>14.3f} {results[1]:>15.3f} {results[1] / results[0]:>13.2f} "
            f"{results[2]:>18.5f} {results[1] / results[2]:>11.0f}"
        )
    np.testing.assert_allclose(out.numpy().sum(), programs, rtol=1e-3)


if __name__ == "__main__":
    main()
