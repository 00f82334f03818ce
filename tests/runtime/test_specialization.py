"""The launch hot path's key (binder.py) mirrors the one Specialization (specialization.py).

Two launches the binder keys alike must specialize alike: otherwise a prepared launch would run
code compiled for other facts (a misaligned pointer through code that assumes alignment, an
integer equal to 1 where it was folded in). Random signatures and arguments, pairwise.
"""

import itertools
from typing import NamedTuple

import numpy as np
import pytest
import torch

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime.binder import Unbound, make_binder
from naiad.runtime.specialization import Specialization


@naiad.jit
def every_kind(
    a_ptr, b_ptr, n, m: tl.int64, scale, flag, maybe, BLOCK: tl.constexpr, MODE: tl.constexpr = 0
):
    pass


@naiad.jit(do_not_specialize=["n"], do_not_specialize_on_alignment=["b_ptr"])
def fewer_facts(a_ptr, b_ptr, n, m: tl.int64, scale, flag, maybe, BLOCK: tl.constexpr):
    pass


def _array(rng, kind: str):
    dtype = {"f32": np.float32, "f16": np.float16, "i32": np.int32}[kind[:3]]
    offset = int(rng.integers(0, 3))
    base = rng.standard_normal(64 + offset).astype(dtype)
    array = base[offset:]
    return torch.from_numpy(array) if kind.endswith("t") else array


_INTS = (1, 16, 17, 32, -5, 0, 2**31 - 16, 2**31, 2**33, 2**63 + 16)


def _arguments(rng) -> dict:
    kinds = ("f32", "f16", "i32", "f32t", "f16t")
    return {
        "a_ptr": _array(rng, str(rng.choice(kinds))),
        "b_ptr": _array(rng, str(rng.choice(kinds))),
        "n": int(rng.choice(_INTS)),
        "m": int(rng.choice(_INTS[:-1])),
        "scale": [1.5, -2.0, 3][int(rng.integers(0, 3))],
        "flag": bool(rng.integers(0, 2)),
        "maybe": None if rng.integers(0, 2) else _array(rng, "f32"),
        "BLOCK": int(rng.choice([16, 32, 64])),
    }


def _tupled(rng, args: dict) -> dict:
    """`args` with some of them in tuples (nested, a NamedTuple) with other leaves of every
    kind: what a tuple argument specializes on is its leaves' facts and its class."""
    ints = [int(rng.choice(_INTS)) for _ in range(2)]
    leaf = [None, tl.constexpr(3), 2.5, True][int(rng.integers(0, 4))]
    b_ptr = Pair(args["b_ptr"], leaf) if rng.integers(0, 2) else (args["b_ptr"], args["maybe"])
    return {
        **args,
        "a_ptr": (args["a_ptr"], (ints[0], leaf)),
        "b_ptr": b_ptr,
        "n": (args["n"], ints[1]),
    }


@pytest.mark.parametrize("tupled", [False, True], ids=["plain", "tuples"])
@pytest.mark.parametrize("kernel", [every_kind, fewer_facts], ids=lambda k: k.__name__)
def test_equal_binder_keys_mean_equal_specializations(kernel, tupled):
    rng = np.random.default_rng(11)
    binder = make_binder(kernel.params, kernel.do_not_specialize_on_alignment)
    settings = knobs.launch_settings()
    seen = []
    for _ in range(300):
        args = _tupled(rng, _arguments(rng)) if tupled else _arguments(rng)
        try:
            key, _, _ = binder(settings, (1,), **args)
        except Unbound:
            continue
        spec = Specialization.of(kernel, kernel._bind((), args))
        seen.append((key, spec.key))
    assert len(seen) > 200
    by_binder = {}
    for key, spec_key in seen:
        by_binder.setdefault(key, set()).add(spec_key)
    for key, spec_keys in by_binder.items():
        assert len(spec_keys) == 1, f"one binder key, {len(spec_keys)} specializations: {key}"
    # And the binder distinguishes what the specialization does (the key is not trivial).
    distinct = {spec_key for _, spec_key in seen}
    assert len(by_binder) >= len(distinct) > 20


def test_specialization_follows_tritons_rules():
    x = np.zeros(64, np.float32)
    spec = Specialization.of(
        every_kind,
        every_kind._bind((x, x[1:], 1, 32, 2.0, True, None, 16), {}),
    )
    assert spec.signature == {
        "a_ptr": "*fp32",
        "b_ptr": "*fp32",
        "n": "constexpr",
        "m": "i64",
        "scale": "fp32",
        "flag": "i1",
        "maybe": "constexpr",
        "BLOCK": "constexpr",
        "MODE": "constexpr",
    }
    assert spec.constexprs == {"n": 1, "maybe": None, "BLOCK": 16, "MODE": 0}
    aligned = [["tt.divisibility", 16]]
    assert spec.attrs == {"a_ptr": aligned, "m": aligned}  # x[1:] is misaligned


