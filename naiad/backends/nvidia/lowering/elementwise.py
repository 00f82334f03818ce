"""Elementwise `arith` and `tt` ops: register i of the result from register i of each operand
(the operands of an elementwise op share one layout).

Where LLVM leaves a result undefined and the GPU defines it, the GPU's result is produced
(docs/architecture.md): integer division and remainder by a divisor not known to be safe use
PTX's own `div`/`rem` (inline assembly, so LLVM cannot assume the divisor is non-zero; `rem` by 0
gives all ones, so a select makes x % 0 = x, Naiad's definition on every back end); shifts by
the bit width or more give PTX's result through a select. f32 `/` is `div.full.f32`, as
Triton's lowering emits for `arith.divf`. Float adds, subtracts and multiplies carry the
`contract` flag, so that LLVM fuses them into `fma` as Triton's default `enable_fp_fusion` does;
compiled with `enable_fp_fusion=False`, they do not (each rounds, as the interpreter's).
"""

from __future__ import annotations

from ....dialects.tt.types import PointerType
from ....ir import FloatType, IntegerType, RankedTensorType
from ....passes.diagnostics import unsupported
from .context import Context, lowers
from .emitter import element_of, llvm_type
from .indexing import layout_of

_INT_BINARY = {
    "arith.addi": "add",
    "arith.subi": "sub",
    "arith.muli": "mul",
    "arith.andi": "and",
    "arith.ori": "or",
    "arith.xori": "xor",
}
_FLOAT_BINARY = {
    "arith.addf": "fadd",
    "arith.subf": "fsub",
    "arith.mulf": "fmul",
    "arith.remf": "frem",
}
_CONTRACTIBLE = ("arith.addf", "arith.subf", "arith.mulf")
_INTRINSIC_BINARY = {
    "arith.maxnumf": "llvm.maxnum",
    "arith.minnumf": "llvm.minnum",
    "arith.maximumf": "llvm.maximum",
    "arith.minimumf": "llvm.minimum",
    "arith.maxsi": "llvm.smax",
    "arith.minsi": "llvm.smin",
    "arith.maxui": "llvm.umax",
    "arith.minui": "llvm.umin",
}
_CASTS = {
    "arith.extsi": "sext",
    "arith.extui": "zext",
    "arith.trunci": "trunc",
    "arith.extf": "fpext",
    "arith.truncf": "fptrunc",
    "arith.sitofp": "sitofp",
    "arith.uitofp": "uitofp",
    "arith.bitcast": "bitcast",
    "tt.bitcast": "bitcast",
    "tt.int_to_ptr": "inttoptr",
    "tt.ptr_to_int": "ptrtoint",
}
_DIVISIONS = {
    "arith.divsi": ("sdiv", "div.s"),
    "arith.divui": ("udiv", "div.u"),
    "arith.remsi": ("srem", "rem.s"),
    "arith.remui": ("urem", "rem.u"),
}


def intrinsic_suffix(t) -> str:
    """The overload suffix of an LLVM intrinsic for scalar type `t` (`f32`, `i32`)."""
    t = element_of(t)
    if isinstance(t, FloatType):
        return {"half": "f16", "bfloat": "bf16", "float": "f32", "double": "f64"}[llvm_type(t)]
    return f"i{t.width}"


def constant_leaders(ctx: Context, value) -> list[int] | None:
    """For each register of tensor `value`, the register whose result it may reuse, or None
    when every register is computed. As Triton's elementwise lowering, this reads AxisInfo's
    constancy of the result: a register basis that moves along one dimension by less than the
    constancy there (or not at all: a copy) stays in the same aligned block of equal values,
    so registers differing only in such bits hold the same result (a mask `cols < N` of
    consecutive columns is computed once per vector instead of once per element)."""
    t = value.type
    if not isinstance(t, RankedTensorType):
        return None
    # Whole aligned blocks of a power-of-two length: what the XOR of smaller bases stays in.
    constancy = [1 << (c.bit_length() - 1) for c in ctx.axis_info.info(value).constancy]
    layout = layout_of(t)
    same = 0
    for bit, basis in enumerate(layout.bases("register")):
        moved = [d for d, x in enumerate(basis) if x]
        if not moved or (len(moved) == 1 and basis[moved[0]] < constancy[moved[0]]):
            same |= 1 << bit
    if not same:
        return None
    return [r & ~same for r in range(layout.in_dim_size("register"))]


def map_registers(ctx: Context, op, make) -> None:
    """Result register i = make(type, operand registers i...); scalar operands broadcast;
    registers that must hold an earlier register's result reuse it (`constant_leaders`)."""
    lists = [ctx[v] for v in op.operands]
    count = max(len(x) for x in lists)
    t = llvm_type(op.operands[0].type)
    leaders = constant_leaders(ctx, op.results[0])
    if leaders is not None and len(leaders) != count:
        leaders = None
    out: list[str] = []
    for i in range(count):
        if leaders is not None and leaders[i] != i:
            out.append(out[leaders[i]])
        else:
            out.append(make(t, *[x[i] if len(x) > 1 else x[0] for x in lists]))
    ctx[op.results[0]] = out


