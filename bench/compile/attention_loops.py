"""The main loops of naiad.ops' attention kernels beside the attention tutorial's, compiled for
sm_90a without a GPU (issue 19).

    python bench/compile/attention_loops.py [--heads 64,128] [--backward TUTORIAL] [--out DIR]
    python bench/compile/attention_loops.py --backward-tiles [--heads 64,128]

Each kernel is compiled as a Hopper launch would compile it, from CPU tensors of the launch's
shapes (`warmup(target="cuda:sm_90a")`). Forward: examples/06_fused_attention.py's `_attn_fwd`
through host tensor descriptors of its rows (as the tutorial's host code makes them on Hopper),
naiad.ops' whole-block kernel (flash.forward_launch at its GPU tiles, the same tiles, warps and
stages) and, for the record, the general kernel at the same problem (its GPU tiles, pointers and
masks). With `--backward`, the backward's too: naiad.ops' whole-block dK/dV and dQ kernels
(flash.backward_launches at their GPU tiles), the general ones as a Hopper GPU ran them before
(their GPU tiles, tensor copies of the walked blocks), and where TUTORIAL names Triton's own
06-fused-attention.py (from a checkout; compiled through `naiad.install_as_triton()`) its
`_attn_bwd` at its own launch's config. Printed per kernel: registers and spilled bytes
(ptxas), then each `scf.for` of the TTGIR as its operations counted by name, and the PTX's
counts of the instructions that decide the speed (tensor copies, wgmma, mbarrier waits,
barriers, global loads, layout shuffles through shared memory). `--backward-tiles` compiles the
whole-block backward at each of BACKWARD_TILES instead and prints registers, spilled bytes and
shared memory of both kernels.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path
from unittest import mock

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from naiad.ops.attention import flash  # noqa: E402
from naiad.ops.attention.sdpa import _Problem  # noqa: E402
from naiad.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

TARGET = "cuda:sm_90a"
BATCH, HEADS, LENGTH = 1, 2, 4096
PTX_COUNTS = {
    "tensor copies": r"cp\.async\.bulk\.tensor",
    "cp.async (pointer copies)": r"cp\.async\.(?:ca|cg)",
    "wgmma.mma_async": r"wgmma\.mma_async",
    "wgmma.wait_group": r"wgmma\.wait_group",
    "mbarrier waits": r"mbarrier\.try_wait",
    "bar.sync": r"\bbar\.sync|barrier\.sync",
    "ld.global": r"ld\.global",
    "st.global": r"st\.global",
    "ld.shared": r"ld\.shared",
    "st.shared": r"st\.shared",
    "ex2.approx": r"ex2\.approx",
}


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_tutorial(tutorial, E, causal, block_m, block_n, options):
    rows = torch.empty(BATCH * HEADS * LENGTH, E, dtype=torch.float16)

    def desc(block):
        return TensorDescriptor(rows, [rows.shape[0], E], [E, 1], [block, E])

    lse = torch.empty(rows.shape[0], dtype=torch.float32)
    return tutorial._attn_fwd.fn.warmup(
        E**-0.5, lse, BATCH, HEADS, desc(block_m), desc(block_n), desc(block_n), desc(block_m),
        N_CTX=LENGTH, HEAD_DIM=E, BLOCK_M=block_m, BLOCK_N=block_n, FP8_OUTPUT=False,
        STAGE=3 if causal else 1, warp_specialize=False, IS_HOPPER=True, grid=(1,),
        target=TARGET, **options,
    )  # fmt: skip


def compile_tutorial_backward(tutorial, E, causal):
    """Triton's tutorial `_attn_bwd` at the config its host code launches it with."""
    x = torch.empty(BATCH, HEADS, LENGTH, E, dtype=torch.float16)
    rows = torch.empty(BATCH, HEADS, LENGTH)
    strides = (HEADS * LENGTH * E, LENGTH * E, E, 1)
    return tutorial._attn_bwd.warmup(
        x, x, x, E**-0.5, x, x, x, x, rows, rows, *strides, HEADS, LENGTH, BLOCK_M1=32,
        BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2, HEAD_DIM=E, CAUSAL=causal,
        num_warps=4, num_stages=5, grid=(1,), target=TARGET,
    )  # fmt: skip


@contextlib.contextmanager
def general_on_hopper():
    """flash's choices as a Hopper GPU makes them for the general kernels: their GPU tiles and
    warps, tensor copies where the shapes allow, the whole-block kernels not taken."""
    blocks = flash._blocks
    with contextlib.ExitStack() as stack:
        for name, value in (
            ("_blocks", lambda kernel, _, block_e: blocks(kernel, torch.device("cuda"), block_e)),
            ("_by_tensor_copies", flash.rows_copyable),
            ("_COPIES_FROM", 0),
            ("_whole_tiles", lambda p: None),
            ("_whole_backward_tiles", lambda p, grad: None),
        ):
            stack.enter_context(mock.patch.object(flash, name, value))
        yield


