"""Every pointwise op of naiad.ops against torch, with a float64 reference: binary ops with
tensors and scalars on either side, unary math, activations, selection ops; each dtype family
the op takes. The default tier runs one float dtype in the interpreter; the full tier adds fp16,
bf16 and the integer dtypes, interpreted and compiled for the CPU."""

import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from ops_helpers import FLOATS, INTS, assert_matches, make, reference

import naiad
import naiad.language as tl
import naiad.ops as ops
from naiad import knobs
from naiad.ops.pointwise.codegen import TENSOR, generate

FULL = pytest.mark.full


def _family_dtypes(*families):
    """(dtype, in the default tier): fp32 (int32 for integer-only ops) in the default tier,
    the rest of each family in the full tier."""
    dtypes = [*(FLOATS if "float" in families else ()), *(INTS if "int" in families else ())]
    dtypes += [torch.bool] if "bool" in families else []
    return [(d, i == 0) for i, d in enumerate(dtypes)]


def _dtypes(*families):
    return [
        d if default else pytest.param(d, marks=FULL) for d, default in _family_dtypes(*families)
    ]


BINARY = {
    "add": (ops.add, torch.add, ("float", "int", "bool")),
    "sub": (ops.sub, torch.sub, ("float", "int")),
    "mul": (ops.mul, torch.mul, ("float", "int", "bool")),
    "div": (ops.div, torch.div, ("float", "int")),
    "remainder": (ops.remainder, torch.remainder, ("float", "int")),
    "fmod": (ops.fmod, torch.fmod, ("float", "int")),
    "floor_divide": (ops.floor_divide, torch.floor_divide, ("float", "int")),
    "maximum": (ops.maximum, torch.maximum, ("float", "int")),
    "minimum": (ops.minimum, torch.minimum, ("float", "int")),
    "pow": (ops.pow, torch.pow, ("float",)),
    "eq": (ops.eq, torch.eq, ("float", "int", "bool")),
    "ne": (ops.ne, torch.ne, ("float", "int")),
    "lt": (ops.lt, torch.lt, ("float", "int")),
    "le": (ops.le, torch.le, ("float", "int")),
    "gt": (ops.gt, torch.gt, ("float", "int")),
    "ge": (ops.ge, torch.ge, ("float", "int")),
    "logical_and": (ops.logical_and, torch.logical_and, ("float", "bool")),
    "logical_or": (ops.logical_or, torch.logical_or, ("float", "bool")),
    "logical_xor": (ops.logical_xor, torch.logical_xor, ("float", "bool")),
    "bitwise_and": (ops.bitwise_and, torch.bitwise_and, ("int", "bool")),
    "bitwise_or": (ops.bitwise_or, torch.bitwise_or, ("int", "bool")),
    "bitwise_xor": (ops.bitwise_xor, torch.bitwise_xor, ("int", "bool")),
}
_POSITIVE_BASE = {"pow"}
_NONZERO_DIVISOR = {"div", "remainder", "fmod", "floor_divide"}


def _binary_cases():
    return [
        pytest.param(name, dtype, marks=() if default else FULL, id=f"{name}-{str(dtype)[6:]}")
        for name, (_, _, families) in BINARY.items()
        for dtype, default in _family_dtypes(*families)
    ]


def _operands(name, dtype, gen):
    low = 0.5 if name in _POSITIVE_BASE else -3.0
    x = make((3, 1, 5), dtype, gen, low=low)
    y = make((4, 5), dtype, gen, nonzero=name in _NONZERO_DIVISOR)
    return x, y


@pytest.mark.parametrize("name, dtype", _binary_cases())
def test_binary_op_broadcast(name, dtype, gen, backend):
    ours, theirs, _ = BINARY[name]
    x, y = _operands(name, dtype, gen)
    assert_matches(ours(x, y), reference(theirs, x, y))


_SCALAR_FIRST = {"add", "sub", "mul", "div", "remainder", "floor_divide"}
_SCALAR_SECOND = _SCALAR_FIRST | {"pow", "fmod", "eq", "ne", "lt", "le", "gt", "ge"}


@pytest.mark.parametrize("name", sorted(_SCALAR_SECOND))
def test_binary_op_with_scalars(name, gen, backend):
    """A Python scalar on either side, and a 0-dim tensor: torch's promotion keeps the tensor's
    dtype (fp16 here) where the scalar is of its kind."""
    ours, theirs, _ = BINARY[name]
    x, _ = _operands(name, torch.float16, gen)
    scalar = 1.5 if name not in _NONZERO_DIVISOR else -1.25
    assert_matches(ours(x, scalar), reference(theirs, x, scalar))
    if name in _SCALAR_FIRST:
        assert_matches(ours(scalar, x.abs() + 0.5), reference(theirs, scalar, x.abs() + 0.5))
    zero_dim = torch.tensor(2.5, dtype=torch.float64)
    assert_matches(ours(x, zero_dim), reference(theirs, x, zero_dim))


