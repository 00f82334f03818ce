"""The operations the kernel generator draws from: which dtypes each takes, the dtype it makes,
how it reads in kernel source, and the row of the tolerance table its result is held to.

Every operand of an operation has one dtype (the generator casts first), so the result dtype
never depends on Triton's promotion of mixed tensors; a Python literal only ever meets a tensor of
its own kind, which it does not widen. The few rules that still change a dtype (`tl.sum` of narrow
integers, `tl.max` of 16-bit floats, ...) are written out below, next to the operation.

Inputs are kept in safe domains inside the template itself (`tl.exp` of a clamped value,
`tl.sqrt` of an absolute value), so the result is comparable on every back end. Integer overflow,
division by zero and shifts past the width are kept in: Naiad defines them the same everywhere
(docs/architecture.md, "What the GPU defines and LLVM does not").
"""

from __future__ import annotations

from dataclasses import dataclass

from .tolerance import TOLERANCES

SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint32")
INTS = SIGNED + UNSIGNED
FLOATS = ("float16", "bfloat16", "float32", "float64")
WIDE_FLOATS = ("float32", "float64")
DTYPES = INTS + FLOATS
BOOL = "int1"

INT_WIDTHS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint32": 32}

# Bit reinterpretations from an integer to the float of its width. Only that direction: a float
# made by arithmetic may be a NaN whose payload differs between back ends (x86 makes 0xffc00000,
# the GPU 0x7fffffff), and reinterpreting it as an integer would expose the difference.
BITCASTS = {
    "int16": ("float16", "bfloat16"),
    "int32": ("float32",),
    "uint32": ("float32",),
    "int64": ("float64",),
}

# A clamp that keeps exp and sin away from overflow and from arguments too large to reduce well.
_CLAMPED = "tl.minimum(tl.maximum({0}, -8.0), 8.0)"


def is_exact(row: str) -> bool:
    """True when the tolerance table asks every back end for bit-identical results of `row`."""
    return all(tol.kind == "exact" for tol in TOLERANCES[row].values())


@dataclass(frozen=True)
class OpKind:
    """One operation of the generator.

    `template` is the source text, with `{0}`, `{1}`, `{2}` for the operands and `{c}` for a
    literal. `takes` lists the operands' dtype (the condition of `where` is always int1);
    `makes` maps an operand dtype to the result's, when it differs; `row` is the tolerance row
    of the result (a dict by operand dtype where the dtype decides it).
    """

    name: str
    template: str
    takes: tuple[str, ...]
    row: str | dict
    makes: str | dict | None = None
    literal: str | None = None  # "small" (2..9 or a short float) or "shift" (the width mask)

    def result_dtype(self, dtype: str) -> str:
        if self.makes is None:
            return dtype
        if isinstance(self.makes, str):
            return self.makes
        return self.makes.get(dtype, dtype)

    def result_row(self, dtype: str) -> str:
        return self.row if isinstance(self.row, str) else self.row[dtype]


def _binary(name, symbol, takes, row=None):
    return OpKind(name, f"{{0}} {symbol} {{1}}", takes, row or name)


def _with_literal(name, symbol, takes, row=None):
    return OpKind(f"{name}_c", f"{{0}} {symbol} {{c}}", takes, row or name, literal="small")


NUMBERS = INTS + FLOATS
ARITHMETIC = (
    _binary("add", "+", NUMBERS),
    _binary("sub", "-", NUMBERS),
    _binary("mul", "*", NUMBERS),
    _binary("floordiv", "//", INTS),
    _binary("mod", "%", INTS + WIDE_FLOATS),
    # fp32 `/` may be approximate on the GPU; fp64 `/` is correctly rounded everywhere.
    OpKind("truediv", "{0} / {1}", WIDE_FLOATS, {"float32": "truediv_fp32", "float64": "div_rn"}),
    _binary("and", "&", INTS + (BOOL,)),
    _binary("or", "|", INTS + (BOOL,)),
    _binary("xor", "^", INTS + (BOOL,)),
    OpKind("lshift", "{0} << ({1} & {c})", INTS, "lshift", literal="shift"),
    OpKind("rshift", "{0} >> ({1} & {c})", INTS, "rshift", literal="shift"),
    # bf16 minimum and maximum compute in fp32 and return fp32, as Triton's do.
    OpKind("minimum", "tl.minimum({0}, {1})", NUMBERS, "minimum", {"bfloat16": "float32"}),
    OpKind("maximum", "tl.maximum({0}, {1})", NUMBERS, "maximum", {"bfloat16": "float32"}),
)

