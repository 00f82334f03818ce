"""`math` ops, `tt.extern_elementwise` (libdevice) and the precise `tt` ops.

The instructions are Triton's, so results are bit-identical on the GPU:

- `math.exp` on f32 is `ex2.approx.f32` of `x * log2(e)` (no flush to zero); other widths call
  libdevice's `__nv_exp`.
- `math.sqrt` on f32 is `sqrt.approx.ftz.f32` and `math.exp2` on f32 `ex2.approx.ftz.f32`,
  which libdevice's `__nv_sqrtf` and `__nv_exp2f` become with Triton's reflect settings
  (`__CUDA_FTZ` = 1, `__CUDA_PREC_SQRT` = 0): the intrinsics directly, so that no libdevice link
  (60-130 ms of a compile) is needed for them.
- `tt.precise_sqrt` / `tt.precise_divf` are `sqrt.rn` / `div.rn`.
- Everything else calls libdevice (`__nv_<name>f` for f32, `__nv_<name>` for f64), linked by
  ptx.py with the kernel's flush-to-zero setting; absolute value, floor, ceil, trunc, fma,
  copysign and the integer bit counts are LLVM intrinsics, which NVPTX maps to one instruction.
"""

from __future__ import annotations

from ....dialects.math import BUILTIN_LIBM_STEMS, LIBDEVICE_LIBM_STEMS
from ....dialects.tt.attributes import PropagateNan
from ....passes.diagnostics import unsupported
from .context import Context, lowers
from .elementwise import intrinsic_suffix, map_registers
from .emitter import float_literal, llvm_type

_LOG2E = 1.4426950408889634

# math op -> LLVM intrinsic (overloaded on the element type)
_INTRINSICS = {
    "math.absf": "llvm.fabs",
    "math.floor": "llvm.floor",
    "math.ceil": "llvm.ceil",
    "math.trunc": "llvm.trunc",
    "math.roundeven": "llvm.roundeven",
    "math.round": "llvm.round",
    "math.fma": "llvm.fma",
    "math.copysign": "llvm.copysign",
    "math.ctpop": "llvm.ctpop",
}
# math op -> libdevice base name (f32 adds `f`)
_LIBDEVICE = {
    **BUILTIN_LIBM_STEMS,
    **LIBDEVICE_LIBM_STEMS,
    "math.rsqrt": "rsqrt",
    "math.sqrt": "sqrt",
}


# f32 math ops whose libdevice function is one NVVM intrinsic under `__CUDA_FTZ` = 1
_FTZ_INTRINSICS = {
    "math.sqrt": "llvm.nvvm.sqrt.approx.ftz.f",
    "math.exp2": "llvm.nvvm.ex2.approx.ftz.f",
}


def _libdevice_name(base: str, t: str) -> str | None:
    if t == "float":
        return f"__nv_{base}f"
    if t == "double":
        return f"__nv_{base}"
    return None


def _call_each(ctx: Context, op, name: str) -> None:
    map_registers(ctx, op, lambda t, *args: ctx.em.call(t, name, [(t, a) for a in args]))


@lowers(*_INTRINSICS)
def _intrinsic(ctx: Context, op) -> None:
    if op.name == "math.absf" and llvm_type(op.operands[0].type) == "i8":
        # An fp8 value travels as its bits, which no intrinsic takes: clear the sign bit.
        map_registers(ctx, op, lambda t, a: ctx.em.op(f"and i8 {a}, 127"))
        return
    _call_each(ctx, op, f"{_INTRINSICS[op.name]}.{intrinsic_suffix(op.operands[0].type)}")


@lowers("math.absi")
def _absi(ctx: Context, op) -> None:
    name = f"llvm.abs.{intrinsic_suffix(op.operands[0].type)}"
    map_registers(ctx, op, lambda t, a: ctx.em.call(t, name, [(t, a), ("i1", "false")]))


@lowers("math.ctlz", "math.cttz")
def _count_zeros(ctx: Context, op) -> None:
    name = f"llvm.{op.name[5:]}.{intrinsic_suffix(op.operands[0].type)}"
    map_registers(ctx, op, lambda t, a: ctx.em.call(t, name, [(t, a), ("i1", "false")]))


@lowers(*_LIBDEVICE)
def _math(ctx: Context, op) -> None:
    t = llvm_type(op.operands[0].type)
    if op.name == "math.exp" and t == "float":
        scale = float_literal(_LOG2E, "f32")

        def exp(t, a):
            scaled = ctx.em.op(f"fmul float {a}, {scale}")
            return ctx.em.call("float", "llvm.nvvm.ex2.approx.f", [("float", scaled)])

        map_registers(ctx, op, exp)
        return
    if op.name in _FTZ_INTRINSICS and t == "float":
        _call_each(ctx, op, _FTZ_INTRINSICS[op.name])
        return
    name = _libdevice_name(_LIBDEVICE[op.name], t)
    if name is None:
        unsupported(op, f"`{op.name}` on {op.operands[0].type} has no GPU lowering")
    _call_each(ctx, op, name)


@lowers("tt.precise_sqrt")
def _precise_sqrt(ctx: Context, op) -> None:
    t = llvm_type(op.operands[0].type)
    _call_each(ctx, op, "llvm.nvvm.sqrt.rn.f" if t == "float" else "llvm.nvvm.sqrt.rn.d")


@lowers("tt.precise_divf")
def _precise_divf(ctx: Context, op) -> None:
    t = llvm_type(op.operands[0].type)
    _call_each(ctx, op, "llvm.nvvm.div.rn.f" if t == "float" else "llvm.nvvm.div.rn.d")


@lowers("tt.extern_elementwise")
def _extern(ctx: Context, op) -> None:
    symbol = op.symbol.value
    if not symbol.startswith("__nv_"):
        unsupported(op, f"`{symbol}` is not a libdevice function")
    ret = llvm_type(op.result.type)
    types = [llvm_type(v.type) for v in op.operands]
    map_registers(ctx, op, lambda _, *args: ctx.em.call(ret, symbol, list(zip(types, args))))


@lowers("tt.clampf")
def _clampf(ctx: Context, op) -> None:
    """max(x, lo) then min(., hi); NaN propagates when `propagateNan` is `all`.

    The attribute prints as its integer (65535 : i32), so it is read through the enum's keyword:
    llvm.maximum/minimum are IEEE 754-2019's NaN-propagating operations (max.NaN/min.NaN on
    sm_80+), maxnum/minnum return the number.
    """
    nan = PropagateNan.keyword(op.propagateNan) == "all"
    suffix = intrinsic_suffix(op.x.type)
    high, low = ("llvm.maximum", "llvm.minimum") if nan else ("llvm.maxnum", "llvm.minnum")

    def clamp(t, x, lo, hi):
        raised = ctx.em.call(t, f"{high}.{suffix}", [(t, x), (t, lo)])
        return ctx.em.call(t, f"{low}.{suffix}", [(t, raised), (t, hi)])

    map_registers(ctx, op, clamp)