def test_integer_tensor_and_float_scalar_promote_to_float(backend, gen):
    x = make((7,), torch.int32, gen)
    assert_matches(ops.add(x, 0.5), reference(torch.add, x, 0.5))
    assert_matches(ops.div(x, 4), reference(torch.div, x, 4))
    assert_matches(ops.mul(x, 3), reference(torch.mul, x, 3))


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_rounding_modes(mode, gen, backend):
    x = make((6, 7), torch.float32, gen) * 4
    y = make((7,), torch.float32, gen, nonzero=True)
    assert_matches(
        ops.div(x, y, rounding_mode=mode), reference(torch.div, x, y, rounding_mode=mode)
    )
    xi, yi = make((6, 7), torch.int64, gen), make((7,), torch.int64, gen, nonzero=True)
    assert_matches(
        ops.div(xi, yi, rounding_mode=mode), reference(torch.div, xi, yi, rounding_mode=mode)
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_floor_division_of_floats_rounds_as_torch(dtype, gen, backend):
    """Floor division of floats is torch's to the bit: 1 // 0.1 is 9 (not floor(1 / 0.1), 10),
    inf // 1 and x // 0 as torch gives them (nan, signed infinities), zeros keep their signs."""
    x = torch.tensor([1.0, 1.0, float("inf"), -float("inf"), 5.0, -5.0, 0.0, -0.0, 7.0, 0.3])
    y = torch.tensor([0.1, -0.1, 1.0, 3.0, 0.0, 0.0, 2.0, 1.0, -0.7, 0.1])
    x = torch.cat([x, make((200,), torch.float32, gen) * 10]).to(dtype)
    y = torch.cat([y, make((200,), torch.float32, gen, nonzero=True)]).to(dtype)
    expected = torch.floor_divide(x, y)
    for actual in (ops.floor_divide(x, y), ops.div(x, y, rounding_mode="floor")):
        assert torch.equal(actual.isnan(), expected.isnan())
        kept = ~expected.isnan()
        assert torch.equal(actual[kept], expected[kept])
        assert torch.equal(actual[kept].signbit(), expected[kept].signbit())


def test_add_and_sub_alpha(gen, backend):
    x, y = make((5, 6), torch.float32, gen), make((6,), torch.float32, gen)
    assert_matches(ops.add(x, y, alpha=2.5), reference(torch.add, x, y, alpha=2.5))
    assert_matches(ops.sub(x, y, alpha=-3), reference(torch.sub, x, y, alpha=-3))


UNARY = {
    "exp": (ops.exp, torch.exp, (-3, 3)),
    "exp2": (ops.exp2, torch.exp2, (-3, 3)),
    "expm1": (ops.expm1, torch.expm1, (-1, 1)),
    "log": (ops.log, torch.log, (0.1, 5)),
    "log2": (ops.log2, torch.log2, (0.1, 5)),
    "log10": (ops.log10, torch.log10, (0.1, 5)),
    "log1p": (ops.log1p, torch.log1p, (-0.5, 2)),
    "sqrt": (ops.sqrt, torch.sqrt, (0, 5)),
    "rsqrt": (ops.rsqrt, torch.rsqrt, (0.1, 5)),
    "sin": (ops.sin, torch.sin, (-3, 3)),
    "cos": (ops.cos, torch.cos, (-3, 3)),
    "tan": (ops.tan, torch.tan, (-1, 1)),
    "tanh": (ops.tanh, torch.tanh, (-3, 3)),
    "atan": (ops.atan, torch.atan, (-3, 3)),
    "erf": (ops.erf, torch.erf, (-3, 3)),
    "sigmoid": (ops.sigmoid, torch.sigmoid, (-5, 5)),
    "reciprocal": (ops.reciprocal, torch.reciprocal, (0.5, 3)),
    "abs": (ops.abs, torch.abs, (-3, 3)),
    "neg": (ops.neg, torch.neg, (-3, 3)),
    "floor": (ops.floor, torch.floor, (-3, 3)),
    "ceil": (ops.ceil, torch.ceil, (-3, 3)),
    "trunc": (ops.trunc, torch.trunc, (-3, 3)),
    "round": (ops.round, torch.round, (-3, 3)),
    "sign": (ops.sign, torch.sign, (-3, 3)),
    "relu": (ops.relu, torch.relu, (-3, 3)),
    "gelu": (ops.gelu, F.gelu, (-4, 4)),
    "gelu_tanh": (
        lambda x: ops.gelu(x, approximate="tanh"),
        lambda x: F.gelu(x, approximate="tanh"),
        (-4, 4),
    ),
    "silu": (ops.silu, F.silu, (-5, 5)),
    "elu": (lambda x: ops.elu(x, 0.7), lambda x: F.elu(x, 0.7), (-3, 3)),
    "leaky_relu": (lambda x: ops.leaky_relu(x, 0.2), lambda x: F.leaky_relu(x, 0.2), (-3, 3)),
    "hardswish": (ops.hardswish, F.hardswish, (-5, 5)),
    "hardsigmoid": (ops.hardsigmoid, F.hardsigmoid, (-5, 5)),
    "softplus": (ops.softplus, F.softplus, (-5, 30)),
    "logical_not": (ops.logical_not, torch.logical_not, (-1, 1)),
    "isnan": (ops.isnan, torch.isnan, (-1, 1)),
    "isinf": (ops.isinf, torch.isinf, (-1, 1)),
}


@pytest.mark.parametrize("dtype", _dtypes("float"))
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_op(name, dtype, gen, backend):
    ours, theirs, (low, high) = UNARY[name]
    x = make((4, 33), dtype, gen, low=low, high=high)
    if name in ("isnan", "isinf", "abs", "sign"):
        x[0, :4] = torch.tensor([math.nan, math.inf, -math.inf, 0.0])
    assert_matches(ours(x), reference(theirs, x))


# Unary ops torch defines where they are not smooth, for the special values.
_EDGES = ("relu", "elu", "leaky_relu", "hardswish", "hardsigmoid", "softplus", "abs", "sign",
          "floor", "ceil", "trunc", "round", "neg", "silu")  # fmt: skip


@pytest.mark.parametrize("name", _EDGES)
def test_unary_ops_of_nan_infinities_and_signed_zeros(name, backend):
    """NaN stays NaN (a select on x > 0 had made relu's 0, a clamp without NaN hardsigmoid's),
    infinities and -0.0 come out as torch's, sign bits included."""
    ours, theirs, _ = UNARY[name]
    x = torch.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0, -2.5, 3.5])
    actual, expected = ours(x), theirs(x)
    assert torch.equal(actual.isnan(), expected.isnan())
    kept = ~expected.isnan()
    torch.testing.assert_close(actual[kept], expected[kept])
    assert torch.equal(actual[kept].signbit(), expected[kept].signbit())


