"""Regenerate tests/fixture_kernels/ttgir/linear_layouts.json and default_blocked.json: Triton
3.8's linear layouts of seeded random encodings (several CTAs among them), and the default
blocked layouts its convert-triton-to-tritongpu pass gives tensors of random shapes: the
references Naiad's layout conversions and its `BlockedEncodingAttr.default` are checked
against.

    /tmp/tvenv/bin/python scripts/linear_layout_fixtures.py

Needs the real `triton` (3.8), no GPU: each encoding is built through Gluon's layout classes,
and `to_linear_layout` (Triton's own C++ conversion) gives its bases for a shape. A record holds
a type of that shape and encoding as Triton prints it (`tensor<4x8xf32, #ttg.blocked<{...}>>`,
`!ttg.memdesc<...>`: Naiad's tests parse that text) and the bases per input dimension. Cases
Triton refuses are skipped.
"""

from __future__ import annotations

import json
import random
import re
import tempfile
from pathlib import Path

import triton.experimental.gluon.language as ttgl
from triton._C.libtriton import ir, passes
from triton._C.libtriton.gluon_ir import GluonOpBuilder

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixture_kernels" / "ttgir"
COUNT = 60  # cases per family


def split(rng, total, rank):
    """`total` (a power of two) as a product of `rank` powers of two."""
    parts = [1] * rank
    while total > 1:
        parts[rng.randrange(rank)] *= 2
        total //= 2
    return parts


def shape(rng, rank, most=256):
    return [1 << rng.randrange(most.bit_length()) for _ in range(rank)]


def blocked(rng, rank):
    order = list(range(rank))
    rng.shuffle(order)
    return ttgl.BlockedLayout(
        [1 << rng.randrange(4) for _ in range(rank)],
        split(rng, 32, rank),
        split(rng, 1 << rng.randrange(4), rank),
        order,
    )


def mma(rng, rank, cga=()):
    instr = [16, 8] if rank == 2 else [1, 16, 8]
    warps = split(rng, 1 << rng.randrange(4), rank)
    return ttgl.NVMMADistributedLayout([2, 0], warps, instr, list(cga))


def cga_layout(rng, rank):
    """1 or 2 CTA bits, each splitting one dimension further (or broadcast)."""
    placed = [0] * rank
    bases = []
    for _ in range(rng.choice([1, 2])):
        vector = [0] * rank
        if rng.random() < 0.8:
            d = rng.randrange(rank)
            vector[d] = 1 << placed[d]
            placed[d] += 1
        bases.append(vector)
    return bases


def family_cases(rng):
    """(family, layout, shape) for each family, seeded."""
    for _ in range(COUNT):
        rank = rng.choice([1, 2, 2, 3])
        yield "blocked", blocked(rng, rank), shape(rng, rank)
    for _ in range(COUNT):
        rank = rng.choice([2, 2, 3])
        yield "mma", mma(rng, rank), shape(rng, rank)
    for _ in range(COUNT):
        rank = rng.choice([2, 3])
        parent = blocked(rng, rank) if rng.random() < 0.5 else mma(rng, rank)
        yield "slice", ttgl.SliceLayout(rng.randrange(rank), parent), shape(rng, rank - 1)
    for _ in range(COUNT):
        rank = rng.choice([2, 2, 3])
        layout = ttgl.DotOperandLayout(rng.randrange(2), mma(rng, rank), rng.choice([1, 2, 4, 8]))
        yield "dot_mma", layout, shape(rng, rank, 128)
    for _ in range(COUNT):
        rank = rng.choice([2, 3])
        layout = ttgl.DotOperandLayout(rng.randrange(2), blocked(rng, rank), 0)
        yield "dot_blocked", layout, shape(rng, rank, 64)
    for _ in range(COUNT):
        rank = rng.choice([1, 2, 2, 3])
        order = list(range(rank))
        rng.shuffle(order)
        layout = ttgl.SwizzledSharedLayout(
            rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4]), rng.choice([1, 2, 4, 8]), order
        )
        yield "swizzled_shared", layout, shape(rng, rank)
    for _ in range(COUNT):
        rank = rng.choice([1, 2, 2])
        b = blocked(rng, rank)
        cga = cga_layout(rng, rank)
        order = list(range(rank))
        rng.shuffle(order)
        layout = rng.choice(
            [
                ttgl.BlockedLayout(
                    b.size_per_thread, b.threads_per_warp, b.warps_per_cta, b.order, cga
                ),
                ttgl.SwizzledSharedLayout(rng.choice([1, 2, 4]), 1, rng.choice([1, 4]), order, cga),
            ]
            + ([mma(rng, rank, cga)] if rank == 2 else [])
        )
        yield "cga", layout, shape(rng, rank)


def bases_of(result) -> dict:
    if hasattr(result, "reg_bases"):
        return {
            "register": result.reg_bases,
            "lane": result.lane_bases,
            "warp": result.warp_bases,
            "block": result.block_bases,
        }
    return {"offset": result.offset_bases, "block": result.block_bases}


def default_blocked_records(ctx, rng):
    """(num_warps, shape, encoding text) of the layout convert-triton-to-tritongpu gives a
    constant of each random shape."""
    records = []
    for num_warps in (1, 2, 4, 8):
        shapes = [[1 << rng.randrange(9) for _ in range(rng.choice([1, 2, 3]))] for _ in range(12)]
        body = "".join(
            f"    %c{i} = arith.constant dense<0> : tensor<{'x'.join(map(str, s))}xi32>\n"
            for i, s in enumerate(shapes)
        )
        text = f"module {{\n  tt.func @f() {{\n{body}    tt.return\n  }}\n}}\n"
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write(text)
            f.flush()
            module = ir.parse_mlir_module(f.name, ctx)
        manager = ir.pass_manager(ctx)
        passes.ttir.add_convert_to_ttgpuir(manager, "cuda:90", num_warps, 32, 1)
        manager.run(module, "convert")
        printed = module.str()
        aliases = dict(re.findall(r"^(#\w+) = (.*)$", printed, re.M))
        for shape in shapes:
            dims = "x".join(map(str, shape))
            alias = re.search(rf"dense<0> : tensor<{dims}xi32, (#\w+)>", printed).group(1)
            records.append({"num_warps": num_warps, "shape": shape, "encoding": aliases[alias]})
    return records


def write_lines(name, records):
    lines = ",\n".join(json.dumps(r, separators=(",", ":")) for r in records)
    (OUT / name).write_text("[\n" + lines + "\n]\n")


def main():
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = GluonOpBuilder(ctx)
    rng = random.Random(20260522)
    records = []
    for family, layout, dims in family_cases(rng):
        try:
            attr = layout._to_ir(builder)
            result = builder.to_linear_layout(attr, dims)
        except Exception:  # Triton refuses the case: skip it
            continue
        if isinstance(layout, ttgl.SwizzledSharedLayout):
            type_text = builder.get_shared_mem_desc_ty(builder.get_half_ty(), dims, attr, dims)
        else:
            type_text = builder.get_distributed_ty(builder.get_float_ty(), dims, attr)
        records.append({"family": family, "type": str(type_text), "bases": bases_of(result)})
    OUT.mkdir(parents=True, exist_ok=True)
    write_lines("linear_layouts.json", records)
    defaults = default_blocked_records(ctx, random.Random(5))
    write_lines("default_blocked.json", defaults)
    print(len(records), "layouts,", len(defaults), "default layouts")


if __name__ == "__main__":
    main()
