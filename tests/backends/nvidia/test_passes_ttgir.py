"""The TTGIR passes (convert-to-ttgir, coalesce, remove-layout-conversions) on small real
kernels: the layouts they choose are Triton 3.8's (read off Triton's own output for the same
TTIR), and every pass leaves the kernel computing the same values (the reference evaluator runs
the module before and after, on seeded random inputs, and the memory must agree bit for bit).
The add, row-sum and softmax kernels are those Triton's TTGIR fixtures were made from
(tests/fixture_kernels/ttgir_kernels.py).
"""

import numpy as np
import pytest
from fixture_kernels.ttgir_kernels import add_kernel, row_sum_kernel, softmax_kernel

import naiad
import naiad.language as tl
from naiad.backends.nvidia.passes.convert_to_ttgir import ConvertToTTGIR
from naiad.dialects import tt, ttg
from naiad.dialects.ttg.attributes import (
    BlockedEncodingAttr,
    DotOperandEncodingAttr,
    SliceEncodingAttr,
)
from naiad.ir import RankedTensorType, verify
from naiad.ir.passes import PassManager
from naiad.runtime.compiler import build_ttir
from naiad.runtime.evaluator import evaluate
from naiad.runtime.evaluator.arguments import argument_names
from naiad.runtime.evaluator.values import host_dtype

PIPELINE = ["convert-to-ttgir", "coalesce", "remove-layout-conversions"]
CONVERT = ["convert-to-ttgir"]
COALESCE = ["convert-to-ttgir", "coalesce"]
ADD = dict(x_ptr="*fp32", y_ptr="*fp32", out_ptr="*fp32", n=4096, BLOCK=1024)
ROW_SUM = dict(x_ptr="*fp32", y_ptr="*fp32", M=32, N=64)
SOFTMAX = dict(out_ptr="*fp32", in_ptr="*fp32", stride=1024, n_cols=1000, BLOCK=1024)


def blocked(size, threads, warps, order):
    return BlockedEncodingAttr(size, threads, warps, order)


@naiad.jit
def loop_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


@naiad.jit
def while_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """loop_sum_kernel's sum as a `while` loop (an `scf.while` carrying the accumulator)."""
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    start = 0
    while start < n:
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        start += BLOCK
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


@naiad.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.trans(tl.trans(c)))


def ttir(kernel, **args):
    """The kernel's TTIR (after the TTIR pipeline) for these arguments."""
    return build_ttir(kernel, args).module


def run(module, passes, num_warps=4):
    """Run `passes` on `module` (convert-to-ttgir for `num_warps`), verifying after each."""
    pipeline = [
        ConvertToTTGIR(num_warps=num_warps) if p == "convert-to-ttgir" else p for p in passes
    ]
    PassManager(pipeline, verify_each=True).run(module)
    verify(module)
    return module


def ops(module, cls):
    return [op for op in module.walk() if isinstance(op, cls)]


def tensors(module):
    for op in module.walk():
        for value in op.results:
            if isinstance(value.type, RankedTensorType):
                yield value.type


def ptr_encoding(op):
    return op.operands[0].type.encoding


# -- convert-to-ttgir ------------------------------------------------------------------------------
def test_convert_gives_every_tensor_the_default_layout_and_the_module_attributes():
    module = run(ttir(add_kernel, **ADD), CONVERT, num_warps=8)
    default = blocked([1], [32], [8], [0])
    assert {t.encoding for t in tensors(module)} == {default}
    attrs = {k: str(v) for k, v in module.attributes.items()}
    assert attrs == {
        "ttg.num-warps": "8 : i32",
        "ttg.num-ctas": "1 : i32",
        "ttg.threads-per-warp": "32 : i32",
        "ttg.target": '"cuda:90"',
    }
    assert not ops(module, ttg.ConvertLayoutOp)


