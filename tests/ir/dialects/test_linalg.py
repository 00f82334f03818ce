"""`linalg`: construction (result types, body blocks), effects, and one invalid case per
verifier rule. The text of every op is tested in test_linalg_text.py."""

import random

from dialect_helpers import args, fails, tensor

from naiad.dialects import arith, linalg
from naiad.ir import (
    ArrayAttr,
    MemoryWrite,
    MemRefType,
    Pure,
    RecursiveMemoryEffects,
    f32,
    i32,
    index,
    verify,
)
from naiad.ir.affine import AffineMap, AffineMapAttr, dim, symbol
from naiad.ir.rewriter import is_trivially_dead

ID1 = AffineMap.identity(1)
ID2 = AffineMap.identity(2)


def _memref(shape, element=f32):
    return MemRefType(shape, element)


def _generic(inputs, outputs, maps, iterators, results=None, body=True):
    """A generic op whose body yields its first output argument (or its arguments' sum)."""
    op = linalg.GenericOp(inputs, outputs, maps, iterators, results)
    if body:
        block = op.body
        outs = block.arguments[len(inputs) :]
        op.body.append(linalg.YieldOp(list(outs)))
    return op


def test_generic_builds_its_body_and_results():
    x, s, e = args(tensor([4, 8], f32), f32, tensor([4], f32))
    maps = [ID2, AffineMap(2, 0, []), AffineMap.projection(2, [0])]
    op = linalg.GenericOp([x, s], [e], maps, ["parallel", "reduction"], doc="sum")
    assert [a.type for a in op.body.arguments] == [f32, f32, f32]
    assert [r.type for r in op.result_tensors] == [e.type]
    assert op.iterator_types is ArrayAttr([linalg.PARALLEL, linalg.REDUCTION])
    assert op.indexing_maps[2] is AffineMapAttr(AffineMap.projection(2, [0]))
    assert op.maps() == maps and op.num_loops == 2
    assert op.doc.value == "sum" and op.library_call is None
    acc = op.body.append(arith.AddFOp(op.body.arguments[0], op.body.arguments[2]))
    op.body.append(linalg.YieldOp([acc.result]))
    verify(op)
    assert RecursiveMemoryEffects in op.traits and is_trivially_dead(op)


def test_memref_form_has_no_results_and_writes_memory():
    x, o = args(_memref([8]), _memref([8]))
    op = _generic([x], [o], [ID1, ID1], ["parallel"])
    assert op.results == ()
    verify(op)
    assert MemoryWrite in op.traits and not is_trivially_dead(op)
    fill = linalg.FillOp(args(f32), [o])
    assert fill.results == () and MemoryWrite in fill.traits
    verify(fill)
    assert Pure in linalg.FillOp(args(f32), args(tensor([8], f32))).traits


def test_generic_rules():
    x, e, m = args(tensor([8], f32), tensor([8], f32), _memref([8]))
    fails(_generic([x], [m], [ID1, ID1], ["parallel"]), "pure tensor or buffer semantics")
    fails(
        _generic([x], [e], [ID1, ID1], ["parallel"], results=[]),
        "number of tensor results (0) to be equal to the number of output tensors (1)",
    )
    fails(
        _generic([x], [e], [ID1, ID1], ["parallel"], results=[tensor([4], f32)]),
        "expected type of operand #1 ('tensor<8xf32>') to match type of corresponding result "
        "('tensor<4xf32>')",
    )
    fails(_generic([x], [e], [ID1], ["parallel"]), "number of indexing_map (1) to be equal")
    with_symbol = AffineMap(1, 1, [dim(0) + symbol(0)])
    fails(
        _generic([x], [e], [with_symbol, ID1], ["parallel"]),
        "unexpected symbols in indexing_map #0",
    )
    fails(_generic([x], [e], [ID1, ID1], ["parallel"] * 2), "indexing_map #0 to have 2 dim(s)")
    first = AffineMap.projection(2, [0])
    fails(_generic([x], [e], [first, ID1], ["parallel"] * 2), "indexing_map #1 to have 2 dim(s)")
    y = args(tensor([4, 8], f32))[0]
    fails(_generic([y], [e], [ID1, ID1], ["parallel"]), "operand rank (2) to match the result rank")


