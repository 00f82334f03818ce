"""A dot accumulating into a loop's carried tensor scaled first, `acc = tl.dot(p, w, acc *
alpha[:, None])` (attention's rescaled accumulator): the CPU back end lets the scaling generic
and the dot both write the loop's buffer (codegen/in_place.scaled_accumulator) instead of
copying the scaled tensor into the dot's buffer and the dot's result into the loop's. Checked:
which loops take that path (a spy on the decision), and the values of those that do and of
those that must not (the dot reads the old accumulator; the scaled tensor has another reader)
against float64 NumPy, for 0, 2 and 3 trips (one trip is specialized: no loop), on random
inputs."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.backends.cpu.codegen import in_place

M = K = N = 16


@naiad.jit
def rescaled(p_ptr, w_ptr, alpha_ptr, out_ptr, trips, M: tl.constexpr, N: tl.constexpr,
             K: tl.constexpr, SHAPE: tl.constexpr):  # fmt: skip
    """SHAPE 0: the attention update; 1: the dot also reads the old accumulator (as its A);
    2: the scaled tensor is also summed into a second carried tensor."""
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    ks = tl.arange(0, K)
    acc = tl.load(out_ptr + rows[:, None] * N + cols[None, :])
    side = tl.zeros([M, N], tl.float32)
    for t in range(trips):
        p = tl.load(p_ptr + t * M * K + rows[:, None] * K + ks[None, :])
        w = tl.load(w_ptr + t * K * N + ks[:, None] * N + cols[None, :])
        scaled = acc * tl.load(alpha_ptr + t * M + rows)[:, None]
        if SHAPE == 1:
            acc = tl.dot(acc, w, scaled, input_precision="ieee")
        else:
            if SHAPE == 2:
                side = side + scaled
            acc = tl.dot(p, w, scaled, input_precision="ieee")
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc + side)


def rescaled_reference(p, w, alpha, acc, trips, shape):
    acc, side = acc.astype(np.float64), np.zeros((M, N))
    for t in range(trips):
        scaled = acc * alpha[t][:, None]
        side = side + scaled if shape == 2 else side
        acc = (acc if shape == 1 else p[t]) @ w[t] + scaled
    return acc + side


@pytest.mark.parametrize("trips", [0, 2, 3])
@pytest.mark.parametrize("shape, takes_it", [(0, True), (1, False), (2, False)])
def test_scaled_accumulator(monkeypatch, cpu_fresh_cache, shape, takes_it, trips):
    decisions = []
    decide = in_place.scaled_accumulator

    def spy(plan, dot, argument, value, block):
        found = decide(plan, dot, argument, value, block)
        if dot is not None and dot.name == "linalg.matmul":
            decisions.append(found is not None)
        return found

    monkeypatch.setattr(in_place, "scaled_accumulator", spy)
    rescaled.forget_compiled()
    rng = np.random.default_rng(31 + 3 * shape + trips)
    p = rng.standard_normal((3, M, K), dtype=np.float32)
    w = (rng.standard_normal((3, K, N)) / 4).astype(np.float32)
    alpha = rng.uniform(0.25, 1.0, (3, M)).astype(np.float32)
    start = rng.standard_normal((M, N), dtype=np.float32)
    out = start.copy()
    rescaled[(1,)](p, w, alpha, out, trips, M=M, N=N, K=K, SHAPE=shape)
    want = rescaled_reference(p, w, alpha, start, trips, shape)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    assert decisions == [takes_it]
