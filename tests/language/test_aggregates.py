"""`@naiad.aggregate` classes (Triton's `@triton.aggregate`) on every back end: fields of
tensors, constexprs and tuples; jit methods bound to the instance (compiled calls), plain and
constexpr methods run as Python; the constructor made from the fields; instances through calls,
loops and branches; `aggregate_replace`; the errors Triton gives. Values against NumPy on random
inputs."""

import numpy as np
import pytest
from helpers import kernel_error
from memory_helpers import assert_exact, poisoned, rng

import naiad
import naiad.language as tl
from naiad.language.aggregates import aggregate_type


@naiad.aggregate
class Pair:
    first: tl.tensor
    second: tl.tensor

    @naiad.jit
    def first_of(self):
        return self.first

    def second_of(self, _semantic=None):
        return self.second

    @naiad.jit
    def unpack(self):
        return self.first_of(), self.second_of()

    def __getitem__(self, index, _semantic=None):
        return self.first if tl.core._unwrap_if_constexpr(index) == 0 else self.second


@naiad.aggregate
class Row:
    """A row of a matrix: its pointer, its stride and its block width (a constexpr field)."""

    base: tl.tensor
    stride: tl.tensor
    BLOCK: tl.constexpr
    scale: tl.constexpr = 1

    @naiad.jit
    def load(self, row):
        return tl.load(self.base + row * self.stride + tl.arange(0, self.BLOCK)) * self.scale

    @naiad.jit
    def __getitem__(self, row):
        return self.load(row)

    @naiad.constexpr_function
    def width(self):
        return self.BLOCK

    @staticmethod
    @naiad.jit
    def of(base, stride, BLOCK: tl.constexpr):
        return Row(base, stride, BLOCK, scale=2)


@naiad.aggregate
class ScaledRow(Row):
    """A child aggregate: the parent's fields and methods, and one of its own."""

    offset: tl.tensor

    @naiad.jit
    def shifted(self, row):
        return self.load(row) + self.offset


@naiad.jit
def pair_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    pair = Pair(tl.load(x_ptr + offs), n)
    a, b = pair.unpack()
    tl.store(out_ptr + offs, a * b + pair[0] - pair[1])


def test_jit_plain_and_item_methods():
    gen = rng(171)
    x = gen.integers(-1000, 1000, 64).astype(np.int32)
    out = poisoned(64, np.int32)
    pair_kernel[(1,)](x, out, 7, BLOCK=64)
    assert_exact(out, x * 7 + x - 7)


@naiad.jit
def row_kernel(m_ptr, out_ptr, stride, offset, BLOCK: tl.constexpr):
    row = Row(m_ptr, stride, BLOCK)
    doubled = Row.of(m_ptr, stride, BLOCK)
    child = ScaledRow(m_ptr, stride, BLOCK, 3, offset)
    tl.static_assert(row.width() == BLOCK and row.scale == 1)
    offs = tl.arange(0, row.width())
    tl.store(out_ptr + offs, row.load(1) + doubled[2])
    tl.store(out_ptr + BLOCK + offs, child.shifted(0))


