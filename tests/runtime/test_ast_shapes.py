"""The largest block read from a kernel's AST (runtime/ast_shapes.py) against the frontend's:
the reading gives the largest tensor of the frontend's TTIR for the same specialization, or
says it cannot tell (None); it never gives less."""

import naiad
import naiad.language as tl
from naiad.ir.printer import print_module
from naiad.runtime import cpu_first_launch, ttir_work
from naiad.runtime.compiler import CompileOptions, frontend_module
from naiad.runtime.specialization import Specialization


def _largest(kernel, bound: dict, constexprs: dict):
    """(the AST reading's largest block or None, the frontend's largest block)."""
    fn = kernel.fn
    env = cpu_first_launch.known_constexprs(constexprs)
    read = cpu_first_launch.facts_of(fn, constexprs)
    spec = Specialization.of(kernel, {**bound, **constexprs})
    descriptors = cpu_first_launch._descriptor_blocks(spec.signature)
    reading = cpu_first_launch._largest_block(fn, constexprs, env, read, descriptors)
    module = frontend_module(kernel, spec, "cpu", CompileOptions())
    return reading, ttir_work.largest_block(print_module(module))


@naiad.jit
def attention_like(q, k, out, M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
    rows, columns, depth = tl.arange(0, M), tl.arange(0, N), tl.arange(0, D)
    query = tl.load(q + rows[:, None] * D + depth[None, :])
    acc = tl.zeros([M, D], tl.float32)
    peak = tl.full([M], -1e9, tl.float32)
    for start in range(0, 2 * N, N):
        keys = tl.load(k + (start + columns)[None, :] * D + depth[:, None])
        scores = tl.dot(query, keys)
        peak = tl.maximum(peak, tl.max(scores, 1))
        weights = tl.exp(scores - peak[:, None]).to(tl.float16)
        acc += tl.dot(weights, tl.trans(keys).to(tl.float16)).to(tl.float32)
    tl.store(out + rows[:, None] * D + depth[None, :], acc / tl.sum(acc, axis=1, keep_dims=True))


@naiad.jit
def pair_of(x, M: tl.constexpr, N: tl.constexpr):
    offsets = tl.arange(0, M)
    return tl.load(x + offsets), tl.load(x + offsets)[:, None] * tl.arange(0, N)[None, :]


@naiad.jit
def calls_a_pair(x, out, M: tl.constexpr, N: tl.constexpr, WIDE: tl.constexpr):
    column, square = pair_of(x, M, N)
    if WIDE:
        square = tl.reshape(square, [M * N])
        tl.store(out + tl.arange(0, M * N), square)
    else:
        tl.store(out + tl.arange(0, M), column + tl.sum(square, 1))


@naiad.jit
def through_a_block_pointer(x, out, M: tl.constexpr, N: tl.constexpr):
    block = tl.make_block_ptr(x, (M, N), (N, 1), (0, 0), block_shape=(M, N), order=(1, 0))
    values = tl.load(tl.advance(block, (0, 0)))
    tl.store(out + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], values)


@naiad.jit
def through_descriptors(x, host, out, M: tl.constexpr, N: tl.constexpr):
    described = tl.make_tensor_descriptor(x, [M, N], [N, 1], [M, N])
    rows = tl.arange(0, M)[:, None] * N
    tl.store(out + rows + tl.arange(0, N)[None, :], described.load([0, 0]))
    both = tl.cat(host.load([0, 0]), host.load([0, 0]), dim=0)
    tl.store(out + tl.arange(0, 2 * M)[:, None] * N + tl.arange(0, N)[None, :], both)


@naiad.jit
def scans(x, out, M: tl.constexpr):
    values = tl.load(x + tl.arange(0, M))
    tl.store(out + tl.arange(0, M), tl.associative_scan(values, 0, _add))


@naiad.jit
def _add(a, b):
    return a + b


def test_attention_like_loop_reads_its_dot_s_block():
    reading, frontend = _largest(
        attention_like, {"q": "*fp16", "k": "*fp16", "out": "*fp32"}, {"M": 64, "N": 32, "D": 16}
    )
    assert reading == frontend == 64 * 32


def test_a_callee_s_tuple_and_the_branch_taken():
    bound = {"x": "*fp32", "out": "*fp32"}
    for wide in (False, True):
        reading, frontend = _largest(calls_a_pair, bound, {"M": 32, "N": 16, "WIDE": wide})
        assert reading == frontend == 32 * 16


def test_a_block_pointer_s_block():
    reading, frontend = _largest(
        through_a_block_pointer, {"x": "*fp32", "out": "*fp32"}, {"M": 32, "N": 64}
    )
    assert reading == frontend == 32 * 64


def test_descriptors_blocks_from_the_kernel_and_the_signature():
    """An in-kernel descriptor's block is its `block_shape`; a host one's, its signature's;
    the concatenation of two host blocks is twice one."""
    bound = {"x": "*fp32", "host": "tensordesc<fp32[16, 8]>", "out": "*fp32"}
    reading, frontend = _largest(through_descriptors, bound, {"M": 16, "N": 8})
    assert reading == frontend == 2 * 16 * 8


def test_what_the_reading_does_not_know_is_not_told():
    reading, frontend = _largest(scans, {"x": "*fp32", "out": "*fp32"}, {"M": 64})
    assert reading is None and frontend == 64


@naiad.jit
def calls_sum_wrongly(x, out, M: tl.constexpr):
    tl.store(out, tl.sum())


def test_a_kernel_the_frontend_refuses_is_not_told():
    """The reading meets code no frontend compiles (a reduction of nothing): it answers None
    and leaves the error to the frontend."""
    fn = calls_sum_wrongly.fn
    read = cpu_first_launch.facts_of(fn, {"M": 16})
    assert cpu_first_launch._largest_block(fn, {"M": 16}, {"M": 16}, read, {}) is None


@naiad.jit
def shapes_one_by_one(out):
    a = tl.arange(0, 32).expand_dims(-1).broadcast_to(32, 32)
    tl.static_assert(a.shape == [tl.constexpr(32), tl.constexpr(32)])
    b = tl.reshape(tl.arange(0, 64), 2, 4, 8, can_reorder=True).trans(2, 1, 0)
    tl.store(out + tl.arange(0, 64), tl.reshape(b, 64) + tl.sum(tl.sum(a, 1), 0))


def test_sizes_given_one_by_one_and_shapes_compared():
    reading, frontend = _largest(shapes_one_by_one, {"out": "*i32"}, {})
    assert reading == frontend == 32 * 32