@pytest.mark.parametrize("dtype", _dtypes("int"))
def test_integer_unary_ops(dtype, gen, backend):
    x = make((17,), dtype, gen)
    pairs = [(ops.abs, torch.abs), (ops.neg, torch.neg), (ops.bitwise_not, torch.bitwise_not)]
    for ours, theirs in [*pairs, (ops.exp, torch.exp), (ops.sign, torch.sign)]:
        if dtype == torch.uint8 and ours is ops.neg:
            continue
        assert_matches(ours(x), reference(theirs, x))


def test_where_clamp_masked_fill(gen, backend):
    x = make((4, 6), torch.float32, gen)
    y = make((6,), torch.float16, gen)
    cond = make((4, 1), torch.bool, gen)
    assert_matches(ops.where(cond, x, y), reference(torch.where, cond, x, y))
    assert_matches(ops.clamp(x, -1.0, 0.5), reference(torch.clamp, x, -1.0, 0.5))
    assert_matches(ops.clamp(x, min=0.0), reference(torch.clamp, x, min=0.0))
    assert_matches(ops.clamp(x, max=y), reference(torch.clamp, x, max=y))
    lo, hi = make((6,), torch.float32, gen) - 1, make((4, 1), torch.float32, gen) + 1
    assert_matches(ops.clamp(x, lo, hi), reference(torch.clamp, x, lo, hi))
    assert_matches(ops.masked_fill(x, cond, -7.0), reference(torch.masked_fill, x, cond, -7.0))
    value = torch.tensor(3.0)
    assert_matches(ops.masked_fill(x, cond, value), reference(torch.masked_fill, x, cond, value))


@pytest.mark.parametrize("executor", ["interpreter", "cpu"])
@pytest.mark.parametrize("inner", [96, 100])
def test_operands_constant_along_long_rows(inner, executor, gen):
    """Rows of at least 64 elements are walked a block of a row per program; on the CPU an
    operand constant along them (x + c[:, None]) is loaded once a row. Either side, a promoted
    dtype, a row's tail masked (100), a condition and a bound broadcast so, a strided output;
    compiled in the default tier too."""
    with knobs.override(NAIAD_BACKEND=executor):
        _constant_along_rows(inner, gen)