def _tensors(E):
    q, k, v = (torch.empty(BATCH, HEADS, LENGTH, E, dtype=torch.float16) for _ in "qkv")
    return q, k, v, torch.empty(BATCH, HEADS, LENGTH)


def compile_ops(E, causal, tiles):
    """naiad.ops' forward kernel at `tiles` (the whole-block kernel's) or the general one."""
    q, k, v, lse = _tensors(E)
    problem = _Problem(q, k, v, None, 0.0, causal, None)
    gpu_steps = mock.patch.dict(flash._WHOLE_ROTATED, {"cpu": flash._WHOLE_ROTATED["cuda"]})
    with general_on_hopper() if tiles is None else gpu_steps:  # rotated where the GPU's are
        kernel, grid, arguments, options = flash.forward_launch(problem, torch.empty_like(q), lse,
                                                                tiles=tiles)  # fmt: skip
    return kernel.warmup(*arguments, grid=grid, target=TARGET, **options)


def compile_ops_backward(E, causal, tiles) -> list:
    """naiad.ops' dK/dV and dQ kernels at `tiles` (the whole-block kernels') or the general
    ones."""
    q, k, v, lse = _tensors(E)
    problem = _Problem(q, k, v, None, 0.0, causal, None)
    results = [torch.empty_like(t) for t in (q, k, v)]
    with general_on_hopper() if tiles is None else contextlib.nullcontext():
        launches = flash.backward_launches(problem, torch.empty_like(q), lse, lse, *results,
                                           tiles=tiles, dq_sum=torch.zeros(q.shape))  # fmt: skip
    return [kernel.warmup(*a, grid=grid, target=TARGET, **o) for kernel, grid, a, o in launches]


def _tiles(m, n, warps, stages):
    return (m, n, {"num_warps": warps, "num_stages": stages})


# Tile pairs (dK/dV, dQ) of the whole-block backward that `--backward-tiles` compiles: the
# tutorial's, fewer stages, 8 warps over 64 queries, square 64x64 tiles (the spill-free ones
# were timed on an H200; flash._WHOLE_BACKWARD keeps the fastest of each kernel).
BACKWARD_TILES = {
    64: [(_tiles(32, 128, 4, 5), _tiles(128, 32, 4, 5)),
         (_tiles(32, 128, 4, 3), _tiles(128, 32, 4, 3)),
         (_tiles(64, 128, 8, 3), _tiles(128, 64, 8, 3)),
         (_tiles(64, 128, 8, 2), _tiles(128, 64, 8, 2)),
         (_tiles(64, 128, 4, 3), _tiles(128, 64, 4, 3)),
         (_tiles(64, 64, 4, 3), _tiles(64, 64, 4, 3))],
    128: [(_tiles(64, 128, 8, 2), _tiles(128, 64, 8, 2)),
          (_tiles(64, 128, 8, 3), _tiles(128, 64, 8, 3)),
          (_tiles(32, 128, 4, 3), _tiles(128, 32, 4, 3)),
          (_tiles(32, 128, 8, 3), _tiles(128, 32, 8, 3)),
          (_tiles(64, 64, 4, 2), _tiles(64, 64, 4, 2))],
}  # fmt: skip


def backward_tiles(E: int, causal: bool) -> list[str]:
    """One line per pair of BACKWARD_TILES: each kernel's registers, spilled bytes and shared
    memory (KB)."""
    lines = []
    for tiles in BACKWARD_TILES[E]:
        name = ", ".join(f"{m}x{n} w{o['num_warps']} s{o['num_stages']}" for m, n, o in tiles)
        kernels = compile_ops_backward(E, causal, tiles)
        facts = [f"{c.n_regs} / {c.n_spills} / {c.metadata['shared'] / 1024:.0f}" for c in kernels]
        lines.append(f"D{E}{' causal' if causal else ''} {name}: dkdv {facts[0]}, dq {facts[1]}")
    return lines


def loops(ttgir: str) -> list[Counter]:
    """The operations of each scf.for body, counted by name (nested regions included)."""
    found, depth, current = [], 0, None
    for line in ttgir.splitlines():
        if current is None and "scf.for" in line:
            current, depth = Counter(), 0
        if current is None:
            continue
        depth += line.count("{") - line.count("}")
        name = re.search(r"(?:=\s*|^\s*)\"?([a-z_]+\.[a-z_.0-9]+)", line)
        if name and "scf.for" not in line:
            current[name.group(1)] += 1
        if depth <= 0 and "scf.yield" not in line and "scf.for" not in line:
            found.append(current)
            current = None
    return found


