"""Loops of dots: a K loop that multiplies loaded tiles into a loop-carried accumulator, which
the kernel generator adds to some of its kernels (issue 14), at a random place of the body:

    dr = pid * DOT_M + tl.arange(0, DOT_M)
    dc = tl.arange(0, DOT_N)
    dk = tl.arange(0, DOT_K)
    dacc = tl.zeros([DOT_M, DOT_N], tl.float32)
    for kk in tl.range(0, dot_k, DOT_K, num_stages=3):
        da = tl.load(DOT_A + dr[:, None] * dot_k + (kk + dk)[None, :],
                     mask=(dr[:, None] < dot_m) & ((kk + dk)[None, :] < dot_k), other=0.0)
        db = tl.load(DOT_B + (kk + dk)[:, None] * dot_n + dc[None, :], mask=..., other=0.0)
        dacc = tl.dot(da, db, dacc, input_precision="ieee")
    tl.store(DOT_C + dr[:, None] * dot_n + dc[None, :], dacc, mask=...)

Each program computes one DOT_M x DOT_N tile of C = A @ B (A is dot_m x dot_k, B dot_k x
dot_n, both row-major; rows and columns past the extents are masked). The choices: the
operand dtype and the accumulator's (fp16 into fp32 or fp16, bf16 and fp32 into fp32, int8
into int32); for fp32, tf32 allowed or not as Triton spells it (the default, `allow_tf32=`,
`input_precision=`); `range`, `tl.range(..., num_stages=)` or a count of tiles; addresses
indexed by the induction variable or carried and advanced each trip; the K tail masked as
`kk + dk < dot_k` or `dk < dot_k - kk`; B read row-major, through column strides or through
`tl.trans`; and beside the dot, a row vector loaded each trip and added to the accumulator,
and a store of the A tile each trip (a loop that writes global memory). Each launch draws
the trip count: none, one, a few or many, with a ragged last tile half the time and a K
that is a multiple of 16 half the time (the NVIDIA pipeliner copies 16-byte vectors only
then).

A float accumulator is held to the dot's norm-wise row (tf32's when the reference rounds the
operands to tf32, as Triton's default on NVIDIA does); an integer one is exact. The choices
come from a stream of their own and the loop's names (`d...`, `DOT_...`) are its own, so
every seed keeps the kernel it had before, with the loop added.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from .generator_arrays import numpy_dtype, random_array

_RATE = 0.25
_MAX_TRIPS = 10

# operand dtype -> (accumulator dtypes, tile depths DOT_K: int8 needs 32 on NVIDIA)
_OPERANDS = {
    "float16": (("float32", "float16"), (16, 32, 64)),
    "bfloat16": (("float32",), (16, 32, 64)),
    "float32": (("float32",), (16, 32)),
    "int8": (("int32",), (32, 64)),
}
# fp32's precision as written -> does the reference (Triton's rule) round operands to tf32?
FP32_PRECISIONS = {
    "": True,  # NVIDIA's default is tf32
    ", allow_tf32=True": True,
    ', input_precision="tf32"': True,
    ", allow_tf32=False": False,
    ', input_precision="ieee"': False,
    ', input_precision="tf32x3"': False,  # three tf32 products: fp32's accuracy
}
_LOOPS = ("range", "tl.range", "count")
_STAGES = (1, 2, 3, 4)


@dataclass(frozen=True)
class DotLoop:
    """One dot loop's choices (see the module doc): what the source says; each launch's
    arguments draw the extents and the trip count (`arguments`). `stages` is read by
    `tl.range` loops only."""

    dtype: str
    acc: str
    blocks: dict
    precision: str
    tf32: bool
    loop: str
    stages: int
    carried: bool
    remaining: bool
    b_layout: str
    init: str
    bias: bool
    copy: bool
    out: str

    @property
    def arrays(self) -> list[str]:
        """The loop's array parameters, inputs first."""
        return ["DOT_A", "DOT_B"] + ["DOT_S"] * self.bias + ["DOT_C"] + ["DOT_T"] * self.copy

    @property
    def scalars(self) -> list[str]:
        """The loop's extents: A is dot_m x dot_k, B dot_k x dot_n."""
        return ["dot_m", "dot_n", "dot_k"]

    @property
    def tolerance(self) -> dict:
        """The tolerance row and reduction length of each output."""
        if self.acc == "int32":
            row = "add"  # integers wrap, and their sum is exact as an addition
        else:
            row = "dot_tf32" if self.tf32 else "dot"
        rows = {"DOT_C": (row, _MAX_TRIPS * self.blocks["DOT_K"])}
        if self.copy:
            rows["DOT_T"] = ("load", None)
        return rows


