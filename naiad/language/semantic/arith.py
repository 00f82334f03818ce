"""Arithmetic, comparisons and bitwise operators with Triton's promotion and broadcasting rules."""

from __future__ import annotations

import warnings

from .. import dtypes as t
from ..core import PropagateNan, _unwrap_if_constexpr, tensor
from .promotion import computation_type, literal_type


class ArithMixin:
    """Binary and unary operators; mixed into `Semantic`."""

    def _elementwise(self, op: str, operands, ty: t.dtype, **attrs) -> tensor:
        return tensor(self.builder.elementwise(op, [o.handle for o in operands], ty, **attrs), ty)

    # -- operand preparation --------------------------------------------------------------------
    def _check_scalar_fits(self, value, ty: t.dtype):
        if (
            ty.is_int()
            and not ty.is_bool()
            and isinstance(value, int)
            and not isinstance(value, bool)
        ):
            if ty.is_int_unsigned() and value < 0:
                raise ValueError(
                    "Cannot perform a binary operation between an unsigned tensor and a "
                    "negative scalar. Perform a explicit cast on one of them."
                )
            if not ty.get_int_min_value() <= value <= ty.get_int_max_value():
                raise ValueError(f"Scalar {value} is out of range for type {ty}")

    def binary_operands(
        self,
        lhs,
        rhs,
        allow_lhs_ptr=False,
        allow_rhs_ptr=False,
        arithmetic_check=True,
        div_or_mod=False,
    ):
        """Broadcast, promote and cast both operands to their computation type."""
        lhs_scalar, rhs_scalar = self.is_python_scalar(lhs), self.is_python_scalar(rhs)
        lhs_value, rhs_value = _unwrap_if_constexpr(lhs), _unwrap_if_constexpr(rhs)
        # Python scalars are typed without being made: they are made once, in the final type.
        lhs = lhs_value if lhs_scalar else self.to_tensor(lhs)
        rhs = rhs_value if rhs_scalar else self.to_tensor(rhs)
        lhs_sca = literal_type(lhs_value) if lhs_scalar else lhs.type.scalar
        rhs_sca = literal_type(rhs_value) if rhs_scalar else rhs.type.scalar
        self._check_ptr_operand(lhs_sca, rhs_sca, allow_lhs_ptr)
        self._check_ptr_operand(rhs_sca, lhs_sca, allow_rhs_ptr)
        if arithmetic_check and not lhs_sca.is_ptr() and not rhs_sca.is_ptr():
            ret = computation_type(lhs_sca, lhs_scalar, rhs_sca, rhs_scalar, div_or_mod)
            if lhs_scalar:
                self._check_scalar_fits(lhs_value, ret)
            if rhs_scalar:
                self._check_scalar_fits(rhs_value, ret)
            # A Python scalar is made in the computation type from its value, as Triton does
            # (not from its literal type and converted: `x_fp64 + 0.1` adds the double 0.1).
            lhs = self.scalar_constant(lhs_value, ret) if lhs_scalar else self.cast(lhs, ret)
            rhs = self.scalar_constant(rhs_value, ret) if rhs_scalar else self.cast(rhs, ret)
        else:
            lhs, rhs = self.to_tensor(lhs), self.to_tensor(rhs)
        return self.broadcast_impl_value(lhs, rhs)

    @staticmethod
    def _check_ptr_operand(ty, other, allow_ptr):
        if ty.is_ptr() and not allow_ptr:
            raise TypeError(f"invalid operands of type {ty} and {other}")
        if ty.is_ptr() and other.is_floating():
            raise TypeError(f"invalid operands of type {ty} and {other}")

    def _sanitized(self, op: str, a: tensor, b: tensor, ty) -> tensor:
        """Integer add/sub/mul; in debug mode below 64 bits also an overflow assertion.

        As Triton's `binary_op_sanitize_overflow_impl`: the check (the exact result in 64 bits,
        compared with the type's bounds) comes before the operation, with Triton's message."""
        scalar = ty.scalar
        if (
            self.target.debug
            and self.target.sanitize_overflow
            and scalar.is_int()
            and not scalar.is_bool()
            and scalar.int_bitwidth < 64
        ):
            wide = t.int64
            wa, wb = self.cast(a, wide), self.cast(b, wide)
            exact = self._elementwise(op, (wa, wb), wa.type)
            high = self.scalar_constant(scalar.get_int_max_value(), wide)
            low = self.scalar_constant(scalar.get_int_min_value(), wide)
            inside = self.and_(self.less_equal(exact, high), self.greater_equal(exact, low))
            name = op.split(".")[1][:-1]  # arith.muli -> mul
            self.device_assert(
                inside, f"int{scalar.int_bitwidth} overflow detected for operation {name}"
            )
        return self._elementwise(op, (a, b), ty)

    # -- + - * / // % ---------------------------------------------------------------------------
    def add(self, input, other, sanitize_overflow: bool = True) -> tensor:
        input, other = self.binary_operands(input, other, True, True)
        a_sca, b_sca = input.type.scalar, other.type.scalar
        if a_sca.is_ptr() and b_sca.is_ptr():
            raise TypeError("cannot add pointers together")
        if b_sca.is_ptr():
            input, other = other, input
            a_sca, b_sca = b_sca, a_sca
        if a_sca.is_ptr():
            if b_sca.is_int_unsigned() and b_sca.int_bitwidth < 64:
                # tt.addptr reads its offsets as signed: widen unsigned ones first (as Triton).
                other = self.cast(other, t.int64)
            return self._elementwise("tt.addptr", (input, other), input.type)
        if a_sca.is_floating():
            return self._elementwise("arith.addf", (input, other), input.type)
        if sanitize_overflow:
            return self._sanitized("arith.addi", input, other, input.type)
        return self._elementwise("arith.addi", (input, other), input.type)

    def sub(self, input, other, sanitize_overflow: bool = True) -> tensor:
        input, other = self.binary_operands(input, other, True, False)
        scalar = input.type.scalar
        if scalar.is_ptr():
            return self._elementwise("tt.addptr", (input, self.minus(other)), input.type)
        if scalar.is_floating():
            return self._elementwise("arith.subf", (input, other), input.type)
        if sanitize_overflow:
            return self._sanitized("arith.subi", input, other, input.type)
        return self._elementwise("arith.subi", (input, other), input.type)

    def mul(self, input, other, sanitize_overflow: bool = True) -> tensor:
        input, other = self.binary_operands(input, other)
        if input.type.scalar.is_floating():
            return self._elementwise("arith.mulf", (input, other), input.type)
        if sanitize_overflow:
            return self._sanitized("arith.muli", input, other, input.type)
        return self._elementwise("arith.muli", (input, other), input.type)

    def truediv(self, input, other) -> tensor:
        input, other = self.binary_operands(input, other, False, False, True, True)
        a_sca, b_sca = input.type.scalar, other.type.scalar
        if a_sca.is_int() and b_sca.is_int():
            input, other = self.cast(input, t.float32), self.cast(other, t.float32)
        elif a_sca.is_floating() and b_sca.is_floating():
            if a_sca.fp_mantissa_width > b_sca.fp_mantissa_width:
                other = self.cast(other, a_sca)
            else:
                input = self.cast(input, b_sca)
        else:
            raise TypeError(f"unexpected type {a_sca}")
        return self._elementwise("arith.divf", (input, other), input.type)

    def floordiv(self, input, other) -> tensor:
        input, other = self.binary_operands(input, other, False, False, True, True)
        scalar = input.type.scalar
        if not scalar.is_int():
            raise TypeError(f"unexpected type {scalar}: `//` needs integer operands")
        op = "arith.divsi" if scalar.is_int_signed() else "arith.divui"
        return self._elementwise(op, (input, other), input.type)

    def fdiv(self, input, other, ieee_rounding=False) -> tensor:
        input, other = self.to_tensor(input), self.to_tensor(other)
        if not input.type.scalar.is_floating() or not other.type.scalar.is_floating():
            raise TypeError("both operands of fdiv must have floating scalar type")
        input, other = self.binary_operands(input, other, False, False, False, True)
        if input.type.scalar != other.type.scalar:  # no promotion: arith.divf needs one type
            raise TypeError(
                f"fdiv needs operands of one type, got {input.type.scalar} and {other.type.scalar}"
            )
        return self._elementwise("arith.divf", (input, other), input.type)

    def mod(self, input, other) -> tensor:
        input, other = self.binary_operands(input, other, False, False, True, True)
        a_sca, b_sca = input.type.scalar, other.type.scalar
        if a_sca.is_floating():
            return self._elementwise("arith.remf", (input, other), input.type)
        if a_sca.is_int():
            if a_sca.int_signedness != b_sca.int_signedness:
                raise TypeError(
                    f"Cannot mod {a_sca!r} by {b_sca!r} because they have different signedness"
                )
            op = "arith.remsi" if a_sca.is_int_signed() else "arith.remui"
            return self._elementwise(op, (input, other), input.type)
        raise TypeError(f"unexpected type {a_sca}")

    # -- bitwise --------------------------------------------------------------------------------
    def _bitwise_operands(self, input, other):
        input, other = self.binary_operands(input, other)
        a_sca, b_sca = input.type.scalar, other.type.scalar
        if not a_sca.is_int() or not b_sca.is_int():
            raise TypeError(
                f"invalid operands of type {a_sca} and {b_sca}: bitwise operators need integers"
            )
        return input, other

    def and_(self, input, other) -> tensor:
        input, other = self._bitwise_operands(input, other)
        return self._elementwise("arith.andi", (input, other), input.type)

    def or_(self, input, other) -> tensor:
        input, other = self._bitwise_operands(input, other)
        return self._elementwise("arith.ori", (input, other), input.type)

    def xor_(self, input, other) -> tensor:
        input, other = self._bitwise_operands(input, other)
        return self._elementwise("arith.xori", (input, other), input.type)

    def shl(self, input, other) -> tensor:
        input, other = self._bitwise_operands(input, other)
        return self._elementwise("arith.shli", (input, other), input.type)

    def shr(self, input, other, arithmetic=None) -> tensor:
        """`>>`: arithmetic when `arithmetic` (the `>>` operator passes the signedness of the
        tensor it is called on, before promotion, as Triton's `tensor.__rshift__` does: `int8 >>
        uint8` shifts the promoted uint8 bits arithmetically); else by the promoted type."""
        input, other = self._bitwise_operands(input, other)
        if arithmetic is None:
            arithmetic = input.type.scalar.is_int_signed()
        op = "arith.shrsi" if arithmetic else "arith.shrui"
        return self._elementwise(op, (input, other), input.type)

    def logical_and(self, input, other) -> tensor:
        return self.and_(self._truth(input), self._truth(other))

    def logical_or(self, input, other) -> tensor:
        return self.or_(self._truth(input), self._truth(other))

    def _truth(self, x) -> tensor:
        """`and`, `or` and `not` take int1 values only: Triton bitcasts their operands to int1,
        which refuses every other type, scalars included (write `x != 0`)."""
        x = self.to_tensor(x)
        if not x.type.scalar.is_bool():
            raise ValueError(
                f"Cannot bitcast data-type of size {x.type.scalar.primitive_bitwidth} "
                "to data-type of size 1: `and`, `or` and `not` need int1 operands "
                "(compare first, e.g. `x != 0`)"
            )
        return x

    def not_(self, input) -> tensor:
        return self.equal(self._truth(input), False)

    # -- unary ----------------------------------------------------------------------------------
    def plus(self, input) -> tensor:
        return self.to_tensor(input)

    def minus(self, input) -> tensor:
        input = self.to_tensor(input)
        scalar = input.type.scalar
        if scalar.is_ptr():
            raise ValueError(f"wrong type argument to unary minus ({scalar})")
        if scalar.is_floating():  # a sign flip, as Triton's fneg: -(+0.0) is -0.0
            return self._elementwise("arith.negf", (input,), input.type)
        zero = self.scalar_constant(0, scalar)
        return self.sub(zero, input, True)

    def invert(self, input) -> tensor:
        input = self.to_tensor(input)
        scalar = input.type.scalar
        if scalar.is_ptr() or scalar.is_floating():
            raise ValueError(f"wrong type argument to unary invert ({scalar})")
        ones = self.scalar_constant(
            scalar.get_int_max_value() if scalar.is_int_unsigned() else -1, scalar
        )
        return self.xor_(input, ones)

    # -- comparisons ----------------------------------------------------------------------------
    def _compare(self, input, other, float_pred, signed_pred, unsigned_pred) -> tensor:
        # Triton's comparison operators make a Python scalar a tensor of its literal type first
        # (`tensor.__lt__` calls `to_tensor`): it takes part in promotion (`x_fp16 < 0.1` is fp32).
        input, other = self.to_tensor(input), self.to_tensor(other)
        input, other = self.binary_operands(input, other)
        scalar = input.type.scalar
        ty = input.type.with_element_ty(t.int1)
        if scalar.is_floating():
            return self._elementwise("arith.cmpf", (input, other), ty, predicate=float_pred)
        if scalar.is_int_signed():
            return self._elementwise("arith.cmpi", (input, other), ty, predicate=signed_pred)
        if scalar.is_int() or scalar.is_ptr():
            return self._elementwise("arith.cmpi", (input, other), ty, predicate=unsigned_pred)
        raise TypeError(f"unexpected type {scalar}")

    def greater_than(self, input, other):
        return self._compare(input, other, "ogt", "sgt", "ugt")

    def greater_equal(self, input, other):
        return self._compare(input, other, "oge", "sge", "uge")

    def less_than(self, input, other):
        return self._compare(input, other, "olt", "slt", "ult")

    def less_equal(self, input, other):
        return self._compare(input, other, "ole", "sle", "ule")

    def equal(self, input, other):
        return self._compare(input, other, "oeq", "eq", "eq")

    def not_equal(self, input, other):
        return self._compare(input, other, "une", "ne", "ne")

    # -- selection and extrema ------------------------------------------------------------------
    def where(self, condition, x, y) -> tensor:
        condition = self.to_tensor(condition)
        if condition.type.scalar != t.int1:
            # Taken as `condition != 0`, as Triton does, with its warning: an integer or float
            # mask where a comparison was meant is a common slip.
            warnings.warn(
                f"tl.where takes a boolean condition; a {condition.type.scalar} one is read as "
                "`condition != 0` (compare it explicitly)",
                UserWarning,
                stacklevel=2,
            )
            condition = self.cast(condition, t.int1)
        x, y = self.binary_operands(x, y, True, True)
        if condition.type.is_block():
            condition, x = self.broadcast_impl_value(condition, x)
            x, y = self.broadcast_impl_value(x, y)
            condition, x = self.broadcast_impl_value(condition, x)
        elif x.type.is_block():
            condition = self.splat(condition, x.type.shape)
        return self._elementwise("arith.select", (condition, x, y), x.type)

    def minimum(self, x, y, propagate_nan=PropagateNan.NONE) -> tensor:
        return self._extremum(x, y, propagate_nan, "min")

    def maximum(self, x, y, propagate_nan=PropagateNan.NONE) -> tensor:
        return self._extremum(x, y, propagate_nan, "max")

    def _extremum(self, x, y, propagate_nan, which) -> tensor:
        x, y = self.binary_operands(x, y)
        scalar = x.type.scalar
        propagate_nan = _unwrap_if_constexpr(propagate_nan)
        if scalar.is_floating():
            if propagate_nan == PropagateNan.ALL:
                return self._elementwise(f"arith.{which}imumf", (x, y), x.type)
            if propagate_nan == PropagateNan.NONE:
                return self._elementwise(f"arith.{which}numf", (x, y), x.type)
            raise ValueError(f"unexpected propagate_nan {propagate_nan}")
        if scalar.is_int():
            kind = "s" if scalar.is_int_signed() else "u"
            return self._elementwise(f"arith.{which}{kind}i", (x, y), x.type)
        raise TypeError(f"unexpected type {scalar}")

    def clamp(self, x, min, max, propagate_nan=PropagateNan.NONE) -> tensor:
        x, min = self.binary_operands(x, min)
        x, max = self.binary_operands(x, max)
        min, max = self.binary_operands(min, max)
        if not x.type.scalar.is_floating():
            raise ValueError(
                f"Unexpected dtype {x.type.scalar}. Only floating point clamp is supported"
            )
        propagate_nan = _unwrap_if_constexpr(propagate_nan)
        return self._elementwise(
            "tt.clampf", (x, min, max), x.type, propagate_nan=propagate_nan == PropagateNan.ALL
        )
