"""A loop-carried tensor read through a view, then updated in the same iteration (issue 13).

The CPU back end lets the generic that makes a carried tensor's next value write the loop's
buffer in place (codegen/in_place.py). Each kernel here reads the old value in a way that used to
run after that write: through a broadcast (`a[:, None]`, `tl.expand_dims` + `tl.broadcast_to`)
that elementwise fusion moved into a later generic, a reshape, a split, a reduction of a
broadcast, a generic lowered at its store, a view yielded as another carried value; and the same
shapes in an `if`, a `while` and a nested loop, a transpose beside them. Before the fix the
compiled results saw the updated tensor: `[110 112 114 116]` instead of `[11 13 15 17]`.

The interpreter is the oracle: each kernel runs there, in the reference evaluator and compiled
for this CPU on the same seeded random inputs (never zeros), with trip counts of 0 to 3; the
interpreter's results must also match a NumPy reference.
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.testing.differential import run_differential

EXECUTORS = ("interpreter", "evaluator", "cpu")
B = 8


@naiad.jit
def broadcast_then_update(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    """The issue's kernel: `t` reads `a` through `a[:, None]`, then `a` is updated."""
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    r = tl.load(r_ptr + offs)
    b = tl.zeros([B, B], tl.int32)
    for _ in range(trips):
        t = a[:, None] + r[None, :]
        a = a * 3 - r
        b = b + t
    tl.store(out_ptr + offs[:, None] * B + offs[None, :], b)


def broadcast_then_update_ref(x, r, trips):
    a, b = x.copy(), np.zeros((B, B), np.int32)
    for _ in range(trips):
        t = a[:, None] + r[None, :]
        a = a * 3 - r
        b = b + t
    return b