def test_generic_static_shapes_follow_the_loops():
    x, small, big = args(tensor([8], f32), tensor([4], f32), tensor([16], f32))
    fails(
        _generic([x], [small], [ID1, ID1], ["parallel"]),
        "inferred input/output operand #1 has shape's dimension #0 to be 8, but found 4",
    )
    shifted = AffineMap(1, 0, [dim(0) + 9])
    fails(
        _generic([x], [big], [ID1, shifted], ["parallel"]),
        "dimension #0 to be greater than or equal to 17, but found 16",
    )
    fails(_generic([x], [big], [ID1, AffineMap(1, 0, [dim(0) - 1])], ["parallel"]), "less than 0")
    # A strided read is in bounds: loop of 8, input index 2 * d0 < 16.
    verify(_generic([big], [x], [AffineMap(1, 0, [dim(0) * 2]), ID1], ["parallel"]))


def test_generic_body_rules():
    x, e = args(tensor([8], f32), tensor([8], f32))
    op = _generic([x], [e], [ID1, ID1], ["parallel"], body=False)
    op.body.erase_argument(0)
    op.body.append(linalg.YieldOp([op.body.arguments[0]]))
    fails(op, "expected as many non-induction variable region arguments")
    y = args(tensor([8], i32))[0]
    op = linalg.GenericOp([y], [e], [ID1, ID1], ["parallel"])
    op.body.arguments[0].type = f32
    op.body.append(linalg.YieldOp([op.body.arguments[1]]))
    fails(op, "expected type of bb argument #0 ('f32') to match element or self type")
    op = _generic([x], [e], [ID1, ID1], ["parallel"], body=False)
    op.body.append(arith.AddFOp(*op.body.arguments))
    fails(op, "expects regions to end with 'linalg.yield', found 'arith.addf'")


def test_yield_and_index_rules():
    x, e = args(tensor([8], f32), tensor([8], f32))
    fails(linalg.YieldOp([x]), "expected parent op with LinalgOp interface")
    op = _generic([x], [e], [ID1, ID1], ["parallel"], body=False)
    op.body.append(linalg.YieldOp(list(op.body.arguments)))
    fails(op, "expected number of yield values (2) to match the number of inits / outs")
    op = _generic([x], [e], [ID1, ID1], ["parallel"], body=False)
    i = op.body.append(linalg.IndexOp(0))
    op.body.append(linalg.YieldOp([i.result]))
    fails(op, "type of yield operand 1 ('index') doesn't match the element type")
    op = _generic([x], [e], [ID1, ID1], ["parallel"])
    op.body.prepend(linalg.IndexOp(1))
    fails(op, "expected dim (1) to be lower than the number of loops (1)")
    assert linalg.IndexOp(0).result.type is index
    fails(linalg.IndexOp(0), "expected parent op with LinalgOp interface")


def _map_op(inputs, init):
    op = linalg.MapOp(inputs, init)
    op.body.append(linalg.YieldOp([op.body.arguments[0]]))
    return op


def test_map():
    a, b, e = args(tensor([4, 8], f32), tensor([4, 8], f32), tensor([4, 8], f32))
    op = linalg.MapOp([a, b], e)
    assert [t.type for t in op.body.arguments] == [f32, f32]
    assert op.result_tensors[0].type is e.type and op.num_loops == 2
    total = op.body.append(arith.AddFOp(*op.body.arguments))
    op.body.append(linalg.YieldOp([total.result]))
    verify(op)
    op = _map_op([a, b], e)
    op.body.erase_argument(1)
    fails(op, "expects number of operands to match the arity of mapper, but got: 2 and 1")
    op = _map_op([a], e)
    op.body.arguments[0].type = i32
    fails(op, "expected element type of input 'f32' to match bbArg type 'i32'")
    fails(_map_op([args(tensor([8, 4], f32))[0]], e), "expected shape of input (8, 4) to match")


def _reduce(inputs, inits, dims):
    op = linalg.ReduceOp(inputs, inits, dims)
    block = op.body
    op.body.append(linalg.YieldOp(list(block.arguments[len(inputs) :])))
    return op