def test_constexpr_fields_defaults_static_and_inherited_methods():
    gen = rng(172)
    m = gen.standard_normal((3, 40)).astype(np.float32)
    out = poisoned(64, np.float32)
    row_kernel[(1,)](m, out, m.strides[0] // 4, 0.25, BLOCK=32)
    assert_exact(out[:32], m[1, :32] + m[2, :32] * 2)
    # The GPU fuses the multiply-add (one rounding, as Triton's default fp fusion): 1 ulp.
    np.testing.assert_allclose(out[32:], m[0, :32] * 3 + np.float32(0.25), rtol=1e-6, atol=0)


@naiad.aggregate
class Running:
    """A running sum and maximum: carried through a loop and both ways of an `if`."""

    total: tl.tensor
    peak: tl.tensor

    @naiad.jit
    def add(self, x):
        return tl.aggregate_replace(self, total=self.total + x, peak=tl.maximum(self.peak, x))


@naiad.jit
def new_running(x):
    return Running(x, x)


@naiad.jit
def running_kernel(x_ptr, out_ptr, rows, flip, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    state = new_running(tl.load(x_ptr + offs))
    for r in range(1, rows):
        state = state.add(tl.load(x_ptr + r * BLOCK + offs))
    if flip > 0:
        state = Running(-state.total, -state.peak)
    tl.store(out_ptr + offs, state.total)
    tl.store(out_ptr + BLOCK + offs, state.peak)


@pytest.mark.parametrize("flip", [0, 1])
def test_an_aggregate_through_calls_loops_and_branches(flip):
    gen = rng(173 + flip)
    x = gen.integers(-100, 100, (5, 16)).astype(np.int32)
    out = poisoned(32, np.int32)
    running_kernel[(1,)](x, out, 5, flip, BLOCK=16)
    sign = -1 if flip else 1
    assert_exact(out[:16], sign * x.sum(axis=0, dtype=np.int32))
    assert_exact(out[16:], sign * x.max(axis=0))


@naiad.aggregate
class Shaped:
    shape: tl.tuple
    strides: tl.tuple


@naiad.jit
def shaped_kernel(x_ptr, out_ptr, stride0):
    view = Shaped((4, 8), (stride0, 1))
    tl.static_assert(view.shape[1] == 8)
    rows = tl.arange(0, view.shape[0])[:, None]
    cols = tl.arange(0, view.shape[1])[None, :]
    x = tl.load(x_ptr + rows * view.strides[0] + cols * view.strides[1])
    tl.store(out_ptr + rows * 8 + cols, x)


def test_tuple_fields():
    gen = rng(175)
    x = gen.standard_normal((4, 12)).astype(np.float32)
    out = poisoned((4, 8), np.float32)
    shaped_kernel[(1,)](x, out, 12)
    assert_exact(out, x[:, :8])


@pytest.mark.interpreter_only("plain Python: no kernel runs")
def test_the_generated_constructor_outside_kernels():
    """Triton's rules in plain Python: Python values become constexprs, tuples `tl.tuple`s
    (a NamedTuple's fields kept); an aggregate's type names its class and field types."""

    @naiad.aggregate
    class State:
        x: tl.constexpr
        y: tl.constexpr
        shape: tl.tuple = (3, tl.constexpr(7))

    state = State(3, y=7)
    assert isinstance(state.x, tl.constexpr) and state.x.value == 3 and state.y.value == 7
    assert isinstance(state.shape, tl.tuple) and state.shape[1].value == 7
    assert state.type == State(3, 7).type != State(4, 7).type
    assert isinstance(state.type, aggregate_type) and state.type.name.endswith(
        "State<c3, c7, Tc3_c7T>"
    )
    with pytest.raises(TypeError, match=r"missing required argument: 'y'"):
        State(1)
    with pytest.raises(AttributeError, match="immutable aggregate State; use aggregate_replace"):
        state.x = tl.constexpr(5)
    replaced = tl.aggregate_replace(state, y=9)
    assert (replaced.x.value, replaced.y.value, state.y.value) == (3, 9, 7)


@pytest.mark.interpreter_only("plain Python: no kernel runs")
def test_only_aggregates_are_parents():
    class Plain:
        pass

    with pytest.raises(TypeError, match="Aggregates can only inherit from other aggregates"):

        @naiad.aggregate
        class Child(Plain):
            x: tl.tensor


@naiad.jit
def assigns_a_field(x_ptr):
    pair = Pair(tl.load(x_ptr), tl.load(x_ptr))
    pair.second = tl.load(x_ptr + 1)


@naiad.aggregate
class Half:
    first: tl.tensor
    second: tl.tensor

    def __init__(self, first):
        self.first = first


@naiad.jit
def misses_a_field(x_ptr):
    Half(tl.load(x_ptr))


@naiad.jit
def a_constexpr_for_a_tensor(x_ptr):
    Pair(tl.load(x_ptr), 3)


@pytest.mark.parametrize(
    "kernel, match",
    [
        (assigns_a_field, "cannot assign to field 'second' on immutable aggregate Pair"),
        (misses_a_field, "constructor for Half did not initialize attribute 'second'"),
        (a_constexpr_for_a_tensor, "Expected .*tensor.* for attribute 'second'"),
    ],
    ids=["assignment", "missing", "type"],
)
def test_errors_name_the_field(kernel, match):
    x = rng(176).standard_normal(4).astype(np.float32)
    with kernel_error(match):
        kernel[(1,)](x)


@naiad.aggregate
class Tagged:
    a: tl.tensor
    b: tl.constexpr


@naiad.jit
def add_tag(agg):
    return agg.a + agg.b


@naiad.jit
def tagged_kernel(out_ptr):
    offs = tl.arange(0, 4)
    tl.store(out_ptr + offs, add_tag(Tagged(offs, tl.constexpr(42))))


def test_a_callee_is_named_by_the_aggregate_as_triton_names_it():
    out = poisoned(4, np.int32)
    tagged_kernel[(1,)](out)
    assert_exact(out, np.arange(4, dtype=np.int32) + 42)
    source = tagged_kernel.warmup(out, grid=(1,), target="cpu").asm["source"]
    assert "add_tag__test_aggregates.Tagged<i32S4S, c42>" in source


@naiad.aggregate
class Keyed:
    x: tl.tensor

    @naiad.jit
    def doubled(self):
        return self.x * 2


@naiad.jit
def keyed_kernel(out_ptr):
    tl.store(out_ptr, Keyed(tl.program_id(0)).doubled())


@pytest.mark.interpreter_only("the cache key: no kernel runs")
def test_a_jit_methods_source_is_part_of_the_kernels_cache_key():
    """Editing a method of an aggregate a kernel names changes the kernel's cache key, as
    editing a jit function it calls does."""
    from naiad.runtime.kernel_source import cache_key

    method = Keyed.doubled
    before, source = cache_key(keyed_kernel), method.src
    method._unsafe_update_src(source.replace("* 2", "* 3"))
    try:
        assert cache_key(keyed_kernel) != before
    finally:
        method._unsafe_update_src(source)
    assert cache_key(keyed_kernel) == before
