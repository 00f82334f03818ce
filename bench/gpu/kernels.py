"""The tutorials' memory-bound kernels through Naiad and through Triton on one GPU, side by side.

    python bench/gpu/kernels.py [--rounds 3] [--only add,softmax,layernorm,dropout,compile]

Method (issue 5): the same kernel source (examples/, its two `naiad` imports swapped for
`triton`'s in Triton's copy) is launched through both compilers with the same sizes, launch
parameters and preallocated outputs; `triton.testing.do_bench(..., return_mode="median")` times
each, the two interleaved, best of `--rounds`; printed: GB/s of each and the ratio Naiad / Triton
(> 1: Naiad faster). Outputs are checked against torch in the same run before timing.

The compile row measures, in a process where naiad, triton, torch and the CUDA context are ready,
with empty caches and `CUDA_CACHE_DISABLE=1` (so the driver's JIT cache does not help either
side): the first launch of a freshly defined vector add, to completion (a synchronize).

Launch parameters are the tutorials': vector add BLOCK_SIZE 1024; softmax one row per program,
BLOCK_SIZE the next power of two of the row, num_warps 8 (16 at 16384 columns); layer norm f16,
BLOCK_SIZE = min(65536 / 2, next power of two of N), num_warps = min(max(BLOCK_SIZE / 256, 1), 8);
seeded dropout (tutorial 04) BLOCK_SIZE 1024, p = 0.5, on 2^26 f32, whose outputs must be equal.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("CUDA_CACHE_DISABLE", "1")

import torch
import triton
import triton.testing

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT))

import naiad  # noqa: E402  (after the path is set: the working tree, not an installed copy)

_STAGING = Path(tempfile.mkdtemp(prefix="naiad-bench-"))


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def through(path: Path, compiler: str, tag: str = ""):
    """The module at `path` (written with `naiad` imports) with its kernels compiled by
    `compiler` ("naiad" or "triton"). Triton reads a kernel's source from its file, so its copy
    is written to a file of its own; a `tag` gives the kernels a source of their own (a
    comment), for the cold-compile row."""
    if compiler == "triton" or tag:
        text = path.read_text()
        if compiler == "triton":
            text = text.replace("import naiad.language as tl", "import triton.language as tl")
            text = text.replace("import naiad as triton", "import triton")
        if tag:  # a source of its own, so that no in-process cache keyed by source can serve it
            text = text.replace(
                "    pid = tl.program_id(axis=0)", f"    pid = tl.program_id(axis=0)  # {tag}"
            )
        path = _STAGING / f"{compiler}_{path.stem}{tag}.py"
        path.write_text(text)
    return _load(path, f"bench_{compiler}_{path.stem}{tag}")


def tutorial(stem: str, compiler: str, tag: str = ""):
    """examples/<stem>.py compiled by `compiler` (`through`)."""
    return through(EXAMPLES / f"{stem}.py", compiler, tag)


def bench(fn) -> float:
    return triton.testing.do_bench(fn, return_mode="median")


def side_by_side(naiad_fn, triton_fn, nbytes: int, rounds: int) -> dict:
    """Interleaved do_bench medians, best of `rounds` each; GB/s and the ratio."""
    best_n, best_t = float("inf"), float("inf")
    for _ in range(rounds):
        best_n = min(best_n, bench(naiad_fn))
        best_t = min(best_t, bench(triton_fn))
    return {
        "naiad_gbs": nbytes / best_n / 1e6,
        "triton_gbs": nbytes / best_t / 1e6,
        "ratio": best_t / best_n,
    }


def check(name: str, got, want, tol: float) -> None:
    err = ((got.double() - want.double()).norm() / want.double().norm()).item()
    if not err <= tol:
        raise AssertionError(f"{name}: relative error {err:.3g} > {tol}")


def vector_add(rounds: int) -> list:
    n = 1 << 28
    x, y = (torch.rand(n, device="cuda") for _ in range(2))
    out_n, out_t = torch.empty_like(x), torch.empty_like(x)
    kn = tutorial("01_vector_add", "naiad").add_kernel
    kt = tutorial("01_vector_add", "triton").add_kernel
    grid = (triton.cdiv(n, 1024),)

    def run_n():
        kn[grid](x, y, out_n, n, BLOCK_SIZE=1024)

    def run_t():
        kt[grid](x, y, out_t, n, BLOCK_SIZE=1024)

    run_n(), run_t()
    check("vector add", out_n, x + y, 0.0)
    return [("vector add f32 2^28", side_by_side(run_n, run_t, 12 * n, rounds))]


def softmax(rounds: int) -> list:
    kn = tutorial("02_fused_softmax", "naiad").softmax_kernel
    kt = tutorial("02_fused_softmax", "triton").softmax_kernel
    rows = []
    for m, n in ((4096, 1024), (4096, 4096), (2048, 16384)):
        x = torch.randn(m, n, device="cuda")
        out_n, out_t = torch.empty_like(x), torch.empty_like(x)
        block = triton.next_power_of_2(n)
        warps = 16 if n >= 16384 else 8

        def launch(kernel, out, x=x, m=m, n=n, block=block, warps=warps):
            kernel[(m,)](
                out,
                x,
                x.stride(0),
                out.stride(0),
                m,
                n,
                BLOCK_SIZE=block,
                num_stages=1,
                num_warps=warps,
            )

        def run_n(out=out_n, launch=launch):
            launch(kn, out)

        def run_t(out=out_t, launch=launch):
            launch(kt, out)

        run_n(), run_t()
        check(f"softmax {m}x{n}", out_n, torch.softmax(x, dim=1), 1e-5)
        rows.append((f"softmax f32 {m}x{n}", side_by_side(run_n, run_t, 8 * m * n, rounds)))
    return rows


def layer_norm(rounds: int) -> list:
    kn = tutorial("05_layer_norm", "naiad")._layer_norm_fwd_fused
    kt = tutorial("05_layer_norm", "triton")._layer_norm_fwd_fused
    rows = []
    for m, n in ((4096, 1024), (4096, 4096), (4096, 8192)):
        x = torch.randn(m, n, device="cuda", dtype=torch.float16)
        w = torch.rand(n, device="cuda", dtype=torch.float16)
        b = torch.rand(n, device="cuda", dtype=torch.float16)
        y_n, y_t = torch.empty_like(x), torch.empty_like(x)
        mean, rstd = (torch.empty(m, device="cuda") for _ in range(2))
        block = min(65536 // 2, triton.next_power_of_2(n))
        warps = min(max(block // 256, 1), 8)

        def launch(
            kernel, y, x=x, w=w, b=b, mean=mean, rstd=rstd, m=m, n=n, block=block, warps=warps
        ):
            kernel[(m,)](
                x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK_SIZE=block, num_warps=warps
            )

        def run_n(y=y_n, launch=launch):
            launch(kn, y)

        def run_t(y=y_t, launch=launch):
            launch(kt, y)

        run_n(), run_t()
        want = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
        check(f"layer norm {m}x{n}", y_n, want, 2e-3)
        rows.append((f"layer norm f16 {m}x{n}", side_by_side(run_n, run_t, 4 * m * n, rounds)))
    return rows


def dropout(rounds: int) -> list:
    """The seeded dropout of tutorial 04 (Philox in the kernel): both compilers draw the same
    numbers, so the outputs must be equal."""
    kn = tutorial("04_low_memory_dropout", "naiad")._seeded_dropout
    kt = tutorial("04_low_memory_dropout", "triton")._seeded_dropout
    n = 1 << 26
    x = torch.randn(n, device="cuda")
    out_n, out_t = torch.empty_like(x), torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)

    def run_n():
        kn[grid](x, out_n, n, 0.5, 123, BLOCK_SIZE=1024)

    def run_t():
        kt[grid](x, out_t, n, 0.5, 123, BLOCK_SIZE=1024)

    run_n(), run_t()
    if not torch.equal(out_n, out_t):
        raise AssertionError("seeded dropout: Naiad's output is not Triton's")
    return [("seeded dropout f32 2^26", side_by_side(run_n, run_t, 8 * n, rounds))]


def compile_time(rounds: int) -> list:
    """First launch of a freshly loaded vector add, to completion, empty caches (best of rounds)."""
    x, y = (torch.rand(4096, device="cuda") for _ in range(2))
    out = torch.empty_like(x)
    times = {"naiad": [], "triton": []}
    for index in range(rounds):
        for compiler in ("naiad", "triton"):
            cache = tempfile.mkdtemp(prefix=f"{compiler}-cache-")
            os.environ["TRITON_CACHE_DIR" if compiler == "triton" else "NAIAD_CACHE_DIR"] = cache
            kernel = tutorial("01_vector_add", compiler, tag=f"_{index}").add_kernel
            torch.cuda.synchronize()
            start = time.perf_counter()
            kernel[(4,)](x, y, out, 4096, BLOCK_SIZE=1024)
            torch.cuda.synchronize()
            times[compiler].append(time.perf_counter() - start)
    n, t = min(times["naiad"]), min(times["triton"])
    return [
        ("compile + first launch, vector add (s)", {"naiad_s": n, "triton_s": t, "ratio": n / t})
    ]


SECTIONS = {
    "add": vector_add,
    "softmax": softmax,
    "layernorm": layer_norm,
    "dropout": dropout,
    "compile": compile_time,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default=",".join(SECTIONS))
    args = parser.parse_args()
    props = torch.cuda.get_device_properties(0)
    print(
        f"# {time.strftime('%Y-%m-%d')}  {props.name}  torch {torch.__version__}  "
        f"triton {triton.__version__}  naiad {getattr(naiad, '__version__', '?')}"
    )
    print("| kernel | Naiad | Triton | Naiad / Triton |")
    print("|---|---|---|---|")
    for name in args.only.split(","):
        try:
            rows = SECTIONS[name](args.rounds)
        except Exception as exc:  # report and go on: one failing row must not hide the others
            print(f"| {name} | failed: {type(exc).__name__}: {str(exc)[:200]} | | |")
            continue
        for label, row in rows:
            if "naiad_s" in row:
                print(
                    f"| {label} | {row['naiad_s']:.3f} s | {row['triton_s']:.3f} s | "
                    f"{row['ratio']:.2f} (time) |"
                )
            else:
                print(
                    f"| {label} | {row['naiad_gbs']:.0f} GB/s | {row['triton_gbs']:.0f} GB/s | "
                    f"{row['ratio']:.3f} |"
                )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