def _constant_along_rows(inner, gen):
    x = make((6, 3, inner), torch.float32, gen)
    col = make((6, 3, 1), torch.float16, gen)
    cond = make((3, 1), torch.bool, gen)
    assert_matches(ops.add(x, col), reference(torch.add, x, col))
    assert_matches(ops.sub(col, x), reference(torch.sub, col, x))
    assert_matches(ops.where(cond, x, col), reference(torch.where, cond, x, col))
    assert_matches(ops.clamp(x, max=col), reference(torch.clamp, x, max=col))
    out = torch.empty(6, 3, 2 * inner)[..., ::2]
    ops.mul(x, col, out=out)
    assert_matches(out, reference(torch.mul, x, col))


def test_clamp_keeps_nan(backend):
    x = torch.tensor([math.nan, -5.0, 5.0, 0.25])
    assert_matches(ops.clamp(x, -1, 1), torch.clamp(x, -1, 1))


def test_lerp_addcmul_addcdiv(gen, backend):
    a, b = make((3, 8), torch.float32, gen), make((8,), torch.float32, gen)
    w = make((3, 1), torch.float32, gen, low=0, high=1)
    assert_matches(ops.lerp(a, b, 0.3), reference(torch.lerp, a, b, 0.3))
    assert_matches(ops.lerp(a, b, w), reference(torch.lerp, a, b, w))
    t1, t2 = make((3, 8), torch.float32, gen), make((3, 8), torch.float32, gen, nonzero=True)
    assert_matches(
        ops.addcmul(a, t1, t2, value=0.5), reference(torch.addcmul, a, t1, t2, value=0.5)
    )
    assert_matches(ops.addcdiv(a, t1, t2, value=-2), reference(torch.addcdiv, a, t1, t2, value=-2))


@pytest.mark.parametrize("dtype", [torch.float32, pytest.param(torch.int64, marks=FULL)])
def test_fill(dtype, gen, backend):
    x = make((5, 3), dtype, gen)
    assert ops.fill_(x, 2) is x
    assert torch.equal(x, torch.full((5, 3), 2, dtype=dtype))
    y = ops.fill(x[:, 1], 7)
    assert torch.equal(y, torch.full((5,), 7, dtype=dtype))


@pytest.mark.parametrize(
    "src, dst",
    [
        (torch.float32, torch.float16),
        (torch.float32, torch.int32),
        (torch.float32, torch.bool),
        pytest.param(torch.float64, torch.bfloat16, marks=FULL),
        pytest.param(torch.int64, torch.float32, marks=FULL),
        pytest.param(torch.bool, torch.float32, marks=FULL),
        pytest.param(torch.float16, torch.float64, marks=FULL),
    ],
)
def test_to_dtype(src, dst, gen, backend):
    x = make((3, 10), src, gen)
    if src.is_floating_point:
        x[0, :3] = torch.tensor([0.0, 0.25, -0.75])
    assert_matches(ops.to(x.t(), dst), x.t().to(dst))


@naiad.jit
def _exp_of(x):
    return tl.exp(x)


def test_gpu_contiguous_operands_move_as_vectors():
    """Compiled for an H100/H200 without one: a generated kernel over sizes that are multiples
    of 16 loads and stores 16-byte vectors (the sizes are specialized; unspecialized, every
    element went on its own, at about half of torch's bandwidth on an H200)."""
    kernel = generate(_exp_of, [(TENSOR, True)], 1)
    x, out = np.zeros(4096 * 64, np.float32), np.zeros(4096 * 64, np.float16)
    compiled = kernel.warmup(
        x, out, x.size, 1, 1, False, tl.float32, False, 1024, grid=(1,), target="cuda:sm_90a"
    )
    accesses = set(re.findall(r"(?:ld|st)\.global\S*", compiled.asm["ptx"]))
    assert accesses == {"ld.global.v4.b32", "st.global.v4.b32"}


def test_out_of_a_dtype_the_result_cannot_be_cast_to_raises(gen, interpreted):
    """A float result into an integer `out`, or an integer tensor updated in place by a float,
    raises as torch does (the result was truncated into it); casts torch allows still run."""
    x = make((3, 4), torch.float32, gen)
    i = make((3, 4), torch.int64, gen)
    calls = [
        lambda m: m.add(x, x, out=torch.empty(3, 4, dtype=torch.int64)),
        lambda m: m.mul(i, 0.5, out=torch.empty(3, 4, dtype=torch.int32)),
        lambda m: i.clone().add_(2.5) if m is torch else ops.add_(i.clone(), 2.5),
    ]
    for call in calls:
        for m in (torch, ops):
            with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
                call(m)
    wide = torch.empty(3, 4, dtype=torch.float64)
    assert_matches(ops.add(i, i, out=wide), torch.add(i, i).double())