def test_reduce():
    x, acc = args(tensor([4, 8], f32), tensor([4], f32))
    op = linalg.ReduceOp([x], [acc], [1])
    assert op.inputs == (x,) and op.inits == (acc,)
    assert op.result_tensors[0].type is acc.type
    assert [str(m) for m in op.maps()] == ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)"]
    total = op.body.append(arith.AddFOp(*op.body.arguments))
    op.body.append(linalg.YieldOp([total.result]))
    verify(op)
    y, acc8, acc2 = args(tensor([4, 4], f32), tensor([8], f32), tensor([4, 8], f32))
    fails(_reduce([x, y], [acc, acc], [1]), "expects all inputs to have the same shapes")
    fails(_reduce([x, x], [acc, acc8], [1]), "expects all outputs to have the same shapes")
    fails(_reduce([x], [acc], [2]), "dimensions for reduction should be in the range [0, 1].")
    fails(_reduce([x], [acc2], [1]), "number of dimensions after reduction 1 doesn't match")
    fails(_reduce([x], [acc8], [1]), "init dimensions [8] doesn't match input dimensions after")
    fails(_reduce([x], [acc], [1, 0]), "should be in increasing order")
    odd = _reduce([x], [acc], [1])
    odd.set_operands([x])
    fails(odd, "expects as many inputs as inits")
    op = _reduce([x], [acc], [1])
    op.body.erase_argument(0)
    fails(op, "mismatching number of operands and block arguments")
    for k, kind in ((0, "input"), (1, "output")):
        op = _reduce([x], [acc], [1])
        op.body.arguments[k].type = i32
        fails(op, f"{kind} element type 'f32' does not match corresponding block argument type")


def test_broadcast_and_transpose():
    x, e, t = args(tensor([8], f32), tensor([4, 8], f32), tensor([8, 4], f32))
    op = linalg.BroadcastOp(x, e, [0])
    assert op.result_tensors[0].type is e.type and op.inputs == (x,) and op.inits == (e,)
    assert [str(m) for m in op.maps()] == ["(d0, d1) -> (d1)", "(d0, d1) -> (d0, d1)"]
    verify(op)
    fails(linalg.BroadcastOp(x, e, [0, 1]), "input rank plus added dimensions does not match")
    fails(linalg.BroadcastOp(x, e, [2]), "dimension 0 is out of range. expected range: [0, 1]")
    fails(linalg.BroadcastOp(x, e, [1]), "input dim 0 should match init dim 0. input: 8")
    y = args(tensor([2, 3, 8], f32))[0]
    fails(linalg.BroadcastOp(args(tensor([8], f32))[0], y, [1, 0]), "in increasing order")
    op = linalg.TransposeOp(e, t, [1, 0])
    assert str(op.maps()[1]) == "(d0, d1) -> (d1, d0)"
    verify(op)
    fails(linalg.TransposeOp(e, t, [0, 0]), "permutation is not valid")
    fails(linalg.TransposeOp(e, y, [1, 0]), "input rank 2 does not match init rank 3")
    fails(linalg.TransposeOp(y, y, [1, 0]), "size of permutation 2 does not match the argument")
    fails(linalg.TransposeOp(e, e, [1, 0]), "dim(result, 0) = 4 doesn't match dim(input, ")


def test_named_ops_check_their_maps():
    rng = random.Random(5)
    m, n, k = (rng.randint(2, 64) for _ in range(3))
    a, b, c = args(tensor([m, k], f32), tensor([k, n], f32), tensor([m, n], f32))
    op = linalg.MatmulOp([a, b], [c])
    assert op.result_tensors[0].type is c.type
    assert [x.value for x in op.iterator_types] == ["parallel", "parallel", "reduction"]
    verify(op)
    wrong = args(tensor([k + 1, n], f32))[0]
    fails(linalg.MatmulOp([a, wrong], [c]), "operand #1 has shape's dimension #0 to be")
    fails(linalg.MatmulOp([a], [c]), "number of indexing_map (3) to be equal to the number")
    ba, bb, bc = args(tensor([3, m, k], f32), tensor([3, k, n], f32), tensor([3, m, n], f32))
    verify(linalg.BatchMatmulOp([ba, bb], [bc]))
    fails(linalg.BatchMatmulOp([ba, bb], [c]), "operand rank (2) to match the result rank")
    s, t = args(f32, tensor([m, n], f32))
    fill = linalg.FillOp([s], [t])
    assert [str(x) for x in fill.maps()] == ["(d0, d1) -> ()", "(d0, d1) -> (d0, d1)"]
    verify(fill)
    fails(linalg.FillOp([t], [t]), "expected a scalar fill value")
    verify(linalg.CopyOp([c], [t]))
    fails(linalg.CopyOp([a], [c]), "has shape's dimension")