def _lower_int_binary(ctx: Context, op) -> None:
    name = _INT_BINARY[op.name]
    map_registers(ctx, op, lambda t, a, b: ctx.em.op(f"{name} {t} {a}, {b}"))


def _lower_float_binary(ctx: Context, op) -> None:
    name = _FLOAT_BINARY[op.name]
    if ctx.fp_fusion and op.name in _CONTRACTIBLE:
        name += " contract"
    map_registers(ctx, op, lambda t, a, b: ctx.em.op(f"{name} {t} {a}, {b}"))


def _lower_intrinsic_binary(ctx: Context, op) -> None:
    name = f"{_INTRINSIC_BINARY[op.name]}.{intrinsic_suffix(op.operands[0].type)}"
    map_registers(ctx, op, lambda t, a, b: ctx.em.call(t, name, [(t, a), (t, b)]))


for _name in _INT_BINARY:
    lowers(_name)(_lower_int_binary)
for _name in _FLOAT_BINARY:
    lowers(_name)(_lower_float_binary)
for _name in _INTRINSIC_BINARY:
    lowers(_name)(_lower_intrinsic_binary)


@lowers("arith.divf")
def _divf(ctx: Context, op) -> None:
    full = llvm_type(op.lhs.type) == "float"

    def divide(t, a, b):
        if full:
            return ctx.em.asm(t, "div.full.f32 $0, $1, $2;", "=f,f,f", [(t, a), (t, b)], False)
        return ctx.em.op(f"fdiv {t} {a}, {b}")

    map_registers(ctx, op, divide)


@lowers("arith.negf")
def _negf(ctx: Context, op) -> None:
    map_registers(ctx, op, lambda t, a: ctx.em.op(f"fneg {t} {a}"))


def _safe_divisor(text: str, width: int, signed: bool) -> bool:
    """Whether LLVM's division is defined for this divisor: a constant that is neither 0 nor
    (signed) -1."""
    try:
        value = int(text)
    except ValueError:
        return False
    return value != 0 and not (signed and value % (1 << width) == (1 << width) - 1)


def _divide(ctx: Context, name: str, t: str, a: str, b: str) -> str:
    """`a / b` or `a % b` (`name` one of _DIVISIONS) of registers of LLVM type `t`, with the
    GPU's result where LLVM's would be undefined (module doc)."""
    llvm_name, ptx_name = _DIVISIONS[name]
    width = int(t[1:])
    signed = llvm_name.startswith("s")
    if _safe_divisor(b, width, signed):
        return ctx.em.op(f"{llvm_name} {t} {a}, {b}")
    if width < 16:  # PTX has no 8-bit division: widen (exact for these ops)
        ext = "sext" if signed else "zext"
        wa = ctx.em.op(f"{ext} {t} {a} to i16")
        wb = ctx.em.op(f"{ext} {t} {b} to i16")
        text = f"{ptx_name}16 $0, $1, $2;"
        wide = ctx.em.asm("i16", text, "=h,h,h", [("i16", wa), ("i16", wb)], False)
        result = ctx.em.op(f"trunc i16 {wide} to {t}")
    else:
        letter = "l" if width == 64 else "r" if width == 32 else "h"
        text = f"{ptx_name}{width} $0, $1, $2;"
        result = ctx.em.asm(t, text, f"={letter},{letter},{letter}", [(t, a), (t, b)], False)
    if ptx_name.startswith("rem"):  # `rem` by 0 gives all ones: Naiad defines x % 0 = x
        by_zero = ctx.em.op(f"icmp eq {t} {b}, 0")
        result = ctx.em.op(f"select i1 {by_zero}, {t} {a}, {t} {result}")
    return result


@lowers(*_DIVISIONS)
def _division(ctx: Context, op) -> None:
    map_registers(ctx, op, lambda t, a, b: _divide(ctx, op.name, t, a, b))


@lowers("arith.ceildivsi", "arith.ceildivui", "arith.floordivsi")
def _rounded_division(ctx: Context, op) -> None:
    """MLIR's rounded divisions (Triton's TTGIR has them for `tl.cdiv` and flattened loops):
    the truncating quotient moved by one where the remainder is not 0 and the exact quotient
    lies on that side. Built on the guarded `/` and `%` above, so a divisor of 0 gives the
    value the CPU back end and the evaluator give, never LLVM's undefined behaviour."""
    unsigned = op.name == "arith.ceildivui"
    suffix = "ui" if unsigned else "si"
    em = ctx.em

    def make(t, a, b):
        quotient = _divide(ctx, f"arith.div{suffix}", t, a, b)
        inexact = em.op(f"icmp ne {t} {_divide(ctx, f'arith.rem{suffix}', t, a, b)}, 0")
        if unsigned:
            return em.op(f"add {t} {quotient}, {em.op(f'zext i1 {inexact} to {t}')}")
        signs_differ = em.op(f"icmp slt {t} {em.op(f'xor {t} {a}, {b}')}, 0")
        if op.name == "arith.floordivsi":
            step = em.op(f"and i1 {inexact}, {signs_differ}")
            return em.op(f"sub {t} {quotient}, {em.op(f'zext i1 {step} to {t}')}")
        same_sign = em.op(f"xor i1 {signs_differ}, true")
        step = em.op(f"and i1 {inexact}, {same_sign}")
        return em.op(f"add {t} {quotient}, {em.op(f'zext i1 {step} to {t}')}")

    map_registers(ctx, op, make)