def test_convert_lays_out_reductions_and_expand_dims_as_triton():
    module = run(ttir(row_sum_kernel, **ROW_SUM), CONVERT)
    expand = ops(module, tt.ExpandDimsOp)
    # The operand is a slice of the default 1-D layout with a dimension inserted, order [0, 1].
    assert [op.src.type.encoding for op in expand] == [
        SliceEncodingAttr(1, blocked([1, 1], [32, 1], [4, 1], [0, 1])),
        SliceEncodingAttr(0, blocked([1, 1], [1, 32], [1, 4], [0, 1])),
    ]
    load = ops(module, tt.LoadOp)[0]
    assert load.result.type.encoding == blocked([1, 1], [1, 32], [2, 2], [1, 0])
    reduces = ops(module, tt.ReduceOp)
    assert [op.results[0].type.encoding for op in reduces] == [
        SliceEncodingAttr(1, load.result.type.encoding),
        SliceEncodingAttr(0, load.result.type.encoding),
    ]
    # Triton's conversion: around each expand_dims, after each broadcast and reduction.
    assert len(ops(module, ttg.ConvertLayoutOp)) == 7


def test_convert_gives_fma_dots_their_blocked_layout_and_dot_operands():
    args = dict(a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32", M=64, N=64, K=32)
    module = run(ttir(dot_kernel, **args), CONVERT)
    (dot,) = ops(module, tt.DotOp)
    parent = blocked([4, 4], [2, 16], [4, 1], [1, 0])  # 4096 elements / 128 threads >= 16
    assert dot.d.type.encoding == parent
    assert dot.a.type.encoding == DotOperandEncodingAttr(0, parent)
    assert dot.b.type.encoding == DotOperandEncodingAttr(1, parent)


# -- coalesce --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pointer", "n", "size"),
    [("*fp32", 4096, 4), ("*fp16", 4096, 8), ("*fp32", 4095, 4)],
    ids=["f32 16B", "f16 16B", "n unaligned"],
)
def test_coalesce_gives_16_byte_accesses(pointer, n, size):
    args = dict(x_ptr=pointer, y_ptr=pointer, out_ptr=pointer, n=n, BLOCK=1024)
    module = run(ttir(add_kernel, **args), COALESCE)
    wanted = blocked([size], [32], [4], [0])
    memory = ops(module, tt.LoadOp) + ops(module, tt.StoreOp)
    assert [ptr_encoding(op) for op in memory] == [wanted] * 3


def test_coalesce_without_alignment_keeps_one_element_per_thread():
    # Arrays starting 4 bytes past a 16-byte boundary: no vector access is safe.
    arrays = [np.zeros(4097, np.float32)[1:] for _ in range(3)]
    args = dict(x_ptr=arrays[0], y_ptr=arrays[1], out_ptr=arrays[2], n=4096, BLOCK=1024)
    module = run(ttir(add_kernel, **args), COALESCE)
    memory = ops(module, tt.LoadOp) + ops(module, tt.StoreOp)
    assert {ptr_encoding(op) for op in memory} == {blocked([1], [32], [4], [0])}


def test_coalesce_orders_2d_accesses_by_contiguity():
    module = run(ttir(row_sum_kernel, **ROW_SUM), COALESCE)
    load = ops(module, tt.LoadOp)[0]
    assert ptr_encoding(load) == blocked([1, 4], [2, 16], [4, 1], [1, 0])


# -- remove-layout-conversions ---------------------------------------------------------------------
def test_remove_leaves_vector_add_in_one_coalesced_layout():
    module = run(ttir(add_kernel, **ADD), PIPELINE)
    assert not ops(module, ttg.ConvertLayoutOp)
    assert {t.encoding for t in tensors(module)} == {blocked([4], [32], [4], [0])}


