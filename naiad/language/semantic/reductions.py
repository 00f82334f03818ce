"""Reductions and scans with user combine functions, and `dot`."""

from __future__ import annotations

from .. import dtypes as t
from ..core import _unwrap_if_constexpr, tensor
from ..core import tuple as lang_tuple


class ReductionsMixin:
    """Mixed into `Semantic`."""

    def _normalize_axis(self, axis, rank: int, what: str) -> int:
        axis = _unwrap_if_constexpr(axis)
        if not isinstance(axis, int):
            raise TypeError(f"{what}: axis must be a constexpr int or None, got {axis!r}")
        if not -rank <= axis < rank:
            raise ValueError(
                f"{what}: invalid axis {axis}; the tensor has rank {rank}, so axis must "
                f"be in [{-rank}, {rank})"
            )
        return axis + rank if axis < 0 else axis

    def _combine_callback(self, combine_fn, types, what):
        """Wrap a user combine function so the builder can call it on handles of any shape."""
        count = len(types)

        def combine(lhs, rhs, shape):
            def wrap(handle, scalar):
                return tensor(handle, t.block_type(scalar, shape) if shape else scalar)

            args = [wrap(h, s) for h, s in zip(lhs, types)] + [
                wrap(h, s) for h, s in zip(rhs, types)
            ]
            results = combine_fn(*args)
            if isinstance(results, (tuple, list, lang_tuple)):
                results = list(results)
            else:
                results = [results]
            if len(results) != count:
                raise ValueError(
                    f"the combine function of {what} must return {count} value(s), "
                    f"got {len(results)}"
                )
            handles = []
            for value, scalar in zip(results, types):
                value = self.cast(self.to_tensor(value), scalar)
                if shape and value.type.get_block_shapes() != tuple(shape):
                    value = self.broadcast_impl_shape(value, shape)
                handles.append(value.handle)
            return handles

        return combine

    def _operands(self, inputs, what):
        single = not isinstance(inputs, (tuple, list, lang_tuple))
        inputs = [self.to_tensor(x) for x in ([inputs] if single else inputs)]
        if not inputs:
            raise ValueError(f"{what} needs at least one input")
        shape = inputs[0].type.get_block_shapes()
        for x in inputs:
            if x.type.get_block_shapes() != shape:
                raise ValueError(f"{what}: all inputs must have the same shape")
        return single, inputs

    def reduction(self, inputs, axis, combine_fn, keep_dims=False):
        single, inputs = self._operands(inputs, "reduce")
        rank = len(inputs[0].type.get_block_shapes())
        all_axes = axis is None or _unwrap_if_constexpr(axis) is None
        if all_axes:
            inputs = [self.reshape(x, [x.type.numel], can_reorder=True) for x in inputs]
            axis = 0
        shape = inputs[0].type.get_block_shapes()
        if not shape:
            raise ValueError("cannot reduce a scalar")
        axis = self._normalize_axis(axis, len(shape), "reduce")
        out_shape = [s for i, s in enumerate(shape) if i != axis]
        types = [x.type.scalar for x in inputs]
        combine = self._combine_callback(combine_fn, types, "reduce")
        handles = self.builder.reduce([x.handle for x in inputs], axis, combine, types)
        results = [
            tensor(h, t.block_type(s, out_shape) if out_shape else s)
            for h, s in zip(handles, types)
        ]
        if _unwrap_if_constexpr(keep_dims):
            # As Triton: keep_dims over every axis gives the input's rank, all sizes 1.
            for _ in range(rank if all_axes else 1):
                results = [self.expand_dims(r, 0 if all_axes else axis) for r in results]
        return results[0] if single else lang_tuple(results)

    def associative_scan(self, inputs, axis, combine_fn, reverse=False):
        single, inputs = self._operands(inputs, "associative_scan")
        shape = inputs[0].type.get_block_shapes()
        if not shape:
            raise ValueError("cannot scan a scalar")
        axis = self._normalize_axis(axis, len(shape), "associative_scan")
        types = [x.type.scalar for x in inputs]
        combine = self._combine_callback(combine_fn, types, "associative_scan")
        handles = self.builder.scan(
            [x.handle for x in inputs], axis, bool(_unwrap_if_constexpr(reverse)), combine, types
        )
        results = [tensor(h, x.type) for h, x in zip(handles, inputs)]
        return results[0] if single else lang_tuple(results)

    # -- dot ------------------------------------------------------------------------------------
    def dot(
        self,
        lhs,
        rhs,
        acc=None,
        input_precision=None,
        allow_tf32=None,
        max_num_imprecise_acc=None,
        out_dtype=None,
    ) -> tensor:
        lhs, rhs = self.to_tensor(lhs), self.to_tensor(rhs)
        acc = _unwrap_if_constexpr(acc)
        acc = None if acc is None else self.to_tensor(acc)
        out_dtype = _unwrap_if_constexpr(out_dtype)
        if out_dtype is None:
            out_dtype = t.float32 if acc is None else acc.type.scalar
        a, b = lhs.type.scalar, rhs.type.scalar
        precision = self._dot_precision(
            _unwrap_if_constexpr(input_precision), _unwrap_if_constexpr(allow_tf32)
        )
        self._check_dot_dtypes(a, b)
        ret = self._dot_result_type(a, out_dtype)
        m, n, k = self._check_dot_shapes(lhs, rhs, a, b)
        batch = list(lhs.type.shape[:-2])
        ret_ty = t.block_type(ret, batch + [m, n])
        if acc is None:
            acc = self.full_constant(0, ret, ret_ty.shape)
        elif acc.type.get_block_shapes() != ret_ty.shape:
            raise ValueError(
                f"dot accumulator has shape {list(acc.type.get_block_shapes())}, "
                f"expected {list(ret_ty.shape)}"
            )
        # Triton asserts `acc.type.element_ty == out_dtype`: an out_dtype given beside an
        # accumulator must be the accumulator's (fp32 with an fp16 one is refused).
        elif acc.type.scalar != ret or acc.type.scalar != out_dtype:
            raise TypeError(
                f"dot accumulator has dtype {acc.type.scalar}, expected {ret} "
                f"(and out_dtype={out_dtype} to match it)"
            )
        imprecise = self._dot_imprecise_acc(_unwrap_if_constexpr(max_num_imprecise_acc), a, b, k)
        handle = self.builder.dot(lhs.handle, rhs.handle, acc.handle, precision, imprecise, ret_ty)
        return tensor(handle, ret_ty)

    def _dot_imprecise_acc(self, imprecise, a, b, k) -> int:
        """How many K elements an fp8 dot may sum at the tensor cores' reduced precision
        before adding into its f32 accumulator (0 for other dots): the target's default when
        none is named, never more than K."""
        if not (a.is_fp8() and b.is_fp8()):
            return imprecise or 0
        if imprecise is None:
            return self.target.max_num_imprecise_acc_default
        if imprecise > k:
            raise ValueError(f"max_num_imprecise_acc ({imprecise}) must be <= K ({k})")
        return imprecise

    def _dot_precision(self, input_precision, allow_tf32):
        if input_precision is not None and allow_tf32 is not None:
            raise ValueError("Only one of input_precision and allow_tf32 can be specified")
        if input_precision is None:
            if allow_tf32 is False:
                return "ieee"
            return self.target.default_dot_input_precision
        precision = str(input_precision).lower()
        if precision not in self.target.allowed_dot_input_precisions:
            raise ValueError(
                f"input_precision must be one of "
                f"{list(self.target.allowed_dot_input_precisions)}, got {input_precision!r}"
            )
        return precision

    def _check_dot_dtypes(self, a, b):
        if a.is_fp8() and b.is_fp8():
            for x in (a, b):
                self._check_fp8_supported(x)
                if x.name in self.target.deprecated_fp8_dot_operand_dtypes:
                    raise ValueError(f"{x} is not supported as a dot operand on {self.target.name}")
            return
        if a != b:
            raise TypeError(f"Both operands must be same dtype. Got {a} and {b}")
        if a.name not in ("int8", "uint8", "fp16", "bf16", "fp32", "fp64"):
            raise TypeError(f"dot does not support operands of type {a}")
        if a.name == "uint8":
            raise TypeError("dot of integers: only int8 supported (got uint8 operands)")

    @staticmethod
    def _dot_result_type(a, out_dtype):
        if a.is_int():
            return t.int32
        if a.is_fp64():
            return t.float64
        if out_dtype == t.bfloat16:
            raise ValueError(
                "out_dtype=bfloat16 is unsupported. Please use out_dtype=float32/float16 "
                "and cast with `.to(tl.bfloat16)`"
            )
        if a.is_fp16() or a.is_fp8():
            if out_dtype not in (t.float16, t.float32):
                raise ValueError(f"out_dtype must be float16 or float32 for {a} operands")
            return out_dtype
        return t.float32

    def _check_dot_shapes(self, lhs, rhs, a, b):
        if not lhs.type.is_block() or not rhs.type.is_block():
            raise ValueError("dot needs block operands")
        ls, rs = lhs.type.shape, rhs.type.shape
        if len(ls) != len(rs) or len(ls) not in (2, 3):
            raise ValueError(
                f"Both inputs must be either 2D or 3D; (lhs: {list(ls)} vs rhs: {list(rs)})"
            )
        if ls[-1] != rs[-2]:
            raise ValueError(
                f"First input shape ({list(ls)}) and second input shape {list(rs)} are "
                f"not compatible for matmul (second index of first shape ({ls[-1]}) must "
                f"be equal to first index of second shape ({rs[-2]})"
            )
        if len(ls) == 3 and ls[0] != rs[0]:
            raise ValueError(f"batch dimensions of dot operands differ: {ls[0]} and {rs[0]}")
        m, k, n = ls[-2], ls[-1], rs[-1]
        min_m, min_n, min_k = self.target.min_dot_size(a, b)
        if m < min_m or n < min_n or k < min_k:
            raise ValueError(
                f"Input shapes should have M >= {min_m}, N >= {min_n} and K >= {min_k}; "
                f"got M={m}, N={n}, K={k}"
            )
        return m, n, k
