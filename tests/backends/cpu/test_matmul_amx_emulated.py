"""The AMX paths' values on a CPU without AMX: tiles emulated in LLVM IR (amx_emulation.py),
in a child process (the emulation replaces how that process parses kernels' IR).

Tutorial 03 on bf16 with C's tiles carried in registers through its K loop (32 × 32 blocks,
amx_carried.py) and gathered into panels of 4 steps (64 × 64, amx_panels.py), with K steps no
multiple of 4, fewer than 4, a masked last step and none at all; a dot outside any loop (its
own tiles' loop, lower_matmul_amx.multiply); a blocked int8 matmul (exact) both ways; against
float64 / int64 references.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

_CHILD = textwrap.dedent(
    """
    import sys
    sys.path[:0] = [{folder!r}, {tests!r}]
    import numpy as np
    import torch
    import amx_emulation
    from amx_kernels import accumulated, block
    from naiad import knobs
    from fixture_kernels import tutorials

    dots = amx_emulation.install()

    gen = torch.Generator().manual_seed(0)
    with knobs.override(NAIAD_BACKEND="cpu"):
        for m, n, k, bm, bn in {bf16_cases}:
            a = torch.randn(m, k, generator=gen).to(torch.bfloat16)
            b = torch.randn(k, n, generator=gen).to(torch.bfloat16)
            c = torch.full((m, n), float("nan"), dtype=torch.float16)
            grid = ((m // bm) * (n // bn),)
            args = (a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride())
            meta = dict(BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=32, GROUP_SIZE_M=8,
                        ACTIVATION="")
            compiled = len(dots)
            tutorials.matmul_kernel[grid](*args, **meta)
            ref = a.double().numpy() @ b.double().numpy()
            err = np.linalg.norm(c.double().numpy() - ref) / max(np.linalg.norm(ref), 1e-30)
            print("@@", m, n, k, bm, bn, max(dots[compiled:], default=-1), err)
        a = torch.randn(64, 64, generator=gen).to(torch.bfloat16)
        b = torch.randn(64, 32, generator=gen).to(torch.bfloat16)
        c = torch.full((64, 32), float("nan"))
        compiled = len(dots)
        block[(1,)](a, b, c, M=64, N=32, K=64)
        ref = a.double().numpy() @ b.double().numpy()
        err = np.linalg.norm(c.double().numpy() - ref) / np.linalg.norm(ref)
        print("@@", 64, 32, 64, 64, 32, max(dots[compiled:], default=-1), err)
        for m, n, k, bm, bk in {int8_cases}:
            a = torch.randint(-128, 128, (m, k), generator=gen, dtype=torch.int8)
            b = torch.randint(-128, 128, (k, n), generator=gen, dtype=torch.int8)
            c = torch.full((m, n), -7, dtype=torch.int32)
            compiled = len(dots)
            accumulated[(m // bm, n // bm)](a, b, c, m, n, k, BM=bm, BN=bm, BK=bk)
            ref = a.numpy().astype(np.int64) @ b.numpy().astype(np.int64)
            exact = np.array_equal(c.numpy().astype(np.int64), ref)
            print("@@", m, n, k, bm, bm, max(dots[compiled:], default=-1), 0.0 if exact else 1.0)
    """
)
# (M, N, K, BLOCK_M, BLOCK_N): 64 x 64 blocks gather steps into panels, 32 x 32 carry C; K of
# 7 steps (a panel and 3), 3 steps (the loop's end alone), a masked last step (200 = 6.25
# steps), one step, and none (C is the loop's zeros)
BF16_CASES = [
    (128, 128, 224, 64, 64),
    (128, 128, 224, 32, 32),
    (64, 96, 96, 64, 32),
    (128, 64, 200, 64, 64),
    (96, 64, 200, 32, 32),
    (64, 64, 32, 64, 64),
    (64, 64, 0, 64, 64),
]
# (M, N, K, BLOCK, BLOCK_K): int8 into int32, 64 x 64 in panels and 32 x 32 carried
INT8_CASES = [(128, 128, 320, 64, 64), (96, 64, 192, 32, 64)]


def test_tiles_carried_and_panels_match_references_emulated(tmp_path):
    folder = Path(__file__).parent
    child = _CHILD.format(
        folder=str(folder),
        tests=str(folder.parents[1]),
        bf16_cases=BF16_CASES,
        int8_cases=INT8_CASES,
    )
    env = {**os.environ, "NAIAD_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("@@")]
    assert len(rows) == len(BF16_CASES) + 1 + len(INT8_CASES), done.stdout
    for *shape, dots, err in rows:
        # each kernel compiled here holds emulated tile dots (-1: the specialization was
        # compiled for an earlier case); fp16 output: its rounding is the bound
        assert int(dots) != 0, (shape, done.stdout)
        assert float(err) <= 1e-3, (shape, err)