WITH_LITERAL = (
    _with_literal("add", "+", NUMBERS),
    _with_literal("sub", "-", NUMBERS),
    _with_literal("mul", "*", NUMBERS),
    _with_literal("and", "&", INTS),
    OpKind("lt_c", "{0} < {c}", NUMBERS, "cmp", makes=BOOL, literal="small"),
    OpKind("ge_c", "{0} >= {c}", NUMBERS, "cmp", makes=BOOL, literal="small"),
)

COMPARISONS = tuple(
    OpKind(name, f"{{0}} {symbol} {{1}}", NUMBERS, "cmp", makes=BOOL)
    for name, symbol in (
        ("lt", "<"),
        ("le", "<="),
        ("gt", ">"),
        ("ge", ">="),
        ("eq", "=="),
        ("ne", "!="),
    )
)

WHERE = OpKind("where", "tl.where({0}, {1}, {2})", NUMBERS, "where")

UNARY = (
    OpKind("neg", "-{0}", NUMBERS, "neg"),
    OpKind("abs", "tl.abs({0})", NUMBERS, "abs"),
    OpKind("invert", "~{0}", INTS, "invert"),
)

# Functions of fp32/fp64 (the generator casts narrower values first), each on a safe domain.
MATH = (
    OpKind("exp", f"tl.exp({_CLAMPED})", WIDE_FLOATS, "exp"),
    OpKind("exp2", f"tl.exp2({_CLAMPED})", WIDE_FLOATS, "exp2"),
    OpKind("log", "tl.log(tl.abs({0}) + 1.0)", WIDE_FLOATS, "log"),
    OpKind("log2", "tl.log2(tl.abs({0}) + 1.0)", WIDE_FLOATS, "log2"),
    OpKind("sin", f"tl.sin({_CLAMPED})", WIDE_FLOATS, "sin"),
    OpKind("cos", f"tl.cos({_CLAMPED})", WIDE_FLOATS, "cos"),
    # No erf: the interpreter's `math.erf` (runtime/interpreter/elementwise.py, `_erf`, an
    # np.frompyfunc) returns a Python float for a 0-d operand, whose `.astype` then raises
    # AttributeError; the evaluator shares it, and the compiler makes erf of a constant block
    # an erf of a scalar. Put it back here once that is fixed.
    OpKind("sigmoid", "tl.sigmoid({0})", WIDE_FLOATS, "sigmoid"),
    OpKind("sqrt", "tl.sqrt(tl.abs({0}))", WIDE_FLOATS, "sqrt"),
    OpKind("rsqrt", "tl.rsqrt(tl.abs({0}) + 1.0)", WIDE_FLOATS, "rsqrt"),
    OpKind("sqrt_rn", "tl.sqrt_rn(tl.abs({0}))", ("float32",), "sqrt_rn"),
    OpKind("floor", "tl.floor({0})", WIDE_FLOATS, "floor"),
    OpKind("ceil", "tl.ceil({0})", WIDE_FLOATS, "ceil"),
)