def _stream(seed: int) -> random.Random:
    return random.Random(f"naiad-generator-dots-{seed}")


def grows_dot_loop(seed: int) -> bool:
    """Whether the kernel of `seed` has a dot loop (without growing the kernel)."""
    return _stream(seed).random() < _RATE


def add_dot_loop(spec) -> None:
    """Maybe add a dot loop to `spec`'s body, at a random place of its top level."""
    rng = _stream(spec.seed)
    if rng.random() >= _RATE:
        return
    dtype = rng.choice(tuple(_OPERANDS))
    accumulators, depths = _OPERANDS[dtype]
    precision = rng.choice(tuple(FP32_PRECISIONS)) if dtype == "float32" else ""
    acc = rng.choice(accumulators)
    loop = DotLoop(
        dtype=dtype,
        acc=acc,
        blocks={
            "DOT_M": rng.choice((16, 32)),
            "DOT_N": rng.choice((16, 32, 64)),
            "DOT_K": rng.choice(depths),
        },
        precision=precision,
        tf32=dtype == "float32" and FP32_PRECISIONS[precision],
        loop=rng.choice(_LOOPS),
        stages=rng.choice(_STAGES),
        carried=rng.random() < 0.5,
        remaining=rng.random() < 0.5,
        b_layout=rng.choice(("rows", "rows", "columns", "trans")),
        init=rng.choice(("zeros", "full")),
        bias=rng.random() < 0.3,
        copy=rng.random() < 0.3,
        out=rng.choice((acc, "float16")) if acc == "float32" else acc,
    )
    spec.body.insert(rng.randint(0, len(spec.body)), loop)


# -- source ----------------------------------------------------------------------------------------
def source(loop: DotLoop) -> list[str]:
    """The loop's lines, at the indentation of the statement it replaces."""
    zero = "0" if loop.dtype == "int8" else "0.0"
    k_at = "(kk + dk)"
    a_offsets = f"dr[:, None] * dot_k + {k_at}[None, :]"
    b_offsets, b_mask = _b_tile(loop, k_at)
    a_mask = f"(dr[:, None] < dot_m) & {_k_mask(loop, 'None, :')}"
    lines = [
        "dr = pid * DOT_M + tl.arange(0, DOT_M)",
        "dc = tl.arange(0, DOT_N)",
        "dk = tl.arange(0, DOT_K)",
        _init(loop),
    ]
    if loop.carried:
        lines += [
            f"da_ptrs = DOT_A + {a_offsets.replace(k_at, 'dk')}",
            f"db_ptrs = DOT_B + {b_offsets.replace(k_at, 'dk')}",
        ]
    body = []
    if loop.loop == "count":
        body.append("kk = di * DOT_K")
    a_at = "da_ptrs" if loop.carried else f"DOT_A + {a_offsets}"
    b_at = "db_ptrs" if loop.carried else f"DOT_B + {b_offsets}"
    body += [
        f"da = tl.load({a_at}, mask={a_mask}, other={zero})",
        f"db = tl.load({b_at}, mask={b_mask}, other={zero})",
    ]
    if loop.b_layout == "trans":
        body.append("db = tl.trans(db)")
    out_dtype = f", out_dtype=tl.{loop.acc}" if loop.acc != "float32" else ""
    update = f"dacc = tl.dot(da, db, dacc{loop.precision}{out_dtype})"
    if loop.bias:
        bias = "tl.load(DOT_S + (kk // DOT_K) * DOT_N + dc, mask=dc < dot_n, other=0)"
        update += f" + {bias}[None, :]"
    body.append(update)
    if loop.copy:
        body.append(f"tl.store(DOT_T + {a_offsets}, da, mask={a_mask})")
    if loop.carried:
        stride = "DOT_K" if loop.b_layout != "rows" else "DOT_K * dot_n"
        body += ["da_ptrs += DOT_K", f"db_ptrs += {stride}"]
    lines.append(_header(loop))
    lines += ["    " + line for line in body]
    result = "dacc" if loop.out == loop.acc else f"dacc.to(tl.{loop.out})"
    c_mask = "(dr[:, None] < dot_m) & (dc[None, :] < dot_n)"
    lines.append(f"tl.store(DOT_C + dr[:, None] * dot_n + dc[None, :], {result}, mask={c_mask})")
    return lines


