"""Few long rows split over programs: a reduction whose rows are too few to occupy the CPU.

A row kernel walks each row in one program, so a sum of one row of 16M elements ran on one of
the CPU's threads. Where the rows are contiguous and long, each is reduced instead in `parts`
equal parts: the (M, N) rows are read as (M * parts, N / parts) rows (the same memory), reduced
into partial results of the accumulator's dtype, whose (M, parts) rows the same reduction then
folds. Every reduce_kernel OP folds its own partials (sums, products, extremes, all, any, the
1 and inf norms over nonnegative partials; a mean of equal parts' means; a 2-norm of the parts'
2-norms), so both steps run the same kernel. A GPU's few long rows leave most of its
multiprocessors idle the same way (128 rows made 32 programs for 132 multiprocessors on an
H200), so there the rows are split until the pieces fill every multiprocessor several times.
"""

from __future__ import annotations

import torch

from ..allocate import empty
from ..device_kind import multiprocessors
from .kernels import reduce_kernel
from .launch import blocks, launch_rows
from .rows import Rows

__all__ = ["split_parts", "split_reduction"]

# Elements a part holds at least: a part's program must repay the second launch and the
# threads' wake. On 2 threads of a Zen 5 (torch / Naiad of fp32 rows, unsplit -> in parts):
# parts of 128K lost at 256K elements (sum 0.41 -> 0.28, amax 0.55 -> 0.37); of 256K and more
# they gain (512K: sum 0.48 -> 0.59, amax 0.53 -> 0.62; 16M: 0.81 -> 0.97, 0.44 -> 0.79).
LEAST_PART = 262144
# On a GPU: pieces (rows' parts) enough for PIECES_PER_MULTIPROCESSOR on each multiprocessor,
# of GPU_LEAST_PART_BYTES at least, in MOST_PARTS parts at most (the second step reads a row's
# partials in one tile). On an H200 (fp32 and bf16 rows, batches of calls against torch), 8
# pieces a multiprocessor did as well as 32 or 64; parts of 16 KiB lost where 256 programs a
# row kernel already had (1024 rows of 16384 fp32: amax 1.08 -> 0.59), and split sums of bf16
# rows whose unsplit kernel takes ~15 us lost to the second launch's host time (512 x 32768:
# 0.78 -> 0.57); parts of 64 KiB keep both unsplit and still split 128 x 131072 (softmax 0.30
# -> 1.19, sum 0.35 -> 0.81) and fewer rows (16 x 1M: softmax 0.20 -> 5.3, sum 0.04 -> 1.0).
PIECES_PER_MULTIPROCESSOR = 8
GPU_LEAST_PART_BYTES = 65536
# A GPU's row kernel takes several short rows a program (launch.blocks), so parts can leave
# the programs as few as before: one row of 128256 fp32 in 4 parts was one program still, and
# its argmax went 0.86 -> 0.60 of torch for the second launch alone. A split is made where the
# unsplit rows leave multiprocessors idle (fewer programs than multiprocessors: cumsum of 1024
# rows of 16384 fp32, 256 programs, went 4.3 -> 2.9 of torch split) and where it gives
# GPU_PROGRAMS_GAIN times the programs at least (8 rows of 128256 bf16 in 2 parts, 4 programs
# for 2: argmax 0.36 -> 0.81).
GPU_PROGRAMS_GAIN = 2
MOST_PARTS = 1024


def split_parts(rows: Rows, device: torch.device, gpu_least_bytes=GPU_LEAST_PART_BYTES) -> int:
    """How many equal parts each of `rows` is reduced in (1: whole, as before): where the rows
    are contiguous and too few to occupy the device (fewer than the CPU's threads, fewer than
    PIECES_PER_MULTIPROCESSOR a GPU multiprocessor), into parts of LEAST_PART elements on the
    CPU, `gpu_least_bytes` on a GPU, at least. The parts are a power of 2 dividing N, the
    fewest that occupy the device."""
    m, n = rows.M, rows.N
    if rows.s_n != 1 or (m > 1 and rows.s_m != n):
        return 1
    if device.type == "cpu":
        from ...backends.cpu.pool import thread_count  # loaded by any CPU launch anyway

        wanted, least = thread_count(), LEAST_PART
    else:
        wanted = PIECES_PER_MULTIPROCESSOR * multiprocessors(device)
        least = gpu_least_bytes // rows.data.element_size()
    parts = 1
    while (
        m * parts < wanted
        and parts < MOST_PARTS
        and n % (2 * parts) == 0
        and n // (2 * parts) >= least
    ):
        parts *= 2
    if parts > 1 and device.type != "cpu":
        unsplit = _programs(m, n, device)
        split = _programs(m * parts, n // parts, device)
        if unsplit >= multiprocessors(device) or split < GPU_PROGRAMS_GAIN * unsplit:
            return 1
    return parts


def _programs(m: int, n: int, device: torch.device) -> int:
    """The programs a row kernel takes for m rows of n (launch.blocks' rows a program)."""
    return -(-m // blocks(m, n, device)[0])


def split_reduction(rows: Rows, parts: int, target, compute: torch.dtype, **constexprs):
    """Reduce `rows` into `target` in `parts` parts (reduce_kernel with `constexprs`, INIT and
    OP), both steps launched now; returns `launch(data, target)`, which repeats them for a call
    of the kind on its own tensors (a plan's), a partials buffer allocated each call."""
    m, device = rows.M, rows.data.device
    partials = empty((m * parts,), compute, device)
    pieces = rows.in_parts(parts)
    first = launch_rows(reduce_kernel, pieces, [partials], [], compute, True, **constexprs,
                        WHOLE=False)  # fmt: skip
    folded = Rows.contiguous(partials, m, parts)
    whole = blocks(m, parts, device)[1] >= parts  # a row of partials read without a loop
    second = launch_rows(reduce_kernel, folded, [target], [], compute, True, **constexprs,
                         WHOLE=whole)  # fmt: skip

    def launch(data, result):
        buffer = empty((m * parts,), compute, device)
        first(data, buffer)
        second(buffer, result)

    return launch
