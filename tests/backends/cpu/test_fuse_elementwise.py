"""`cpu-fuse-elementwise` does work linear in the chains it fuses (issue 13, item 9): a chain of N
generics is cloned once per op, not once per op per step (fusing a pair at a time re-cloned the
growing body: 20,000 clones at N = 200, 116,000 at 160 through the whole pipeline), and a fused
body stops at the pass's budget, so LLVM sees loops of bounded size. Counts, not seconds; the
times are bench/compile/unrolled_chain.py's. The rewrite itself is tests/ir/passes/
cpu-fuse-elementwise.mlir's; a long chain runs compiled here against NumPy.
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import dialects, knobs  # noqa: F401  (registers the ops)
from naiad.backends.cpu.fuse_elementwise import MAX_BODY_WEIGHT, fuse_elementwise
from naiad.dialects import syntax  # noqa: F401  (their text)
from naiad.ir.parser import parse_module

_SIN_WEIGHT = 16  # a math op's weight in the budget


def _sin_chain(n: int):
    """A function of `n` generics, each the sin of the one before (the Linalg form of
    `x = tl.sin(x)` unrolled n times)."""
    lines = [
        "#id = affine_map<(d0) -> (d0)>",
        "func.func @chain(%x0: tensor<64xf32>) -> tensor<64xf32> {",
        "  %e = tensor.empty() : tensor<64xf32>",
    ]
    for k in range(1, n + 1):
        lines += [
            f"  %x{k} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = "
            f'["parallel"]}} ins(%x{k - 1} : tensor<64xf32>) outs(%e : tensor<64xf32>) {{',
            "  ^bb0(%a: f32, %o: f32):",
            "    %s = math.sin %a : f32",
            "    linalg.yield %s : f32",
            "  } -> tensor<64xf32>",
        ]
    lines += [f"  return %x{n} : tensor<64xf32>", "}"]
    return parse_module("\n".join(lines))


def _generics(module) -> list:
    return [op for op in module.walk() if op.name == "linalg.generic"]


@pytest.mark.parametrize("n", [10, 40, 160])
def test_a_chain_is_cloned_once_per_op(n):
    module = _sin_chain(n)
    cloned = fuse_elementwise(module, max_body_weight=10**9)
    (fused,) = _generics(module)
    assert sum(op.name == "math.sin" for op in fused.body) == n
    assert cloned == n + 1  # every sin once, and the consumer's yield


@pytest.mark.parametrize("n", [40, 160, 640])
def test_a_long_chain_becomes_loops_of_bounded_size(n):
    module = _sin_chain(n)
    cloned = fuse_elementwise(module)
    per_loop = MAX_BODY_WEIGHT // _SIN_WEIGHT
    generics = _generics(module)
    sizes = [sum(op.name == "math.sin" for op in g.body) for g in generics]
    assert sum(sizes) == n and max(sizes) == per_loop
    assert len(generics) == -(-n // per_loop)
    assert cloned == n + len(generics)  # linear: one clone per sin and one yield per loop


@naiad.jit
def sin_chain(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    for _ in tl.static_range(N):
        x = tl.sin(x)
    tl.store(out_ptr + offs, x)


def test_a_chain_longer_than_one_loop_runs_compiled():
    n = 80  # three loops at the default budget
    rng = np.random.default_rng(9)
    x = rng.uniform(-4.0, 4.0, 256).astype(np.float32)
    out = np.full_like(x, np.nan)
    with knobs.override(NAIAD_BACKEND="cpu"):
        sin_chain[(1,)](x, out, N=n, BLOCK=256)
    expected = x.astype(np.float64)
    for _ in range(n):
        expected = np.sin(expected)
    # sin is contractive (|cos| <= 1): each step's few-ulp error does not grow along the chain.
    np.testing.assert_allclose(out, expected, rtol=0, atol=n * 4e-7)


def _broadcast_pair(body: str, rows: int):
    """`rows` x 64 generic subtracting a producer of 1 x 64 (`body` of %a) read through
    (d0, d1) -> (0, d1): the form of `x - tl.log(total)[None, :]`."""
    return parse_module(f"""
#row = affine_map<(d0, d1) -> (0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%t: tensor<1x64xf32>, %x: tensor<{rows}x64xf32>) -> tensor<{rows}x64xf32> {{
  %e1 = tensor.empty() : tensor<1x64xf32>
  %p = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%t : tensor<1x64xf32>) outs(%e1 : tensor<1x64xf32>) {{
  ^bb0(%a: f32, %o: f32):
    {body}
    linalg.yield %r : f32
  }} -> tensor<1x64xf32>
  %e = tensor.empty() : tensor<{rows}x64xf32>
  %c = linalg.generic {{indexing_maps = [#id, #row, #id],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%x, %p : tensor<{rows}x64xf32>, tensor<1x64xf32>) outs(%e : tensor<{rows}x64xf32>) {{
  ^bb0(%v: f32, %l: f32, %o: f32):
    %s = arith.subf %v, %l : f32
    linalg.yield %s : f32
  }} -> tensor<{rows}x64xf32>
  return %c : tensor<{rows}x64xf32>
}}""")


@pytest.mark.parametrize(
    "body, rows, fused",
    [
        ("%r = math.log %a : f32", 32, False),  # 32 logs an element: kept whole
        ("%r = math.log %a : f32", 1, True),  # a broadcast over one row: once an element
        ("%r = arith.addf %a, %a : f32", 32, True),  # cheap: computed again at each point
    ],
)
def test_a_math_producer_is_not_fused_under_a_broadcast(body, rows, fused):
    """A producer read at several points of the consumer's loops would run its body once per
    point: a log of the column sums under a tile of 32 rows made a softmax kernel 1.5x slower
    (softmax_columns.py; 0.60 -> 0.26 ms for a kernel of that form, 19 x 65,536)."""
    module = _broadcast_pair(body, rows)
    fuse_elementwise(module)
    assert len(_generics(module)) == (1 if fused else 2)