# Reductions along `axis` ({axis} in the template). A float sum is held to the norm-wise bound;
# an integer sum wraps, so it is exact, as an addition.
_NARROW_TO_32 = {"int8": "int32", "int16": "int32", "uint8": "int32"}
REDUCTIONS = (
    OpKind(
        "sum",
        "tl.sum({0}, axis={axis})",
        NUMBERS,
        {**dict.fromkeys(INTS, "add"), **dict.fromkeys(FLOATS, "sum")},
        makes={"int8": "int32", "int16": "int32", "uint8": "uint32"},
    ),
    OpKind(
        "max",
        "tl.max({0}, axis={axis})",
        NUMBERS,
        "max",
        makes={**_NARROW_TO_32, "float16": "float32", "bfloat16": "float32"},
    ),
    OpKind(
        "min",
        "tl.min({0}, axis={axis})",
        NUMBERS,
        "min",
        makes={**_NARROW_TO_32, "float16": "float32", "bfloat16": "float32"},
    ),
    OpKind("argmax", "tl.argmax({0}, axis={axis})", NUMBERS, "argmax", makes="int32"),
    OpKind("argmin", "tl.argmin({0}, axis={axis})", NUMBERS, "argmin", makes="int32"),
    OpKind("xor_sum", "tl.xor_sum({0}, axis={axis})", INTS, "xor_sum"),
)

# Binary operations a loop accumulator or a branch result is updated with: they keep the shape
# of their first operand, and its dtype where `updates_for` says so.
UPDATES = tuple(
    op for op in ARITHMETIC if op.name in ("add", "sub", "mul", "xor", "minimum", "maximum")
)


def updates_for(dtype: str) -> tuple[OpKind, ...]:
    """The updates that keep a value of `dtype` in `dtype` (a loop-carried type is fixed)."""
    return tuple(op for op in UPDATES if dtype in op.takes and op.result_dtype(dtype) == dtype)


# A row (axis 0) or column (axis 1) vector broadcast to the 2-D block: a view of the vector
# (expand_dims) that fusion reads inside the generic consuming the block. A loop reads its
# carried vector so before it updates the vector (generator_build.carried_view).
EXPAND_BROADCAST = OpKind(
    "expand_broadcast",
    "tl.broadcast_to(tl.expand_dims({0}, {axis}), [BLOCK_M, BLOCK_N])",
    NUMBERS,
    "broadcast",
)

CAST = OpKind("cast", "{0}.to(tl.{dtype})", DTYPES + (BOOL,), "cast")
BITCAST = OpKind("bitcast", "{0}.to(tl.{dtype}, bitcast=True)", tuple(BITCASTS), "bitcast")

SMALL_INTS = tuple(range(2, 10))
SMALL_FLOATS = (0.25, 0.5, 1.5, 2.0, 3.0)


def literal(kind: str, dtype: str, rng) -> str:
    """The source text of the literal an operation takes: a small number of the dtype's kind, or
    for shifts the mask that keeps the amount below twice the width (shifts past the width
    are defined in Naiad, so half the masked amounts test that rule)."""
    if kind == "shift":
        return str(2 * INT_WIDTHS[dtype] - 1)
    if dtype in FLOATS:
        return repr(rng.choice(SMALL_FLOATS))
    return str(rng.choice(SMALL_INTS))


# A constant block: the initial value of a loop accumulator, or a value of its own, which the
# compiler folds into the operations that read it ({shape} is the block's shape in source).
FULL = OpKind("full", "tl.full({shape}, {c}, tl.{dtype})", DTYPES, "broadcast")

# Constants at the edges, so that the compiler's folders meet what the interpreter computes: zero
# divisors, all ones, the extremes of each integer type, -0.0, and floats that overflow fp16.
_EDGE_FLOATS = ("0.0", "-0.0", "0.001", "-2.5", "100000.0")


def edge_literal(dtype: str, rng) -> str:
    """A constant for `tl.full(..., dtype)`: an edge value or a small one."""
    if dtype in FLOATS:
        return rng.choice(_EDGE_FLOATS)
    width = INT_WIDTHS[dtype]
    if dtype in UNSIGNED:
        values = (0, 1, 7, 2**width - 1)
    else:  # not the minimum itself: `-2147483648` reads as the negation of a uint32 literal
        values = (0, -1, 7, 2 ** (width - 1) - 1, 1 - 2 ** (width - 1))
    return str(rng.choice(values))
