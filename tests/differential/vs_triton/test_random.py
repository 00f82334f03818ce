"""Philox against Triton's interpreter: randint / randint4x / rand / randn bit for bit."""

import numpy as np

from .harness import PYTESTMARK, Mismatches, N, both, compare, tensor_of

pytestmark = PYTESTMARK


def test_philox(kernels):
    """randint/randint4x/rand/randn bit for bit, 32- and 64-bit offsets and seeds."""
    mism = Mismatches()
    rng = np.random.default_rng(3)
    offsets = {
        "int32": rng.integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32),
        "uint32": rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
        "int64": rng.integers(-(2**63), 2**63 - 1, N, dtype=np.int64),
        "uint64": rng.integers(0, 2**64 - 1, N, dtype=np.uint64),
    }
    for name, off in offsets.items():
        ot = tensor_of(off, name)
        for seed in (0, 42, 2**31 - 1, 2**31 + 5, 2**40 + 3, -5):
            for fn in ("randint", "rand", "randn", "randint4x"):
                compare(
                    f"{fn}(seed={seed}, {name} offsets)",
                    *both(kernels, f"rng_{fn}", seed, ot, N=N),
                    mism,
                )
    for seed in (7, 2**35):
        compare(f"rand(seed={seed}, arange)", *both(kernels, "rng_rand_arange", seed, N=N), mism)
        for offset in (0, 12345, 2**31 - 1, 2**33):
            compare(
                f"randint(seed={seed}, offset={offset})",
                *both(kernels, "rng_randint_scalar", seed, offset),
                mism,
            )
    mism.check()