@naiad.jit
def broadcast_to_float(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    """`tl.expand_dims` then `tl.broadcast_to`, on floats: adds and an exact halving, so every
    step rounds once on every back end (no multiply-add to contract)."""
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    r = tl.load(r_ptr + offs)
    b = tl.zeros([B, B], tl.float32)
    for _ in range(trips):
        t = tl.broadcast_to(tl.expand_dims(a, 0), [B, B]) + r[:, None]
        a = a * 0.5
        b = b + t
    tl.store(out_ptr + offs[:, None] * B + offs[None, :], b)


def broadcast_to_float_ref(x, r, trips):
    a, b = x.copy(), np.zeros((B, B), np.float32)
    for _ in range(trips):
        t = np.broadcast_to(a[None, :], (B, B)) + r[:, None]
        a = a * np.float32(0.5)
        b = b + t
    return b


@naiad.jit
def reshape_then_update(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    b = tl.load(r_ptr + tl.reshape(offs, [2, B // 2]))
    for _ in range(trips):
        t = tl.reshape(a, [2, B // 2])
        a = a * 2 + 1
        b = b + t
    tl.store(out_ptr + tl.reshape(offs, [2, B // 2]), b)


def reshape_then_update_ref(x, r, trips):
    a, b = x.copy(), r.reshape(2, B // 2).copy()
    for _ in range(trips):
        t = a.reshape(2, B // 2)
        a = a * 2 + 1
        b = b + t
    return b.reshape(-1)


@naiad.jit
def split_then_update(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    """`tl.split` of a carried tensor: two slices (views) of its buffer."""
    offs = tl.arange(0, B)
    c = tl.join(tl.load(x_ptr + offs), tl.load(r_ptr + offs))
    b = tl.zeros([B], tl.int32)
    for _ in range(trips):
        lo, hi = tl.split(c)
        c = c * 3 + 1
        b = b + lo - 2 * hi
    tl.store(out_ptr + offs, b)


def split_then_update_ref(x, r, trips):
    c, b = np.stack([x, r], axis=-1), np.zeros(B, np.int32)
    for _ in range(trips):
        lo, hi = c[:, 0], c[:, 1]
        c = c * 3 + 1
        b = b + lo - 2 * hi
    return b


@naiad.jit
def transpose_then_update(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    offs = tl.arange(0, B)
    m = tl.load(x_ptr + offs[:, None]) * tl.load(r_ptr + offs[None, :]) + offs[:, None]
    b = tl.zeros([B, B], tl.int32)
    for _ in range(trips):
        t = tl.trans(m)
        m = m * 2 - 1
        b = b + t
    tl.store(out_ptr + offs[:, None] * B + offs[None, :], b)


def transpose_then_update_ref(x, r, trips):
    m = x[:, None] * r[None, :] + np.arange(B, dtype=np.int32)[:, None]
    b = np.zeros((B, B), np.int32)
    for _ in range(trips):
        t = m.T
        m = m * 2 - 1
        b = b + t
    return b


@naiad.jit
def reduce_broadcast_then_update(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    r = tl.load(r_ptr + offs)
    b = tl.zeros([B], tl.int32)
    for _ in range(trips):
        t = a[:, None] * r[None, :]
        a = a + r
        b = b + tl.sum(t, axis=0)
    tl.store(out_ptr + offs, b)


def reduce_broadcast_then_update_ref(x, r, trips):
    a, b = x.copy(), np.zeros(B, np.int32)
    for _ in range(trips):
        t = a[:, None] * r[None, :]
        a = a + r
        b = b + t.sum(axis=0, dtype=np.int32)
    return b


@naiad.jit
def store_then_update(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    """`t` and `u` are stored after `a`'s update: their generics run at the stores
    (store_plan.py), and read `a` there, directly and through a broadcast."""
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    r = tl.load(r_ptr + offs)
    for i in range(trips):
        t = a * 2 + r
        u = a[:, None] - r[None, :]
        a = a * 3 + 1
        tl.store(out_ptr + i * B + offs, t)
        tl.store(out_ptr + trips * B + i * B * B + offs[:, None] * B + offs[None, :], u)


def store_then_update_ref(x, r, trips):
    a, rows, blocks = x.copy(), [], []
    for _ in range(trips):
        rows.append(a * 2 + r)
        blocks.append((a[:, None] - r[None, :]).reshape(-1))
        a = a * 3 + 1
    return np.concatenate([np.zeros(0, np.int32), *rows, *blocks])


@naiad.jit
def yield_a_view(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    """The next `c` is a view of the old `a`, read at the yield after `a`'s update."""
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    c = tl.load(r_ptr + offs)[:, None]
    for _ in range(trips):
        c = a[:, None]
        a = a * 3 + 1
    tl.store(out_ptr + offs[:, None], c)
    tl.store(out_ptr + B + offs, a)


def yield_a_view_ref(x, r, trips):
    a, c = x.copy(), r.copy()
    for _ in range(trips):
        c = a.copy()
        a = a * 3 + 1
    return np.concatenate([c, a])


@naiad.jit
def branch_then_update(x_ptr, r_ptr, out_ptr, trips, flip, B: tl.constexpr):
    """A view of `a` in one branch of an `if` on the trip (a runtime condition), then `a`
    updated; the other branch's result is computed into a fresh block."""
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    r = tl.load(r_ptr + offs)
    b = tl.zeros([B, B], tl.int32)
    for i in range(trips):
        if (i + flip) % 2 == 0:
            t = a[:, None] + r[None, :]
        else:
            t = tl.broadcast_to(a[None, :], [B, B])
        a = a * 3 - r
        b = b + t
    tl.store(out_ptr + offs[:, None] * B + offs[None, :], b)


def branch_then_update_ref(x, r, trips, flip):
    a, b = x.copy(), np.zeros((B, B), np.int32)
    for i in range(trips):
        if (i + flip) % 2 == 0:
            t = a[:, None] + r[None, :]
        else:
            t = np.broadcast_to(a[None, :], (B, B))
        a = a * 3 - r
        b = b + t
    return b


@naiad.jit
def while_then_update(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    r = tl.load(r_ptr + offs)
    b = tl.zeros([B, B], tl.int32)
    i = 0
    while i < trips:
        t = a[:, None] * 2 + r[None, :]
        a = a * 3 - r
        b = b + t
        i += 1
    tl.store(out_ptr + offs[:, None] * B + offs[None, :], b)


def while_then_update_ref(x, r, trips):
    a, b = x.copy(), np.zeros((B, B), np.int32)
    for _ in range(trips):
        t = a[:, None] * 2 + r[None, :]
        a = a * 3 - r
        b = b + t
    return b


@naiad.jit
def nested_then_update(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    """The inner loop carries the outer loop's `a`; each loop reads it through a view first."""
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    r = tl.load(r_ptr + offs)
    b = tl.zeros([B, B], tl.int32)
    for _ in range(trips):
        s = tl.reshape(a, [B // 2, 2])
        for _ in range(2):
            t = a[None, :] - r[:, None]
            a = a + r
            b = b + t
        a = a * 2
        b = b + tl.reshape(tl.broadcast_to(s[None, :, :], [B, B // 2, 2]), [B, B])
    tl.store(out_ptr + offs[:, None] * B + offs[None, :], b)


def nested_then_update_ref(x, r, trips):
    a, b = x.copy(), np.zeros((B, B), np.int32)
    for _ in range(trips):
        s = a.copy()
        for _ in range(2):
            t = a[None, :] - r[:, None]
            a = a + r
            b = b + t
        a = a * 2
        b = b + np.broadcast_to(s[None, :], (B, B))
    return b


@naiad.jit
def gather_then_update(x_ptr, r_ptr, out_ptr, trips, B: tl.constexpr):
    """The next `a` reads the old one at other positions (a gather, as the CPU's tl.sort
    does): the generic making it reads `a` in its body, so it must not write `a` in place."""
    offs = tl.arange(0, B)
    a = tl.load(x_ptr + offs)
    r = tl.load(r_ptr + offs)
    for _ in range(trips):
        a = tl.where(a > r, tl.gather(a, offs ^ 1, 0), a + r)
    tl.store(out_ptr + offs, a)


def gather_then_update_ref(x, r, trips):
    a = x.copy()
    for _ in range(trips):
        a = np.where(a > r, a[np.arange(B) ^ 1], a + r)
    return a


INT_CASES = {
    "gather": (gather_then_update, gather_then_update_ref, B),
    "broadcast": (broadcast_then_update, broadcast_then_update_ref, B * B),
    "reshape": (reshape_then_update, reshape_then_update_ref, B),
    "split": (split_then_update, split_then_update_ref, B),
    "transpose": (transpose_then_update, transpose_then_update_ref, B * B),
    "reduce": (reduce_broadcast_then_update, reduce_broadcast_then_update_ref, B),
    "store": (store_then_update, store_then_update_ref, None),
    "yield": (yield_a_view, yield_a_view_ref, 2 * B),
    "while": (while_then_update, while_then_update_ref, B * B),
    "nested": (nested_then_update, nested_then_update_ref, B * B),
}


def _check(kernel, reference, size, dtype, trips, seed, **extra):
    def make_args(rng):
        if dtype == np.float32:
            x = (rng.uniform(0.5, 2.0, B) * rng.choice([-1.0, 1.0], B)).astype(dtype)
            r = (rng.uniform(0.5, 2.0, B) * rng.choice([-1.0, 1.0], B)).astype(dtype)
        else:
            x = np.where((v := rng.integers(-50, 50, B)) == 0, 7, v).astype(dtype)
            r = np.where((v := rng.integers(-50, 50, B)) == 0, -3, v).astype(dtype)
        out = np.empty(trips * (B + B * B) if size is None else size, dtype)
        return dict(x_ptr=x, r_ptr=r, out_ptr=out, trips=trips, B=B, **extra)

    args = make_args(np.random.default_rng(seed))
    got = run_differential(kernel, make_args, (1,), EXECUTORS, {"out_ptr": "add"}, seed=seed)
    want = reference(args["x_ptr"], args["r_ptr"], trips, *extra.values())
    np.testing.assert_array_equal(got["out_ptr"], want.reshape(-1))


@pytest.mark.parametrize("trips", [0, 1, 3])
@pytest.mark.parametrize("case", sorted(INT_CASES))
def test_carried_tensor_read_through_a_view_then_updated(case, trips):
    kernel, reference, size = INT_CASES[case]
    _check(kernel, reference, size, np.int32, trips, seed=13 + trips)


@pytest.mark.parametrize("trips", [0, 1, 3])
def test_float_broadcast_to_then_update(trips):
    _check(broadcast_to_float, broadcast_to_float_ref, B * B, np.float32, trips, seed=7 + trips)


@pytest.mark.parametrize("flip", [0, 1])
def test_view_in_a_branch_then_update(flip):
    _check(branch_then_update, branch_then_update_ref, B * B, np.int32, 3, seed=5, flip=flip)