@lowers("arith.shli", "arith.shrui", "arith.shrsi")
def _shift(ctx: Context, op) -> None:
    """PTX clamps the shift amount: by the width or more, `<<` and logical `>>` give 0 and
    arithmetic `>>` the sign. LLVM's poison for such amounts is never selected."""
    width = element_of(op.lhs.type).width
    name = {"arith.shli": "shl", "arith.shrui": "lshr", "arith.shrsi": "ashr"}[op.name]

    def make(t, a, b):
        shifted = ctx.em.op(f"{name} {t} {a}, {b}")
        large = ctx.em.op(f"icmp uge {t} {b}, {width}")
        saturated = ctx.em.op(f"ashr {t} {a}, {width - 1}") if name == "ashr" else "0"
        return ctx.em.op(f"select i1 {large}, {t} {saturated}, {t} {shifted}")

    map_registers(ctx, op, make)


@lowers("arith.cmpi", "arith.cmpf")
def _compare(ctx: Context, op) -> None:
    kind = "icmp" if op.name == "arith.cmpi" else "fcmp"
    predicate = op.predicate_name
    map_registers(ctx, op, lambda t, a, b: ctx.em.op(f"{kind} {predicate} {t} {a}, {b}"))


@lowers("arith.select")
def _select(ctx: Context, op) -> None:
    t = llvm_type(op.results[0].type)
    map_registers(ctx, op, lambda _, c, a, b: ctx.em.op(f"select i1 {c}, {t} {a}, {t} {b}"))


@lowers(*_CASTS)
def _cast(ctx: Context, op) -> None:
    name = _CASTS[op.name]
    src, dst = op.operands[0].type, op.results[0].type
    to = llvm_type(dst)
    if name == "bitcast" and llvm_type(src) == to:
        ctx[op.results[0]] = ctx[op.operands[0]]
        return
    if _is_fp8(src) or _is_fp8(dst):
        unsupported(op, "the NVIDIA back end cannot convert fp8 values yet")
    map_registers(ctx, op, lambda t, a: ctx.em.op(f"{name} {t} {a} to {to}"))


@lowers("arith.fptosi", "arith.fptoui")
def _float_to_int(ctx: Context, op) -> None:
    """PTX's `cvt.rzi`: toward zero, saturated to the type, as the GPU defines what LLVM's
    `fptosi`/`fptoui` leave undefined (out of range, NaN). The instruction is inline assembly:
    LLVM, free to assume an in-range result, folds `fptosi(sitofp(x))` into a truncation of x.
    An 8-bit result is the low byte of the 16-bit conversion, as NVPTX converts one (there are
    no 8-bit registers); f16 and bf16 widen to f32 first, exactly."""
    src, dst = element_of(op.operands[0].type), element_of(op.results[0].type)
    if _is_fp8(src):
        unsupported(op, "the NVIDIA back end cannot convert fp8 values yet")
    sign = "s" if op.name == "arith.fptosi" else "u"
    wide = max(dst.width, 16)
    register = {16: "h", 32: "r", 64: "l"}[wide]

    def make(t, a):
        if t in ("half", "bfloat"):
            a, t = ctx.em.op(f"fpext {t} {a} to float"), "float"
        ptx_type, constraint = ("f32", "f") if t == "float" else ("f64", "d")
        text = f"cvt.rzi.{sign}{wide}.{ptx_type} $0, $1;"
        out = ctx.em.asm(f"i{wide}", text, f"={register},{constraint}", [(t, a)], False)
        return out if wide == dst.width else ctx.em.op(f"trunc i{wide} {out} to i{dst.width}")

    map_registers(ctx, op, make)


def _is_fp8(t) -> bool:
    t = element_of(t)
    return isinstance(t, FloatType) and t.width == 8


@lowers("tt.addptr")
def _addptr(ctx: Context, op) -> None:
    """`ptr + offset` elements; the offset is signed (an i32 offset is sign-extended)."""
    pointee = element_of(op.ptr.type).pointee_type
    elem = "i8" if isinstance(pointee, IntegerType) and pointee.width == 1 else llvm_type(pointee)
    if isinstance(pointee, PointerType):
        elem = "i64"
    offset_type = llvm_type(op.offset.type)
    map_registers(
        ctx,
        op,
        lambda t, p, o: ctx.em.op(f"getelementptr {elem}, {t} {p}, {offset_type} {o}"),
    )


@lowers("tt.mulhiui")
def _mulhiui(ctx: Context, op) -> None:
    width = element_of(op.x.type).width
    name = f"llvm.nvvm.mulhi.{'ull' if width == 64 else 'ui'}"
    map_registers(ctx, op, lambda t, a, b: ctx.em.call(t, name, [(t, a), (t, b)]))
