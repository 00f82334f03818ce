"""A first launch's size told from its kernel's AST (runtime/cpu_first_launch.py): which kernels
it reads, and what it says of their blocks and loops."""

import types

import naiad
import naiad.language as tl
from naiad.runtime.cpu_first_launch import Verdict, _estimate, small_before_ir
from naiad.runtime.loop_runs import loop_runs


@naiad.jit
def straight(x, out, BLOCK: tl.constexpr, SCALE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if SCALE is not None:
        tl.store(out + offsets, tl.load(x + offsets) * SCALE)


@naiad.jit
def square(x, out, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out + offsets[:, None] * BLOCK + offsets[None, :], tl.load(x))


@naiad.jit
def unrolled(x, out, BLOCK: tl.constexpr, TRIPS: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    for i in tl.static_range(0, TRIPS):
        tl.store(out + i * BLOCK + offsets, tl.load(x + offsets))


@naiad.jit
def branches_on_a_tensor(x, out, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    value = tl.load(x)
    if value > 0:
        tl.store(out + offsets, value)


@naiad.jit
def loops_at_run_time(x, out, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    for i in range(n):
        tl.store(out + i * BLOCK + offsets, tl.load(x + offsets))


@naiad.jit
def blocks_of_a_stage(x, out, start, n, STAGE: tl.constexpr, BLOCK: tl.constexpr):
    if STAGE == 1:
        lo, hi = 0, start * BLOCK
    else:
        lo, hi = start * BLOCK, n
    offsets = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.range(lo, hi, BLOCK, num_stages=2):
        acc += tl.load(x + i + offsets)
    tl.store(out + offsets, acc)


@naiad.jit
def stages(x, out, n, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
    start = tl.program_id(0)
    if CAUSAL:
        blocks_of_a_stage(x, out, start, n, 1, BLOCK)
    blocks_of_a_stage(x, out, start, n, 2 if CAUSAL else 3, BLOCK)


@naiad.jit
def keeps_a_loop_name(x, out, n, BLOCK: tl.constexpr):
    for i in range(n):
        last = tl.load(x + i * BLOCK + tl.arange(0, BLOCK))
    tl.store(out + tl.arange(0, BLOCK), last)


def test_a_callee_s_loop_counts_what_its_caller_binds():
    """`blocks_of_a_stage`'s bounds come from the caller's program id, argument and
    constexprs, through a branch on a constexpr: 16 trips on program 0, fewer on the last."""
    small = small_before_ir(stages, {"BLOCK": 1024, "CAUSAL": False})
    assert small({"n": 16 * 1024}, (4, 1, 1))  # 4 programs x 1,024 x 16 trips = 2**16
    assert not small({"n": 17 * 1024}, (4, 1, 1))


def test_a_loop_no_program_runs_is_told_apart():
    """The causal stage 1 runs `range(0, start * BLOCK)`: no trip on a grid of one program
    (whose stage 2 runs), a launch the frontend checks before the interpreter runs it; on two
    programs the last program runs it."""
    small = small_before_ir(stages, {"BLOCK": 64, "CAUSAL": True})
    assert small({"n": 256}, (1, 1, 1)) is Verdict.SMALL_WITH_A_LOOP_UNRUN
    assert small({"n": 256}, (2, 1, 1)) is Verdict.SMALL


def test_a_name_a_loop_alone_binds_read_after_it_is_left_to_the_ttir():
    assert small_before_ir(keeps_a_loop_name, {"BLOCK": 16}) is None


@naiad.jit
def helper(v, DOUBLE: tl.constexpr):
    return v * 2 if DOUBLE else v


@naiad.jit
def typed_helper(v):
    return v * 2 if v > 0 else 0  # two types, joined by the frontend


@naiad.jit
def calls_helpers(x, out, BLOCK: tl.constexpr, TYPED: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    v = tl.load(x + offsets)
    if TYPED:
        v = typed_helper(v)
    tl.store(out + offsets, helper(v, True))


def test_a_straight_kernel_is_small_on_few_programs_of_small_blocks():
    small = small_before_ir(straight, {"BLOCK": 1024, "SCALE": 3})
    assert small({}, (1, 1, 1)) and small({}, (64, 1, 1))
    assert not small({}, (65, 1, 1))  # more programs than the interpreter runs at once
    assert not small_before_ir(straight, {"BLOCK": 1 << 17, "SCALE": 3})({}, (1, 1, 1))


def test_a_block_of_two_dimensions_counts_its_square():
    assert small_before_ir(square, {"BLOCK": 128})({}, (4, 1, 1))  # 4 x 128 x 128 = 2**16
    assert not small_before_ir(square, {"BLOCK": 256})({}, (2, 1, 1))


def test_a_static_loop_counts_its_trips():
    assert small_before_ir(unrolled, {"BLOCK": 1024, "TRIPS": 4})({}, (16, 1, 1))
    assert not small_before_ir(unrolled, {"BLOCK": 1024, "TRIPS": 4})({}, (17, 1, 1))


def test_what_the_frontend_alone_types_is_left_to_the_ttir():
    """A branch on a tensor (the frontend joins its paths' types): no answer from the AST."""
    assert small_before_ir(branches_on_a_tensor, {"BLOCK": 16}) is None


def test_a_loop_the_arguments_bound_counts_the_launch_s_trips():
    """`range(n)`: 16 programs of 1,024 elements, 4 trips each, is the work of 64 programs;
    a launch whose loop body runs in no program is told apart (the frontend types that body,
    the interpreter would not)."""
    small = small_before_ir(loops_at_run_time, {"BLOCK": 1024})
    assert small({"n": 4}, (16, 1, 1)) is Verdict.SMALL
    assert not small({"n": 4}, (17, 1, 1))
    assert small({"n": 0}, (1, 1, 1)) is Verdict.SMALL_WITH_A_LOOP_UNRUN
    assert not small({"n": None}, (1, 1, 1))  # (not an integer: the walk cannot tell)


def test_the_jit_functions_a_kernel_names_are_read_too():
    assert small_before_ir(helper, {"DOUBLE": True})({}, (1, 1, 1))
    assert small_before_ir(calls_helpers, {"BLOCK": 64, "TYPED": True}) is None


@naiad.jit
def halves(x, out, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    HALF: tl.constexpr = BLOCK // 2
    COLUMNS: tl.constexpr = 32 if WIDE == 1 else 16
    offsets = tl.arange(0, HALF)[:, None] * COLUMNS + tl.arange(0, COLUMNS)[None, :]
    tl.store(out + offsets, tl.load(x + offsets))


def test_constexprs_the_kernel_binds_count_as_sizes():
    """`HALF: tl.constexpr = BLOCK // 2` is a size like BLOCK's: 64 programs of 256 x 32."""
    assert small_before_ir(halves, {"BLOCK": 512, "WIDE": 1})({}, (8, 1, 1))
    assert not small_before_ir(halves, {"BLOCK": 512, "WIDE": 1})({}, (9, 1, 1))


@naiad.jit
def rows_and_columns(x, out, BLOCK: tl.constexpr, ROWS: tl.constexpr, COLUMNS: tl.constexpr):
    flat = tl.arange(0, BLOCK)
    tl.store(out + flat, tl.load(x + flat))
    grid = tl.arange(0, ROWS)[:, None] * COLUMNS + tl.arange(0, COLUMNS)[None, :]
    tl.store(out + grid, tl.load(x + grid) + 1)


def test_a_flat_block_and_a_grid_of_smaller_ones_count_apart():
    """1,024 flat elements and a 16 x 32 grid: the largest block is 1,024, not 1,024 x 32."""
    small = small_before_ir(rows_and_columns, {"BLOCK": 1024, "ROWS": 16, "COLUMNS": 32})
    assert small({}, (64, 1, 1))


def test_a_jit_function_an_object_holds_is_read_too():
    """`helpers.typed_helper(v)`: reached through the object's attribute, and read."""
    helpers = types.SimpleNamespace(typed_helper=typed_helper, helper=helper)

    @naiad.jit
    def through_an_object(x, out, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(out + offsets, helpers.typed_helper(tl.load(x + offsets)))

    assert small_before_ir(through_an_object, {"BLOCK": 64}) is None


def test_a_callee_the_reading_cannot_follow_is_left_to_the_ttir():
    table = {"helper": helper}

    @naiad.jit
    def through_a_table(x, out, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(out + offsets, table["helper"](tl.load(x + offsets), True))

    assert small_before_ir(through_a_table, {"BLOCK": 64}) is None


def test_a_jit_function_a_class_holds_as_a_static_method_is_read_too():
    class Helpers:
        typed = staticmethod(typed_helper)

    @naiad.jit
    def through_a_class(x, out, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(out + offsets, Helpers.typed(tl.load(x + offsets)))

    assert small_before_ir(through_a_class, {"BLOCK": 64}) is None


@naiad.jit
def tile_and_row(x, out, BM: tl.constexpr, BN: tl.constexpr, ROW: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    tile = offs_m[:, None] * BN + offs_n[None, :]
    tl.store(out + tile, tl.load(x + tile))
    row = tl.arange(0, ROW)
    tl.store(out + row, tl.load(x + row) * 2)


def test_a_name_bound_to_one_arange_widens_by_its_size():
    """`offs_m[:, None]` of `offs_m = ... + tl.arange(0, BM)` is BM's: the 16 x 16 tile and
    the row of 1,024 make a largest block of 1,024 (not 1,024 x 1,024, as any size might be
    widened where a name is)."""
    small = small_before_ir(tile_and_row, {"BM": 16, "BN": 16, "ROW": 1024})
    assert small({}, (64, 1, 1))


@naiad.jit
def square_block(x, B: tl.constexpr):
    rows, columns = tl.arange(0, B)[:, None], tl.arange(0, B)[None, :]
    tl.store(x + rows * B + columns, tl.zeros([B, B], tl.float32))


@naiad.jit
def calls_with_a_large_block(x, SIDE: tl.constexpr):
    offsets = tl.arange(0, 16)
    tl.store(x + offsets, tl.load(x + offsets) + 1)
    square_block(x, SIDE)


def test_a_callee_s_sizes_are_the_ones_its_call_binds():
    """The callee's block is SIDE x SIDE, SIDE its caller's constexpr: 1,024 x 1,024 is no
    small launch, though the kernel itself names only 16-element blocks."""
    assert not small_before_ir(calls_with_a_large_block, {"SIDE": 1024})({}, (1, 1, 1))
    assert small_before_ir(calls_with_a_large_block, {"SIDE": 16})({}, (1, 1, 1))


@naiad.jit
def outer_of_loaded(x, y, out, A: tl.constexpr, B: tl.constexpr):
    rows = tl.load(x + tl.arange(0, A))
    columns = tl.load(y + tl.arange(0, B)).to(tl.float32)
    for _ in range(2):
        columns = tl.maximum(columns, 0.0) * 2
    offsets = tl.arange(0, A)[:, None] * B + tl.arange(0, B)[None, :]
    tl.store(out + offsets, rows[:, None] * columns[None, :])


@naiad.jit
def outer_of_a_callee_s_vector(x, out, A: tl.constexpr, B: tl.constexpr):
    rows = tl.load(x + tl.arange(0, A))
    widen_by(rows, out, B)


@naiad.jit
def widen_by(rows, out, B: tl.constexpr):
    columns = tl.arange(0, B)
    tl.store(out + columns[None, :], rows[:, None] + columns[None, :])


def test_a_loaded_vector_widened_counts_its_own_length():
    """`rows` and `columns` are loads of A and B elements (through a loop and a method): the
    block they make is A x B, not A x A, whether widened where loaded or in a callee."""
    assert _estimate(outer_of_loaded, {"A": 1024, "B": 16})[0] == 1024 * 16
    assert _estimate(outer_of_a_callee_s_vector, {"A": 1024, "B": 16})[0] == 1024 * 16


@naiad.jit
def bound_set_on_both_paths(x, flag, BLOCK: tl.constexpr):
    if flag > 0:
        steps = 1000
    else:
        steps = 1000
    for i in range(steps):
        tl.store(x + i * BLOCK + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32))


def test_a_value_both_paths_of_an_unknown_if_bind_is_known_after_it():
    """`flag` is not an integer the walk knows; both paths set `steps` to 1,000, an integer
    past the ones Python keeps one object of, so the loop's 1,000 trips are counted."""
    assert loop_runs(bound_set_on_both_paths.fn, {"BLOCK": 16}, {"flag": None}, (1, 1, 1)) == (
        1000,
        True,
    )
