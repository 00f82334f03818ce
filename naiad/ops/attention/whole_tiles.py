"""The whole-block attention kernels' tiles (whole_blocks.py, whole_backward.py), by device
kind, head dim and causal flag, as flash.py launches them: each table's numbers are the sweeps
that chose it (bench/RESULTS.md)."""

from __future__ import annotations

import torch

__all__ = [
    "HALVES_ABOVE",
    "SHORT_KEYS",
    "WHOLE",
    "WHOLE_BACKWARD",
    "WHOLE_DTYPES",
    "WHOLE_ROTATED",
    "WHOLE_SHORT",
]

# The forward of whole blocks (whole_blocks.py), by device kind, head dim and causal flag:
# (BLOCK_M, BLOCK_N, launch options). The GPU's non-causal tiles are the ones Triton's attention
# tutorial keeps for Hopper (128-query blocks; 64 keys with 4 warps at D64, 128 with 8 at D128),
# stages from its list (2-4), swept on an H200 (fp16 2x16x4096, TFLOP/s): D64 three stages (424;
# 128x128 w4 s2 428), D128 three (480 against two's 466), whose K and V rings and Q take 224 of
# the 227 KB of shared memory. Causal calls, their query blocks last to first, run faster on
# 64x64 blocks of 4 warps (ms): D64 0.209 -> 0.195 (s3), D128 0.336 -> 0.319; smaller blocks
# leave less of the diagonal masked and a shorter last wave. D128 causal takes three stages:
# 0.331 -> 0.319 ms at 2x16x4096, 0.066 -> 0.059 at 4x16x1024 (a later sweep of both lengths).
# D256 (fp16 2x16x2048 and 2x16x4096, against torch's flash kernel's 0.456 and 1.715 ms, causal
# 0.301 and 0.987): 128x64 with 8 warps and two stages, 0.290 and 0.974 ms, causal 0.217 and
# 0.590, of the tiles that compile for sm_90a without spills in shared memory (64x64 w4 s3
# 0.338 / 1.147; 128x32 w8 s3 0.361 / 1.232; the general kernel 0.460 / 1.580).
WHOLE = {
    "cuda": {(64, False): (128, 64, {"num_warps": 4, "num_stages": 3}),
             (64, True): (64, 64, {"num_warps": 4, "num_stages": 3}),
             (128, False): (128, 128, {"num_warps": 8, "num_stages": 3}),
             (128, True): (64, 64, {"num_warps": 4, "num_stages": 3}),
             (256, False): (128, 64, {"num_warps": 8, "num_stages": 2}),
             (256, True): (128, 64, {"num_warps": 8, "num_stages": 2})},
    "cpu": {(E, causal): (64, 64, {}) if E == 64 else (64, 32, {})
            for E in (64, 128, 256) for causal in (False, True)},
}  # fmt: skip
# Keys up to which the forward takes WHOLE_SHORT's tiles where it has some. A short walk (few key
# blocks a program) repays its prologue and epilogue (Q's copy, the rings' filling, the output's
# store) poorly when one program holds an SM; two programs an SM overlap them. At D128, 128x64
# tiles of 8 warps capped at 128 registers a thread (16-20 bytes spilled) and two stages fit two
# programs an SM: fp16 4x16x1024 (H200, the forward alone) 0.095 -> 0.081 ms, where at
# 2x16x4096 they lose (0.550 -> 0.611).
SHORT_KEYS = 1024
WHOLE_SHORT = {
    "cuda": {(128, False): (128, 64, {"num_warps": 8, "num_stages": 2, "maxnreg": 128})},
    "cpu": {},
}  # fmt: skip
WHOLE_DTYPES = (torch.float16, torch.bfloat16)
# Where the whole-block forward takes its steps rotated (whole_blocks.py), by device kind:
# (head dim, causal). Timed on an H200 (fp16 2x16x4096, the forward alone, ms, plain ->
# rotated): D128 0.55-0.58 -> 0.52-0.55, causal 0.34-0.35 -> 0.33-0.35 (kept plain, the shorter
# loop), D64 0.32 -> 0.34, causal 0.21 -> 0.23. On a CPU the products are not asynchronous.
WHOLE_ROTATED = {"cuda": {(128, False)}, "cpu": set()}
# The backward of the same problems (whole_backward.py), by device kind, head dim and causal
# flag: the dK/dV kernel's and the dQ kernel's (BLOCK_M queries, BLOCK_N keys, launch options).
# The GPU's are the fastest of each kernel timed alone over the tiles that compile for sm_90a
# without spills (H200, fp16 2x16x4096, ms; bench/RESULTS.md, "naiad.ops attention, fourth
# pass"): D64 dK/dV 64x64 w4 s3 0.591 (32x128 w4 s5 before: 0.692), causal 0.325 (0.549); dQ
# 128x64 w8 s3 0.392 (128x32 w4 s5: 0.460), causal 0.231 (0.273); D128 dK/dV 64x128 w8 s2
# 1.030 as before, causal 64x64 w4 s2 0.583 (0.590); dQ 128x32 w8 s3 0.705 (128x64 w8 s2:
# 0.722), causal 64x64 w4 s2 0.403 (0.421). A dQ entry None: the dK/dV walk adds dQ itself into
# an fp32 sum by bulk tensor reductions (whole_backward.py), five products a block pair instead
# of seven. It wins at D64 (H200, fp16 2x16x4096, both kernels against the walk, the sum's
# zeroing and rounding included, ms): 0.983 -> 0.880 at 32x128 w4 s3, causal 0.582 -> 0.546 at
# 64x64 w4 s3; not at D128 (1.615 -> 1.732 at 64x128 w8 s2 once its K^T stayed in shared
# memory, causal 0.913 -> 1.033). A later sweep at fp16 4x16x1024 and 2x16x4096 moved D128
# non-causal to 64x64 w4 s2 for both kernels: 0.242 -> 0.229 ms, 1.702 -> 1.677. D256 takes
# halves of the head dim (HALVES_ABOVE); of the pairs that compile for sm_90a without spills
# inside the 227 KB of shared memory, the fastest (H200, fp16 2x16x2048, forward + backward,
# ms, against torch's flash kernel's 2.02 and causal 1.28): dK/dV 32x128 w8 s2 with dQ 64x64
# w4 s2 2.20, causal 1.40 (the general kernels 4.49 and 2.79; both at 64x64 w4 s2 2.29 and
# 1.51; one stage 3.07 and 1.79; dQ at 64x32 2.51 and 1.60).
WHOLE_BACKWARD = {
    "cuda": {(64, False): ((32, 128, {"num_warps": 4, "num_stages": 3}), None),
             (64, True): ((64, 64, {"num_warps": 4, "num_stages": 3}), None),
             (128, False): ((64, 64, {"num_warps": 4, "num_stages": 2}),
                            (64, 64, {"num_warps": 4, "num_stages": 2})),
             (128, True): ((64, 64, {"num_warps": 4, "num_stages": 2}),
                           (64, 64, {"num_warps": 4, "num_stages": 2})),
             (256, False): ((32, 128, {"num_warps": 8, "num_stages": 2}),
                            (64, 64, {"num_warps": 4, "num_stages": 2})),
             (256, True): ((32, 128, {"num_warps": 8, "num_stages": 2}),
                           (64, 64, {"num_warps": 4, "num_stages": 2}))},
    "cpu": {(E, causal): ((32, 64, {}), (64, 32, {}))
            for E in (64, 128, 256) for causal in (False, True)},
}  # fmt: skip
# Head dims above which a backward program holds the gradients of half the head dim (the
# kernels' HALF): the other half's products it needs for the scores it computes again, 1.5x the
# products, but its accumulators are those of a head dim of 128, which the whole-block kernels
# hold without spilling, where the general kernels' at 256 spilled at every tile.
HALVES_ABOVE = 128
