"""Program ids, printing and assertions, compiler hints: the builtins that are not arithmetic."""

from __future__ import annotations

from ... import errors
from .. import dtypes as t
from ..core import _unwrap_if_constexpr, constexpr, tensor
from .promotion import loop_index_type


def _print_prefix(prefix: str, has_values: bool) -> str:
    """The prefix as printed, as Triton normalizes it: ending in ": " when values follow, and
    starting with a space when it is longer than two characters (`"x"` prints as `" x: "`)."""
    if has_values and not prefix.endswith(" "):
        prefix += " "
    if has_values and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    return prefix


class BlockHasNoScalarValue(ValueError):
    """A block tensor was used where Python needs one value (`if`, `int()`, `range`)."""


class ProgramMixin:
    """Mixed into `Semantic`."""

    def program_id(self, axis) -> tensor:
        axis = self._grid_axis(axis, "program_id")
        return tensor(self.builder.program_id(axis), t.int32)

    def num_programs(self, axis) -> tensor:
        axis = self._grid_axis(axis, "num_programs")
        return tensor(self.builder.num_programs(axis), t.int32)

    @staticmethod
    def _grid_axis(axis, what):
        axis = _unwrap_if_constexpr(axis)
        if axis not in (0, 1, 2):
            raise ValueError(f"{what} axis must be 0, 1, or 2 but got {axis}")
        return axis

    # -- debugging ------------------------------------------------------------------------------
    def static_assert(self, cond, msg=""):
        cond, msg = _unwrap_if_constexpr(cond), _unwrap_if_constexpr(msg)
        if isinstance(cond, tensor):
            raise ValueError(
                "static_assert needs a constexpr condition; use device_assert for runtime values"
            )
        if not cond:
            raise errors.CompileTimeAssertionFailure(
                f"static_assert failed: {msg}" if msg else "static_assert failed"
            )

    def static_print(self, values, sep=" ", end="\n"):
        text = sep.join(str(_unwrap_if_constexpr(v)) for v in values) + end
        self.builder.static_print(text)

    def device_print(self, prefix, args, hex=False):
        prefix = _unwrap_if_constexpr(prefix)
        if not isinstance(prefix, str):
            raise TypeError(f"device_print's prefix must be a string, got {prefix!r}")
        for ch in prefix:
            if not ch.isprintable():
                raise ValueError(
                    f"device_print's prefix may only hold printable characters: {prefix!r}"
                )
        values = [self.to_tensor(a) for a in args]
        self.builder.device_print(
            _print_prefix(prefix, bool(values)),
            bool(_unwrap_if_constexpr(hex)),
            [v.handle for v in values],
            [v.type for v in values],
        )

    def inline_asm_elementwise(self, asm, constraints, args, dtype, is_pure, pack):
        """Triton's inline_asm_elementwise: the arguments broadcast to one shape, one result
        per dtype of that shape."""
        asm = str(_unwrap_if_constexpr(asm))
        constraints = str(_unwrap_if_constexpr(constraints))
        pack = int(_unwrap_if_constexpr(pack))
        dtype = _unwrap_if_constexpr(dtype)
        dtypes = (
            [_unwrap_if_constexpr(d) for d in dtype]
            if isinstance(dtype, (list, tuple))
            else [dtype]
        )
        args = [self.to_tensor(a) for a in args]
        for i in range(len(args)):
            for j in range(len(args)):
                args[i], args[j] = self.broadcast_impl_value(args[i], args[j])
        shape = args[0].type.get_block_shapes() if args and args[0].type.is_block() else None
        result_types = [t.block_type(d, shape) if shape else d for d in dtypes]
        handles = self.builder.inline_asm(
            asm,
            constraints,
            [a.handle for a in args],
            result_types,
            bool(_unwrap_if_constexpr(is_pure)),
            pack,
        )
        results = [tensor(h, ty) for h, ty in zip(handles, result_types)]
        return results[0] if not isinstance(dtype, (list, tuple)) else tuple(results)

    def device_assert(self, cond, msg="", mask=None):
        """Checked only in debug mode (`NAIAD_DEBUG=1` or `debug=True`), as in Triton."""
        if not self.target.debug:
            return
        cond = self.to_tensor(cond)
        if cond.type.scalar != t.int1:
            cond = self.not_equal(cond, 0)
        mask = _unwrap_if_constexpr(mask)  # a constexpr parameter's None is no mask
        if mask is not None:
            cond = self.or_(cond, self.not_(mask))
        self.builder.device_assert(cond.handle, str(_unwrap_if_constexpr(msg)))

    def debug_barrier(self):
        self.builder.barrier()

    # -- hints ----------------------------------------------------------------------------------
    def hint(self, kind: str, input, values) -> tensor:
        """multiple_of / max_contiguous / max_constancy: one constexpr int per dimension."""
        input = self.to_tensor(input)
        values = _unwrap_if_constexpr(values)
        if isinstance(values, (int, constexpr)):
            values = [values]
        values = [_unwrap_if_constexpr(v) for v in values]
        for i, v in enumerate(values):
            if not isinstance(v, int):
                raise TypeError(f"values argument {i} of {kind} must be a constexpr int, got {v!r}")
        rank = max(1, len(input.type.get_block_shapes()))
        if len(values) != rank:
            raise ValueError(
                f"{kind}: expected {rank} value(s), one per dimension, got {len(values)}"
            )
        return tensor(self.builder.hint(input.handle, kind, values), input.type)

    def assume(self, cond):
        cond = self.to_tensor(cond)
        if cond.type.scalar != t.int1:
            raise TypeError(f"assume needs a boolean condition, got {cond.type.scalar}")
        self.builder.assume(cond.handle)

    # -- Python protocols -------------------------------------------------------------------------
    def to_python(self, x: tensor, kind):
        if x.type.is_block():
            raise BlockHasNoScalarValue(
                f"a tensor of shape {list(x.type.shape)} has no single Python value "
                "(use a scalar, or reduce it first)"
            )
        return self.builder.to_python(x.handle, x.type, kind)

    def tensor_to_str(self, x: tensor) -> str:
        return self.builder.to_string(x.handle, x.type)

    # -- loops ------------------------------------------------------------------------------------
    def loop_values(self, start, end, step):
        """The induction values of `range(start, end, step)`, typed as the compiler types them."""
        bounds = [self.to_tensor(b) for b in (start, end, step)]
        ty = loop_index_type(*(b.type for b in bounds))
        lo, hi, by = (self.to_python(b, int) for b in bounds)
        if by == 0:
            raise ValueError("range() step must not be zero")
        for value in range(lo, hi, by):
            yield tensor(self.builder.constant(value, ty), ty)