def test_remove_carries_the_load_layout_through_reductions_and_loops():
    softmax = run(ttir(softmax_kernel, **SOFTMAX), PIPELINE)
    assert not ops(softmax, ttg.ConvertLayoutOp)
    assert {t.encoding for t in tensors(softmax)} == {blocked([4], [32], [4], [0])}
    args = dict(x_ptr="*fp16", out_ptr="*fp32", n=4096, BLOCK=2048)
    looped = run(ttir(loop_sum_kernel, **args), PIPELINE)
    # The loop-carried accumulator and its zero initial value take the f16 loads' 8 elements.
    (loop,) = [op for op in looped.walk() if op.name == "scf.for"]
    assert loop.results[0].type.encoding == blocked([8], [32], [4], [0])
    (store,) = ops(looped, tt.StoreOp)
    assert ptr_encoding(store) == blocked([4], [32], [4], [0])  # a store writes 16 bytes at most
    assert len(ops(looped, ttg.ConvertLayoutOp)) == 1


def test_remove_carries_the_load_layout_through_while_loops():
    """As through `scf.for`: the accumulator's `before` and `after` arguments and the loop's
    result take the loads' layout, so no conversion is left inside the loop."""
    args = dict(x_ptr="*fp16", out_ptr="*fp32", n=4096, BLOCK=2048)
    looped = run(ttir(while_sum_kernel, **args), PIPELINE)
    (loop,) = [op for op in looped.walk() if op.name == "scf.while"]
    eight = blocked([8], [32], [4], [0])
    assert loop.results[0].type.encoding == eight
    assert loop.before.block.arguments[0].type.encoding == eight
    assert loop.after.block.arguments[0].type.encoding == eight
    inside = [op for region in loop.regions for op in region.walk()]
    assert not [op for op in inside if isinstance(op, ttg.ConvertLayoutOp)]
    assert len(ops(looped, ttg.ConvertLayoutOp)) == 1  # the 16-byte store's, after the loop


def test_remove_keeps_the_conversions_two_layouts_really_need():
    module = run(ttir(row_sum_kernel, **ROW_SUM), PIPELINE)
    # Triton 3.8 keeps exactly these: each reduction's slice converted for its 1-D store.
    converts = ops(module, ttg.ConvertLayoutOp)
    assert [(type(c.src.type.encoding), type(c.result.type.encoding)) for c in converts] == [
        (SliceEncodingAttr, BlockedEncodingAttr)
    ] * 2
    assert {ptr_encoding(op) for op in ops(module, tt.LoadOp)} == {
        blocked([1, 4], [2, 16], [4, 1], [1, 0])
    }


# -- every pass keeps the values -------------------------------------------------------------------
CASES = {
    "add": (add_kernel, dict(ADD, n=4000)),
    "row_sum": (row_sum_kernel, ROW_SUM),
    "softmax": (softmax_kernel, SOFTMAX),
    "loop_sum": (loop_sum_kernel, dict(x_ptr="*fp16", out_ptr="*fp32", n=3000, BLOCK=1024)),
    "while_sum": (while_sum_kernel, dict(x_ptr="*fp16", out_ptr="*fp32", n=3000, BLOCK=1024)),
    "dot": (dot_kernel, dict(a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32", M=16, N=16, K=16)),
}


def _evaluate(module, scalars, seed):
    func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
    rng = np.random.default_rng(seed)
    args = []
    for t, scalar in zip(func.signature.inputs, scalars):
        pointee = getattr(t, "pointee_type", None)
        if pointee is None:
            args.append(scalar)
            continue
        values = rng.uniform(0.25, 4.0, 4096) * rng.choice([-1.0, 1.0], 4096)
        args.append(values.astype(host_dtype(pointee)))
    evaluate(module, func.sym_name.value, args, grid=(2,))
    return [a.view(np.uint8).copy() for a in args if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("stage", range(1, len(PIPELINE) + 1), ids=PIPELINE)
@pytest.mark.parametrize("case", sorted(CASES))
def test_pass_keeps_the_values(case, stage):
    kernel, args = CASES[case]
    before = ttir(kernel, **args)
    func = next(op for op in before.walk() if isinstance(op, tt.FuncOp))
    scalars = [args.get(name) for name in argument_names(func)]
    after = run(ttir(kernel, **args), PIPELINE[:stage])
    seed = sum(map(ord, case)) + stage
    for got, want in zip(_evaluate(after, scalars, seed), _evaluate(before, scalars, seed)):
        assert np.array_equal(got, want)
