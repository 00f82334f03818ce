"""Atomics: add, max, min, and, or, xor, xchg, cas — old values, masks, lanes that hit the same
address in one call, many programs on one cell, a compare-and-swap spin lock, sem/scope."""

import numpy as np
import pytest
from memory_helpers import assert_exact, kernel_error, poisoned, random_array, rng

import naiad
import naiad.language as tl
from naiad.testing import check

_REFERENCE = {
    "add": np.add,
    "max": np.maximum,
    "min": np.minimum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "xchg": lambda old, new: new,
}


@naiad.jit
def _rmw(p, vals, olds, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(vals + offs, mask=mask)
    if OP == "add":
        old = tl.atomic_add(p + offs, v, mask=mask)
    elif OP == "max":
        old = tl.atomic_max(p + offs, v, mask=mask)
    elif OP == "min":
        old = tl.atomic_min(p + offs, v, mask=mask)
    elif OP == "and":
        old = tl.atomic_and(p + offs, v, mask=mask)
    elif OP == "or":
        old = tl.atomic_or(p + offs, v, mask=mask)
    elif OP == "xor":
        old = tl.atomic_xor(p + offs, v, mask=mask)
    else:
        old = tl.atomic_xchg(p + offs, v, mask=mask)
    tl.store(olds + offs, old, mask=mask)


def _check_rmw(op, dtype, seed, mixed_signs=True):
    gen = rng(seed)
    n, block = 27, 32
    kind = np.dtype(dtype).kind
    if kind == "f" and mixed_signs:
        init = random_array(block, dtype, gen, -10, 10)
        vals = random_array(n, dtype, gen, -10, 10)
    elif kind == "u":
        high = int(np.iinfo(dtype).max)
        init = random_array(block, dtype, gen, 1, high)  # high bits set: unsigned order matters
        vals = random_array(n, dtype, gen, 1, high)
    else:
        init = random_array(block, dtype, gen)
        vals = random_array(n, dtype, gen)
    p = init.copy()
    olds = poisoned(n, dtype)
    _rmw[(1,)](p, vals, olds, n, op, block)
    expected = init.copy()
    with np.errstate(over="ignore"):
        expected[:n] = _REFERENCE[op](init[:n], vals)
    assert_exact(p, expected)  # the masked-off tail is untouched
    assert_exact(olds, init[:n])


@pytest.mark.parametrize(
    "op,dtype",
    [
        ("add", np.float32),
        ("add", np.int32),
        ("add", np.uint64),
        ("max", np.float32),
        ("min", np.float32),
        ("max", np.int64),
        ("min", np.uint32),
        ("max", np.uint32),
        ("and", np.int32),
        ("or", np.uint64),
        ("xor", np.int64),
        ("xchg", np.float32),
        ("xchg", np.int32),
    ],
)
def test_atomic_rmw_returns_old_values(op, dtype):
    _check_rmw(op, dtype, seed=1)


_FULL = [
    (op, dt)
    for op in ("add", "max", "min", "xchg")
    for dt in (np.int32, np.int64, np.uint32, np.uint64, np.float32, np.float64)
] + [(op, dt) for op in ("and", "or", "xor") for dt in (np.int32, np.int64, np.uint32, np.uint64)]


@pytest.mark.full
@pytest.mark.parametrize("op,dtype", _FULL)
def test_atomic_rmw_all_dtypes(op, dtype):
    _check_rmw(op, dtype, seed=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["max", "min"])
def test_float_max_min_signs(op, dtype):
    """Triton's float atomic_max/min use integer atomics on the bit patterns: every sign mix."""
    cases = np.array(
        [
            (-1.0, -0.5),
            (-0.5, -1.0),
            (2.0, -3.0),
            (-3.0, 2.0),
            (1.5, 0.25),
            (0.25, 1.5),
            (-2.0, 1.0),
            (1.0, -2.0),
            (-7.0, -7.5),
            (3.0, 3.0),
        ],
        dtype,
    )
    block = 16
    init = np.concatenate([cases[:, 0], np.full(block - len(cases), 9.0, dtype)])
    vals = cases[:, 1].copy()
    p = init.copy()
    olds = poisoned(len(cases), dtype)
    _rmw[(1,)](p, vals, olds, len(cases), op, block)
    expected = init.copy()
    expected[: len(cases)] = _REFERENCE[op](cases[:, 0], cases[:, 1])
    assert_exact(p, expected)
    assert_exact(olds, cases[:, 0])


# -------------------------------------------------------------------------------------------------
# several lanes on one address in one call
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _rmw_same_cell(p, vals, olds, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(vals + offs)
    ptrs = p + offs * 0
    if OP == "add":
        old = tl.atomic_add(ptrs, v)
    elif OP == "max":
        old = tl.atomic_max(ptrs, v)
    elif OP == "min":
        old = tl.atomic_min(ptrs, v)
    elif OP == "xor":
        old = tl.atomic_xor(ptrs, v)
    else:
        old = tl.atomic_xchg(ptrs, v)
    tl.store(olds + offs, old)


def _assert_serialized(olds, vals, init, final, op):
    """The old values must be those of *some* one-at-a-time order of the lanes."""
    remaining = list(range(len(vals)))
    current = init
    for _ in range(len(vals)):
        candidates = [i for i in remaining if olds[i] == current]
        assert candidates, f"no lane saw the value {current}: olds {olds}"
        i = candidates[0]
        remaining.remove(i)
        current = _REFERENCE[op](np.asarray(current), vals[i])[()]
    assert current == final


@pytest.mark.parametrize(
    "op,dtype",
    [
        ("add", np.int32),
        ("add", np.uint32),
        ("max", np.int64),
        ("min", np.int32),
        ("xor", np.int32),
        ("xchg", np.int32),
    ],
)
def test_duplicate_addresses_apply_one_after_another(op, dtype):
    gen = rng(3)
    block = 32
    vals = random_array(block, dtype, gen, 1, 1000)
    init = dtype(5)
    p = np.array([init], dtype)
    olds = poisoned(block, dtype)
    _rmw_same_cell[(1,)](p, vals, olds, op, block)
    if op == "xchg":
        assert p[0] in vals
        _assert_serialized(olds, vals, init, p[0], op)
        return
    final = init
    for v in vals:
        final = _REFERENCE[op](np.asarray(final), v)[()]
    assert p[0] == final
    _assert_serialized(olds, vals, init, final, op)


def test_duplicate_float_adds_accumulate_every_lane():
    gen = rng(4)
    vals = random_array(64, np.float32, gen)
    p = np.array([0.75], np.float32)
    olds = poisoned(64, np.float32)
    _rmw_same_cell[(1,)](p, vals, olds, "add", 64)
    check(
        "atomic_add",
        p,
        np.array([0.75 + vals.astype(np.float64).sum()]),
        "interpreter",
        np.float32,
        k=65,
    )
    # Each lane saw a partial sum: the olds are 0.75 plus sums of the other lanes.
    assert np.isfinite(olds).all()
    assert 0.75 in olds


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_duplicate_float_max_min_mixed_signs(dtype):
    gen = rng(5)
    vals = random_array(32, dtype, gen, -100, 100)
    for op, init in (("max", -1000.0), ("min", 1000.0), ("max", 50.0), ("min", -50.0)):
        p = np.array([init], dtype)
        olds = poisoned(32, dtype)
        _rmw_same_cell[(1,)](p, vals, olds, op, 32)
        assert p[0] == _REFERENCE[op](dtype(init), _REFERENCE[op].reduce(vals)), (op, init)


@naiad.jit
def _add_pairs(x, vals, NUM: tl.constexpr):
    off = tl.arange(0, NUM)
    offset = off[:, None] * NUM + off[None, :]
    v = tl.load(vals + offset)
    tl.atomic_add(x + offset // 2, v)


def test_atomic_add_non_exclusive_offsets():
    """Triton's test_tensor_atomic_add_non_exclusive_offset: two lanes per element."""
    gen = rng(6)
    num = 16
    vals = random_array(num * num, np.float32, gen)
    x = random_array(num * num // 2, np.float32, gen)
    expected = x.astype(np.float64)
    np.add.at(expected, np.arange(num * num) // 2, vals.astype(np.float64))
    _add_pairs[(1,)](x, vals, num)
    check("atomic_add", x, expected, "interpreter", np.float32, k=3)


# -------------------------------------------------------------------------------------------------
# many programs
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _grid_add(p, vals):
    pid = tl.program_id(0)
    tl.atomic_add(p, tl.load(vals + pid))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_many_programs_add_into_one_cell(dtype):
    gen = rng(7)
    vals = random_array(64, dtype, gen)
    p = np.array([3], dtype)
    _grid_add[(64,)](p, vals)
    if np.dtype(dtype).kind == "i":
        assert p[0] == 3 + vals.sum()
    else:
        check(
            "atomic_add",
            p,
            np.array([3 + vals.astype(np.float64).sum()]),
            "interpreter",
            dtype,
            k=65,
        )


@naiad.jit
def _predicated_max(x):
    val = tl.program_id(0)
    if val < 64:
        tl.atomic_max(x, val)


def test_atomic_under_a_scalar_branch():
    x = np.array([-1], np.int32)
    _predicated_max[(256,)](x)
    assert x[0] == 63


@naiad.jit
def _locked_accumulate(locks, partial, vals, N, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    """The pattern of Triton's layer-norm backward: a spin lock per group of rows."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(vals + row * N + cols, mask=mask, other=0.0)
    lock_id = row % GROUP
    lock = locks + lock_id
    count = locks + GROUP + lock_id
    out = partial + lock_id * N + cols
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(count) == 0:
        tl.atomic_xchg(count, 1)
    else:
        x += tl.load(out, mask=mask)
    tl.store(out, x, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


def test_cas_spin_lock_across_programs():
    gen = rng(8)
    rows, n, group = 128, 50, 8
    vals = random_array((rows, n), np.float32, gen)
    locks = np.zeros(2 * group, np.int32)
    partial = poisoned((group, n), np.float32)  # never read before the first store of a group
    _locked_accumulate[(rows,)](locks, partial, vals, n, group, 64)
    expected = vals.astype(np.float64).reshape(rows // group, group, n).sum(axis=0)
    check("atomic_add", partial, expected, "interpreter", np.float32, k=rows // group)
    assert_exact(locks, np.array([0] * group + [1] * group, np.int32))


# -------------------------------------------------------------------------------------------------
# compare-and-swap
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _cas_block(p, cmp, val, olds, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_cas(p + offs, tl.load(cmp + offs), tl.load(val + offs))
    tl.store(olds + offs, old)


@pytest.mark.parametrize(
    "dtype", [np.int32, np.int64, np.uint32, np.float32, np.float16, np.float64]
)
def test_atomic_cas_block(dtype):
    gen = rng(9)
    block = 32
    init = random_array(block, dtype, gen)
    hit = gen.random(block) < 0.5
    cmp = np.where(hit, init, init + init.dtype.type(1)).astype(dtype)
    val = random_array(block, dtype, gen)
    p = init.copy()
    olds = poisoned(block, dtype)
    _cas_block[(1,)](p, cmp, val, olds, block)
    assert_exact(p, np.where(hit, val, init))
    assert_exact(olds, init)


@naiad.jit
def _cas_same_cell(p, olds, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    # Every lane tries to move the cell from `offs` to `offs + 1`: only a chain of them succeeds.
    tl.store(olds + offs, tl.atomic_cas(p + offs * 0, offs, offs + 1))


def test_atomic_cas_lanes_see_each_other():
    p = np.array([0], np.int32)
    olds = poisoned(16, np.int32)
    _cas_same_cell[(1,)](p, olds, 16)
    # Applied one lane at a time in some order; in lane order all 16 succeed.
    assert 1 <= p[0] <= 16
    assert olds.min() == 0 and (olds <= p[0]).all()


# -------------------------------------------------------------------------------------------------
# sem / scope and dtype restrictions
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _with_order(p, SEM: tl.constexpr, SCOPE: tl.constexpr):
    offs = tl.arange(0, 4)
    tl.atomic_add(p + offs, 1, sem=SEM, scope=SCOPE)
    tl.atomic_max(p + offs, 0, sem=SEM, scope=SCOPE)
    tl.atomic_xchg(p + 4, 7, sem=SEM, scope=SCOPE)
    tl.atomic_cas(p + 5, 0, 3, sem=SEM, scope=SCOPE)


@pytest.mark.parametrize("sem", [None, "acquire", "release", "acq_rel", "relaxed"])
@pytest.mark.parametrize("scope", [None, "gpu", "cta", "sys"])
def test_sem_and_scope_are_accepted(sem, scope):
    p = np.zeros(6, np.int32)
    _with_order[(1,)](p, sem, scope)
    assert_exact(p, np.array([1, 1, 1, 1, 7, 3], np.int32))


@pytest.mark.parametrize(
    "sem,scope", [("seq_cst", "gpu"), ("acq_rel", "device"), ("ACQUIRE", None)]
)
def test_bad_sem_or_scope_raises(sem, scope):
    with kernel_error("sem|scope"):
        _with_order[(1,)](np.zeros(6, np.int32), sem, scope)


@naiad.jit
def _atomic_of(p, OP: tl.constexpr):
    if OP == "add":
        tl.atomic_add(p, 1)
    elif OP == "max":
        tl.atomic_max(p, 1)
    elif OP == "and":
        tl.atomic_and(p, 1)
    else:
        tl.atomic_cas(p, 1, 2)


@pytest.mark.parametrize(
    "op,dtype,what",
    [
        ("add", np.int8, "int8"),
        ("add", np.uint8, "uint8"),
        ("add", np.int16, "int16"),
        ("add", np.uint16, "uint16"),
        ("max", np.float16, "fp16"),
        ("and", np.float32, "fp32"),
        ("cas", np.int8, "width"),
        ("cas", np.bool_, "width"),
    ],
)
def test_unsupported_atomic_dtypes_raise(op, dtype, what):
    with kernel_error(what):
        _atomic_of[(1,)](np.ones(1, dtype), op)


def test_fp16_atomic_add_is_supported():
    p = np.array([1.5], np.float16)
    _atomic_of[(1,)](p, "add")
    assert p[0] == np.float16(2.5)


def test_atomic_cas_compares_bit_patterns():
    """As atom.cas.b32: -0.0 does not match 0.0, and a NaN matches the same NaN bits."""
    nan = np.array([0x7FC00001], np.uint32).view(np.float32)[0]
    init = np.array([0.0, nan, 1.5, -0.0], np.float32)
    cmp = np.array([-0.0, nan, 1.5, -0.0], np.float32)
    val = np.array([4.0, 5.0, 6.0, 7.0], np.float32)
    p, olds = init.copy(), poisoned(4, np.float32)
    _cas_block[(1,)](p, cmp, val, olds, 4)
    assert_exact(p, np.array([0.0, 5.0, 6.0, 7.0], np.float32))
    assert_exact(olds.view(np.uint32), init.view(np.uint32))