def test_keys_differ_for_every_fact():
    x = np.zeros(64, np.float32)
    facts = [
        (x, x, 5, 32, 2.0, True, None, 16),
        (x[1:], x, 5, 32, 2.0, True, None, 16),  # alignment
        (x.astype(np.float16), x, 5, 32, 2.0, True, None, 16),  # dtype
        (x, x, 16, 32, 2.0, True, None, 16),  # divisibility
        (x, x, 1, 32, 2.0, True, None, 16),  # equal to 1
        (x, x, 2**40, 32, 2.0, True, None, 16),  # width
        (x, x, 5, 32, 2.0, True, x, 16),  # None or not
        (x, x, 5, 32, 2.0, True, None, 32),  # constexpr value
    ]
    keys = [Specialization.of(every_kind, every_kind._bind(args, {})).key for args in facts]
    for a, b in itertools.combinations(range(len(keys)), 2):
        assert keys[a] != keys[b], (a, b)


class Pair(NamedTuple):
    first: object
    second: object


def test_a_tuple_specializes_as_its_leaves():
    """A tuple's signature is its leaves', its facts named by their paths; a NamedTuple keeps
    its class, and its key is not a plain tuple's (its fields are read by name), for the
    binder too, which gives a tuple's leaves as one flat launch value."""
    x = np.zeros(64, np.float32)
    nested = (x, (16, 1, None), tl.constexpr(4))
    args = (nested, Pair(x[1:], 2.0), (1, 5), 32, 2.0, True, None, 16)
    spec = Specialization.of(fewer_facts, fewer_facts._bind(args, {}))
    assert spec.signature["a_ptr"] == ("*fp32", ("i32", "constexpr", "constexpr"), "constexpr")
    assert type(spec.signature["b_ptr"]) is Pair and spec.signature["b_ptr"] == ("*fp32", "fp32")
    assert spec.signature["n"] == ("i32", "i32")  # do_not_specialize: 1 stays a value
    assert {k: v for k, v in spec.constexprs.items() if "." in k} == {
        "a_ptr.1.1": 1,
        "a_ptr.1.2": None,
        "a_ptr.2": tl.constexpr(4),
    }
    aligned = [["tt.divisibility", 16]]
    # b_ptr's leaves keep no alignment (do_not_specialize_on_alignment), n's no divisibility
    assert spec.attrs == {"a_ptr.0": aligned, "a_ptr.1.0": aligned, "m": aligned}
    plain = (nested, (x[1:], 2.0), *args[2:])
    plain_spec = Specialization.of(fewer_facts, fewer_facts._bind(plain, {}))
    assert plain_spec.signature == spec.signature and plain_spec.key != spec.key
    binder = make_binder(fewer_facts.params)
    (key, _, values), (plain_key, _, _) = binder(None, (1,), *args), binder(None, (1,), *plain)
    assert key != plain_key
    assert values[:3] == ((x.ctypes.data, 16, 1, None, None), (x[1:].ctypes.data, 2.0), (1, 5))


def _name_by_specialization(specialization):
    """A `jit(repr=)` naming each kernel by its first argument's type and its arguments
    specialized to 1, as Triton's test_value_specialization does."""
    ones = "_".join(k for k, v in specialization.constants.items() if v == 1)
    return f"kernel_{specialization.signature['value']}_{ones}"


@naiad.jit(repr=_name_by_specialization)
def _named_kernel(value, is_one, out_ptr):
    tl.store(out_ptr, value + is_one)


@pytest.mark.parametrize("value,type_name", [(-5, "i32"), (2**40, "i64"), (2**63 + 3, "u64")])
def test_repr_names_each_specialization(value, type_name):
    """`jit(repr=f)` names the compiled kernel `f(specialization)`; the kernel runs as before."""
    out = np.full(1, 7, np.int64 if type_name != "u64" else np.uint64)
    with knobs.override(NAIAD_BACKEND="cpu"):
        compiled = _named_kernel.warmup(value, 1, out, grid=(1,))
        _named_kernel[(1,)](value, 1, out)
    assert compiled.name == f"kernel_{type_name}_is_one"
    assert f"@kernel_{type_name}_is_one" in compiled.asm["ttir"]
    assert int(out[0]) == value + 1