def summary(compiled) -> dict:
    ptx = compiled.asm["ptx"]
    return {
        "registers": compiled.n_regs,
        "spilled bytes": compiled.n_spills,
        "loops": [dict(sorted(c.items())) for c in loops(compiled.asm["ttgir"])],
        "ptx": {name: len(re.findall(pattern, ptx)) for name, pattern in PTX_COUNTS.items()},
    }


def table(label: str, results: dict) -> str:
    """One label's kernels side by side: registers, spills, each loop's operations, the PTX."""
    names = list(results)
    lines = [f"## {label}", "", "| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]

    def row(key, values):
        lines.append(f"| {key} | " + " | ".join(str(v) for v in values) + " |")

    row("registers", [results[n]["registers"] for n in names])
    row("spilled bytes", [results[n]["spilled bytes"] for n in names])
    for index in range(max(len(results[n]["loops"]) for n in names)):
        bodies = [
            dict(results[n]["loops"][index : index + 1] and results[n]["loops"][index])
            for n in names
        ]
        for op in sorted(set().union(*bodies)):
            row(f"loop {index + 1}: {op}", [body.get(op, 0) for body in bodies])
    for key in PTX_COUNTS:
        row(f"PTX {key}", [results[n]["ptx"][key] for n in names])
    return "\n".join(lines) + "\n"


def _forward_kernels(tutorial, E, causal) -> tuple[str, dict]:
    tiles = flash._WHOLE["cuda"][(E, causal)]
    block_m, block_n, options = tiles
    settings = " ".join(f"{k}={v}" for k, v in options.items())
    label = f"forward D{E}{' causal' if causal else ''} {block_m}x{block_n} {settings}"
    return label, {
        "tutorial": compile_tutorial(tutorial, E, causal, block_m, block_n, options),
        "naiad.ops whole blocks": compile_ops(E, causal, tiles),
        "naiad.ops general": compile_ops(E, causal, None),
    }


def _backward_kernels(tutorial, E, causal) -> tuple[str, dict]:
    tiles = flash._WHOLE_BACKWARD["cuda"][(E, causal)]
    label = f"backward D{E}{' causal' if causal else ''} " + ", ".join(
        f"{name} {m}x{n} w{o['num_warps']} s{o['num_stages']}"
        for name, (m, n, o) in zip(("dkdv", "dq"), tiles, strict=True)
    )
    kernels = {}
    if tutorial is not None:
        kernels["tutorial _attn_bwd"] = compile_tutorial_backward(tutorial, E, causal)
    dkdv, dq = compile_ops_backward(E, causal, tiles)
    kernels.update({"whole dkdv": dkdv, "whole dq": dq})
    dkdv, dq = compile_ops_backward(E, causal, None)
    kernels.update({"general dkdv": dkdv, "general dq": dq})
    return label, kernels


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heads", default="64,128")
    parser.add_argument("--backward", nargs="?", const="", default=None, metavar="TUTORIAL")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--backward-tiles", action="store_true")
    args = parser.parse_args(argv)
    if args.backward_tiles:  # registers / spilled bytes / shared KB of the candidate pairs
        for E in (int(e) for e in args.heads.split(",")):
            for causal in (False, True):
                print("\n".join(backward_tiles(E, causal)), flush=True)
        return 0
    forward = _load(ROOT / "examples" / "06_fused_attention.py", "tutorial06")
    backward = None
    if args.backward:
        import naiad

        naiad.install_as_triton()
        backward = _load(Path(args.backward), "tutorial06_triton")
    results = {}
    for E in (int(e) for e in args.heads.split(",")):
        for causal in (False, True):
            made = [_forward_kernels(forward, E, causal)]
            if args.backward is not None:
                made.append(_backward_kernels(backward, E, causal))
            for label, kernels in made:
                results[label] = {name: summary(c) for name, c in kernels.items()}
                print(table(label, results[label]), flush=True)
                if args.out:
                    _write(args.out, label, kernels)
    if args.out:
        (args.out / "attention_loops.json").write_text(json.dumps(results, indent=1))
    return 0


def _write(out: Path, label: str, kernels: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, compiled in kernels.items():
        stem = re.sub(r"\W+", "_", f"{label} {name}")
        for stage in ("ttgir", "ptx"):
            (out / f"{stem}.{stage}").write_text(compiled.asm[stage])


if __name__ == "__main__":
    sys.exit(main())
