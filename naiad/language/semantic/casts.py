"""Type conversions (`x.to(...)`, `tl.cast`) and elementwise math, with Triton's dtype checks."""

from __future__ import annotations

from .. import dtypes as t
from ..core import _unwrap_if_constexpr, tensor


class CastsMixin:
    """`cast`, `bitcast` and the `tl.math` functions; mixed into `Semantic`."""

    def bitcast(self, input, dst_ty: t.dtype) -> tensor:
        input = self.to_tensor(input)
        src_ty = input.type
        dst_ty = src_ty.with_element_ty(dst_ty) if src_ty.is_block() else dst_ty
        src_sca, dst_sca = src_ty.scalar, dst_ty.scalar
        if src_sca == dst_sca:
            return input
        if src_sca.is_ptr() or dst_sca.is_ptr():
            return self.cast(input, dst_sca)
        if src_sca.primitive_bitwidth != dst_sca.primitive_bitwidth:
            raise ValueError(
                f"Cannot bitcast data-type of size {src_sca.primitive_bitwidth} to "
                f"data-type of size {dst_sca.primitive_bitwidth}"
            )
        return self._elementwise("arith.bitcast", (input,), dst_ty)

    def cast(self, input, dst_ty, fp_downcast_rounding=None, bitcast=False) -> tensor:
        input = self.to_tensor(input)
        dst_ty = _unwrap_if_constexpr(dst_ty)
        if not isinstance(dst_ty, t.dtype):
            raise TypeError(f"cast target must be a dtype, got {dst_ty!r}")
        if _unwrap_if_constexpr(bitcast):
            return self.bitcast(input, dst_ty)
        src_ty = input.type
        # The destination's scalar type, as Triton's cast (`x.to(block_ptr.type.element_ty)`).
        src_sca, dst_sca = src_ty.scalar, dst_ty.scalar
        if src_sca == dst_sca:
            return input
        dst_ty = src_ty.with_element_ty(dst_sca) if src_ty.is_block() else dst_sca
        self._check_fp8_supported(src_sca)
        self._check_fp8_supported(dst_sca)
        rounding = _unwrap_if_constexpr(fp_downcast_rounding)
        if rounding is not None and rounding not in ("rtne", "rtz"):
            raise ValueError(f"fp_downcast_rounding must be 'rtne' or 'rtz', got {rounding!r}")
        truncating_fp = (
            src_sca.is_floating()
            and dst_sca.is_floating()
            and src_sca.primitive_bitwidth > dst_sca.primitive_bitwidth
        )
        if rounding is not None and not truncating_fp:
            raise ValueError(
                "fp_downcast_rounding should be set only for truncating fp conversions"
            )
        # A narrowing float conversion with a rounding other than rtne is a `tt.fp_to_fp`.
        custom_rounding = truncating_fp and rounding is not None and rounding != "rtne"
        if src_sca.is_fp8() and dst_sca.is_int() and not src_sca.is_fp8e4b15():
            raise TypeError(
                f"cannot cast {src_sca} to {dst_sca}: convert fp8 to a wider float first"
            )
        if src_sca.is_int() and dst_sca.is_fp8() and not dst_sca.is_fp8e4b15():
            # Triton's `cast` has no integer -> fp8 path either (it ends in "cannot cast").
            raise TypeError(f"cannot cast {src_sca} to {dst_sca}: convert to a wider float first")
        if (
            (src_sca.is_fp8() and dst_sca.is_floating())
            or (src_sca.is_floating() and dst_sca.is_fp8())
            or custom_rounding
        ):
            rounding = rounding or "rtne"
            if not self.target.fp_conversion_supported(src_sca, dst_sca, rounding):
                raise ValueError(
                    f"conversion from {src_sca} to {dst_sca} with rounding {rounding} "
                    f"is not supported on {self.target.name}"
                )
            return self._convert("tt.fp_to_fp", input, dst_ty, rounding=rounding)
        if (
            (src_sca.is_fp16() or src_sca.is_bf16())
            and not dst_sca.is_fp32()
            and dst_sca.is_floating()
        ):
            return self.cast(self.cast(input, t.float32), dst_sca)
        if truncating_fp:
            return self._convert("arith.truncf", input, dst_ty)
        if src_sca.is_floating() and dst_sca.is_floating():
            return self._convert("arith.extf", input, dst_ty)
        return self._cast_integer_or_pointer(input, src_sca, dst_sca, dst_ty)

    def _convert(self, op: str, input: tensor, dst_ty, **attrs) -> tensor:
        """A value conversion; `src` names the source type for builders whose values are untyped."""
        return self._elementwise(op, (input,), dst_ty, src=input.type.scalar, **attrs)

    def _cast_integer_or_pointer(self, input, src_sca, dst_sca, dst_ty) -> tensor:
        if src_sca.is_int() and dst_sca.is_int():
            if dst_sca.is_bool():
                return self.not_equal(input, 0)
            if src_sca.int_bitwidth == dst_sca.int_bitwidth:
                # Integers are signless in the IR: only the language type changes.
                return tensor(self.builder.retype(input.handle, dst_ty), dst_ty)
            if src_sca.int_bitwidth > dst_sca.int_bitwidth:
                return self._convert("arith.trunci", input, dst_ty)
            sign_extend = src_sca.is_int_signed() and not src_sca.is_bool()
            return self._convert("arith.extsi" if sign_extend else "arith.extui", input, dst_ty)
        if src_sca.is_floating() and dst_sca.is_int():
            if dst_sca.is_bool():
                return self.not_equal(input, 0.0)
            op = "arith.fptosi" if dst_sca.is_int_signed() else "arith.fptoui"
            return self._convert(op, input, dst_ty)
        if src_sca.is_int() and dst_sca.is_floating():
            op = (
                "arith.uitofp" if src_sca.is_bool() or src_sca.is_int_unsigned() else "arith.sitofp"
            )
            return self._convert(op, input, dst_ty)
        if src_sca.is_ptr() and dst_sca.is_int():
            if dst_sca.is_bool():
                as_int = self._elementwise(
                    "tt.ptr_to_int", (input,), dst_ty.with_element_ty(t.int64)
                )
                return self.not_equal(as_int, 0)
            if dst_sca.int_bitwidth != 64:
                raise ValueError(f"cannot cast pointer to {dst_sca}: pointers are 64-bit")
            return self._elementwise("tt.ptr_to_int", (input,), dst_ty)
        if src_sca.is_int() and dst_sca.is_ptr():
            if src_sca.int_bitwidth != 64:
                raise ValueError(
                    f"cannot cast {src_sca} to a pointer: only 64-bit integers convert"
                )
            return self._elementwise("tt.int_to_ptr", (input,), dst_ty)
        if src_sca.is_ptr() and dst_sca.is_ptr():
            return self._elementwise("tt.bitcast", (input,), dst_ty)
        raise TypeError(f"cannot cast {input.type} to {dst_ty}")

    def _check_fp8_supported(self, scalar: t.dtype):
        if scalar.is_fp8() and scalar.name not in self.target.supported_fp8_dtypes:
            raise ValueError(
                f"type {scalar} not supported in this architecture. The supported fp8 "
                f"dtypes are {self.target.supported_fp8_dtypes}"
            )

    # -- tl.math --------------------------------------------------------------------------------
    def _float_math(self, op: str, x, allowed=("fp32", "fp64")) -> tensor:
        x = self.to_tensor(x)
        if x.type.scalar.name not in allowed:
            raise ValueError(f"Expected dtype {list(allowed)} but got {x.type.scalar.name}")
        return self._elementwise(op, (x,), x.type)

    def unary_math(self, name: str, x) -> tensor:
        """exp, exp2, log, log2, sin, cos, sqrt, rsqrt, erf, floor, ceil: fp32 and fp64 only."""
        return self._float_math(f"math.{name}", x)

    def sqrt_rn(self, x) -> tensor:
        return self._float_math("tt.precise_sqrt", x, ("fp32",))

    def div_rn(self, x, y) -> tensor:
        # div_rn, fma and umulhi make Python scalars tensors of their literal type first
        # (`to_tensor`, as Triton's math.py): they are not weak (`fma(x_fp16, 2.0, 1.0)` is fp32).
        x, y = self.binary_operands(self.to_tensor(x), self.to_tensor(y))
        if x.type.scalar.name != "fp32":
            raise ValueError(f"Expected dtype ['fp32'] but got {x.type.scalar.name}")
        return self._elementwise("tt.precise_divf", (x, y), x.type)

    def abs(self, x) -> tensor:
        x = self.to_tensor(x)
        scalar = x.type.scalar
        if scalar.is_fp8e4b15():
            mask = self.scalar_constant(0x7F, t.int8)
            return self.bitcast(self.and_(self.bitcast(x, t.int8), mask), scalar)
        if scalar.is_floating():
            return self._elementwise("math.absf", (x,), x.type)
        if scalar.is_int_signed():
            return self._elementwise("math.absi", (x,), x.type)
        if scalar.is_int_unsigned():
            return x
        raise ValueError(f"Unexpected dtype {scalar}")

    def fma(self, x, y, z) -> tensor:
        x, y, z = self.to_tensor(x), self.to_tensor(y), self.to_tensor(z)
        x, y = self.binary_operands(x, y)
        z, x = self.binary_operands(z, x)
        z, y = self.binary_operands(z, y)
        if not x.type.scalar.is_floating():
            raise ValueError(f"Expected a floating dtype for fma but got {x.type.scalar}")
        return self._elementwise("math.fma", (x, y, z), x.type)

    def umulhi(self, x, y) -> tensor:
        x, y = self.binary_operands(self.to_tensor(x), self.to_tensor(y))
        if x.type.scalar.name not in ("int32", "int64", "uint32", "uint64"):
            raise ValueError(
                f"Expected dtype ['int32', 'int64', 'uint32', 'uint64'] but got "
                f"{x.type.scalar.name}"
            )
        # Triton's umulhi is always `tt.mulhiui` (`__nv_umulhi` / `__nv_umul64hi` on NVIDIA): the
        # high half of the product of the bit patterns read as unsigned, for int32/int64 too.
        return self._elementwise("tt.mulhiui", (x, y), x.type)

    def extern_elementwise(self, symbol_for_types: dict, args, is_pure: bool, name: str) -> tensor:
        """A call of an external math function chosen by the exact dtypes of its arguments."""
        args = [self.to_tensor(a) for a in args]
        arg_types = tuple(a.type.scalar for a in args)
        if arg_types not in symbol_for_types and len(args) > 1:
            # Promote mixed operands (e.g. an fp32 tensor and a Python float) and look again.
            first = args[0]
            for i in range(1, len(args)):
                first, args[i] = self.binary_operands(first, args[i])
            args[0] = first
            for i in range(1, len(args)):
                args[0], args[i] = self.broadcast_impl_value(args[0], args[i])
            arg_types = tuple(a.type.scalar for a in args)
        if arg_types not in symbol_for_types:
            allowed = ", ".join("(" + ", ".join(str(x) for x in k) + ")" for k in symbol_for_types)
            raise ValueError(
                f"input arg type does not match: {name} takes {allowed}; got "
                f"({', '.join(str(x) for x in arg_types)})"
            )
        symbol, ret_sca = symbol_for_types[arg_types]
        for i in range(1, len(args)):
            args[0], args[i] = self.broadcast_impl_value(args[0], args[i])
        ret_ty = args[0].type.with_element_ty(ret_sca) if args[0].type.is_block() else ret_sca
        return self._elementwise(
            "tt.extern_elementwise", args, ret_ty, symbol=symbol, pure=is_pure, libname=name
        )