def _header(loop: DotLoop) -> str:
    if loop.loop == "count":
        return "for di in range(0, tl.cdiv(dot_k, DOT_K)):"
    if loop.loop == "tl.range":
        return f"for kk in tl.range(0, dot_k, DOT_K, num_stages={loop.stages}):"
    return "for kk in range(0, dot_k, DOT_K):"


def _k_mask(loop: DotLoop, axis: str) -> str:
    """The ragged K tail's mask, along `axis` of the tile."""
    if loop.remaining:
        return f"(dk[{axis}] < dot_k - kk)"
    return f"((kk + dk)[{axis}] < dot_k)"


def _b_tile(loop: DotLoop, k_at: str) -> tuple[str, str]:
    """B's offsets and mask: a K x N tile of the row-major dot_k x dot_n B, or (columns,
    trans) of B stored transposed, dot_n x dot_k, read through strides or as an N x K tile."""
    n_mask = "(dc[None, :] < dot_n)"
    if loop.b_layout == "rows":
        return f"{k_at}[:, None] * dot_n + dc[None, :]", f"{_k_mask(loop, ':, None')} & {n_mask}"
    if loop.b_layout == "columns":
        return f"dc[None, :] * dot_k + {k_at}[:, None]", f"{_k_mask(loop, ':, None')} & {n_mask}"
    return (
        f"dc[:, None] * dot_k + {k_at}[None, :]",
        f"(dc[:, None] < dot_n) & {_k_mask(loop, 'None, :')}",
    )


def _init(loop: DotLoop) -> str:
    if loop.init == "zeros":
        return f"dacc = tl.zeros([DOT_M, DOT_N], tl.{loop.acc})"
    value = "3" if loop.acc == "int32" else "0.5"
    return f"dacc = tl.full([DOT_M, DOT_N], {value}, tl.{loop.acc})"


# -- arguments -------------------------------------------------------------------------------------
def arguments(loop: DotLoop, programs: int, rng: np.random.Generator) -> dict:
    """The loop's arguments for a launch of `programs` programs: extents with ragged edges,
    a trip count of none, one, a few or many tiles, random operands (never zero) and outputs."""
    block_m, block_n, block_k = (loop.blocks[k] for k in ("DOT_M", "DOT_N", "DOT_K"))
    dot_m = int(rng.integers((programs - 1) * block_m + 1, programs * block_m + 1))
    dot_n = block_n if rng.random() < 0.5 else int(rng.integers(1, block_n + 1))
    trips = int(rng.choice([0, 1, int(rng.integers(2, 4)), int(rng.integers(6, _MAX_TRIPS + 1))]))
    if trips == 0:
        dot_k = 0
    elif rng.random() < 0.5:  # a multiple of 16, ragged when the tile is deeper
        dot_k = (trips - 1) * block_k + 16 * int(rng.integers(1, block_k // 16 + 1))
    else:
        dot_k = (trips - 1) * block_k + int(rng.integers(1, block_k + 1))
    args = {
        "DOT_A": random_array(loop.dtype, (max(dot_m * dot_k, 1),), rng),
        "DOT_B": random_array(loop.dtype, (max(dot_k * dot_n, 1),), rng),
        "DOT_C": np.zeros(dot_m * dot_n, numpy_dtype(loop.out)),
        "dot_m": dot_m,
        "dot_n": dot_n,
        "dot_k": dot_k,
        **loop.blocks,
    }
    if loop.bias:
        args["DOT_S"] = random_array(loop.acc, (max(trips, 1) * block_n,), rng)
    if loop.copy:
        args["DOT_T"] = np.zeros(max(dot_m * dot_k, 1), numpy_dtype(loop.dtype))
    return args
