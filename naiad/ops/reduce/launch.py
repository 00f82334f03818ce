"""Launching a row kernel (kernels.py) over an (M, N) view: block shapes and the grid.

A program holds a BLOCK_M x BLOCK_N tile: the row's length decides BLOCK_N (whole short rows,
chunks of long ones) and BLOCK_M fills the tile to about TILE elements, so short rows still give
each program real work; long rows on the CPU get a program each. Results are contiguous, one
per row.
"""

from __future__ import annotations

import torch

from ..device_kind import device_kind
from ..dtypes import tl_dtype
from ..kept import KeptTable
from .rows import Rows

__all__ = ["ACCUMULATOR_BLOCK_N", "accumulator", "blocks", "launch_rows"]

TILE = {"cpu": 4096, "cuda": 4096}
# On the CPU, rows this long get a program each: kernels that see BLOCK_M == 1 use 1-D blocks,
# which the CPU back end reduces several times faster than [1, N] tiles (bench/RESULTS.md).
ONE_ROW_FROM = 256
MAX_BLOCK_N = {"cpu": 1024, "cuda": 1024}
# Kernels that keep a BLOCK_N-lane accumulator across a row's blocks (argmax, whose block of
# values and indices the CPU keeps in a buffer) run fastest on the CPU with 256 lanes: over
# 1024 rows of 1024 on one thread, 1024 lanes took 1.78x the time (bench/RESULTS.md). Kernels
# that hold a whole row in one block (softmax, the norms) keep MAX_BLOCK_N: 256 lanes took them
# 1.1-1.4x; so does reduce_kernel, whose block the CPU reduces in the loop at each step
# (backends/cpu/carried_reductions.py): 256 lanes took its sum 1.04x, its amax 1.15x.
ACCUMULATOR_BLOCK_N = {"cpu": 256, "cuda": 1024}
_INDEX32_LIMIT = 2**31 - 1


def _power_of_2_above(n: int) -> int:
    """The smallest power of 2 >= n (naiad.next_power_of_2 is a compile-time function too,
    which costs more per host call)."""
    return 1 << max(n - 1, 0).bit_length()


def blocks(M: int, N: int, device: torch.device, widest=MAX_BLOCK_N) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N) of a row kernel's tile; BLOCK_N at most `widest` of the device."""
    kind = device_kind(device)
    block_n = min(_power_of_2_above(max(N, 1)), widest[kind])
    if kind == "cpu" and N >= ONE_ROW_FROM:
        return 1, block_n
    block_m = min(_power_of_2_above(max(M, 1)), max(1, TILE[kind] // block_n))
    return block_m, block_n


def accumulator(dtype: torch.dtype) -> torch.dtype:
    """The dtype a reduction accumulates in: fp32 for fp16 and bf16."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def columns(rows: Rows) -> bool:
    """Whether the kept positions, not the reduced elements, lie next to each other (a sum over
    the leading dims of a contiguous tensor): then a tile's contiguous axis runs along them."""
    return rows.M > 1 and rows.N > 1 and rows.s_m == 1 and rows.s_n != 1


# Kept positions per program of a column reduction: a GPU takes 32 (a 128-byte row segment of
# fp32), so that 4096 columns make 128 programs, not 16 (a sum over the rows of 4096 x 4096 took
# 0.146 ms on an H200 with 256, against torch's 0.029).
COLUMN_BLOCK_M = {"cpu": 256, "cuda": 32}


def column_blocks(M: int, N: int, device: torch.device) -> tuple[int, int]:
    kind = device_kind(device)
    block_m = min(_power_of_2_above(M), COLUMN_BLOCK_M[kind])
    return block_m, min(_power_of_2_above(N), max(1, TILE[kind] // block_m))


# What launch_rows decides per (kernel, rows' geometry, dtype, constexprs): the grid, the
# launch's keywords and the kernel's launch bound to them (JITFunction.bind_launch); 4096
# kinds.
_LAUNCHES = KeptTable(4096)


def _rows_launch(rows: Rows, compute: torch.dtype, by_columns: bool, lanes: dict, constexprs):
    """(grid, keywords, [its bound launch once made]) of a row kernel's launch over `rows`."""
    data = rows.data
    if by_columns:
        constexprs["COLUMNS"] = columns(rows)
    if constexprs.get("COLUMNS"):
        block_m, block_n = column_blocks(rows.M, rows.N, data.device)
    else:
        block_m, block_n = blocks(rows.M, rows.N, data.device, lanes)
    s_m, s_n = rows.s_m, rows.s_n
    farthest = (rows.M - 1) * abs(s_m) + (rows.N - 1) * abs(s_n) + block_m * abs(s_m) + block_n
    options = {} if data.device.type == "cpu" else {"num_warps": 4}
    keywords = {
        **constexprs,
        "COMPUTE": tl_dtype(compute),
        "INDEX64": farthest > _INDEX32_LIMIT,
        "BLOCK_M": block_m,
        "BLOCK_N": block_n,
        **options,
    }
    return ((rows.M + block_m - 1) // block_m,), keywords, []  # [] until its bound launch


def launch_rows(kernel, rows: Rows, outputs, scalars, compute: torch.dtype, by_columns=False,
                lanes=MAX_BLOCK_N, **constexprs):  # fmt: skip
    """Run `kernel(x, *outputs, M, N, s_m, s_n, 1, *scalars, **constexprs, COMPUTE, INDEX64,
    BLOCK_M, BLOCK_N)` over every row; nothing to do where M == 0. `by_columns`: the kernel
    takes COLUMNS too, and tiles along the kept positions where they are contiguous. `lanes`:
    the widest BLOCK_N per device (MAX_BLOCK_N, or ACCUMULATOR_BLOCK_N for kernels that
    accumulate per lane). Returns the bound launch it ran, `launch(x, *outputs, *scalars)`
    (None where nothing ran), which an op that keeps a plan per kind of call can run itself:
    this key costs a call about a microsecond."""
    if rows.M == 0:
        return None
    data, s_m, s_n = rows.data, rows.s_m, rows.s_n
    # The dtypes of the rows and the first output too: a sum of bf16 into fp32 and one of fp32
    # shared a key, and their calls in turn made the bound launch fall back every time (the
    # Llama step's loss, three sums a call).
    key = (kernel, rows.M, rows.N, s_m, s_n, data.device, data.dtype, outputs[0].dtype,
           compute, by_columns, id(lanes), len(outputs), len(scalars),
           *constexprs.items())  # fmt: skip
    found = _LAUNCHES.get(key)
    if found is None:
        found = _LAUNCHES.put(key, _rows_launch(rows, compute, by_columns, lanes, constexprs))
    grid, keywords, bound = found
    if not bound:  # the rows' tensor, the outputs and the scalars change between calls
        names = kernel.arg_names
        varying = (
            names[0],
            *names[1 : 1 + len(outputs)],
            *names[6 + len(outputs) :][: len(scalars)],
        )
        bound.append(  # typed: the rows' dtype and device are the key's
            kernel.bind_launch(varying, grid, data, *outputs, rows.M, rows.N, s_m, s_n, 1,
                               *scalars, typed=names[:1], **keywords)
        )  # fmt: skip
    bound[0](data, *outputs, *scalars)
    return bound[0]
