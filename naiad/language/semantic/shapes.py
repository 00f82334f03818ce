"""Creation and shape manipulation: arange, full, reshape, permute, join/split, cat, indexing."""

from __future__ import annotations

from .. import dtypes as t
from ..core import _unwrap_if_constexpr, tensor
from ..core import slice as lang_slice


class ShapesMixin:
    """Mixed into `Semantic`."""

    def _block(self, handle, scalar, shape) -> tensor:
        return tensor(handle, t.block_type(scalar, shape) if shape else scalar)

    def arange(self, start, end) -> tensor:
        start, end = _unwrap_if_constexpr(start), _unwrap_if_constexpr(end)
        if not isinstance(start, int) or not isinstance(end, int):
            raise ValueError("arange's arguments must be of type constexpr[int]")
        if start >= end:
            raise ValueError(
                f"arange's end argument ({end}) must be greater than its start argument ({start})"
            )
        # Triton tests `start >> 32` and `end >> 32`: a negative start does not fit either.
        if not (0 <= start < 2**31 and 0 <= end <= 2**31):
            raise ValueError("arange must fit in int32")
        size = end - start
        if size & (size - 1):
            raise ValueError(f"arange's range must be a power of 2, got {size}")
        shape = self.validate_block_shape([size])
        ty = t.block_type(t.int32, shape)
        return tensor(self.builder.make_range(start, end, ty), ty)

    def full(self, shape, value, dtype) -> tensor:
        shape = self.validate_block_shape(tuple(_unwrap_if_constexpr(s) for s in shape))
        dtype = _unwrap_if_constexpr(dtype)
        value = _unwrap_if_constexpr(value)
        if isinstance(value, tensor):
            if value.type.is_block():
                raise ValueError("full's value must be a scalar")
            value = self.cast(value, dtype)
        else:
            value = self.scalar_constant(value, dtype)
        return self.splat(value, shape)

    # -- rank changes ---------------------------------------------------------------------------
    def expand_dims(self, input, axis: int) -> tensor:
        input = self.to_tensor(input)
        shape = list(input.type.get_block_shapes())
        axis = _unwrap_if_constexpr(axis)
        if not isinstance(axis, int):
            raise TypeError(f"expand_dims axis must be a constexpr int, got {axis!r}")
        if not -len(shape) - 1 <= axis <= len(shape):
            raise ValueError(
                f"invalid axis {axis}: expand_dims takes axis in "
                f"[{-len(shape) - 1}, {len(shape)}] for a tensor of rank {len(shape)}"
            )
        axis = axis + len(shape) + 1 if axis < 0 else axis
        if not input.type.is_block():
            return self.splat(input, [1])
        shape.insert(axis, 1)
        ty = t.block_type(input.type.scalar, shape)
        return tensor(self.builder.expand_dims(input.handle, axis, ty), ty)

    def reshape(self, input, dst_shape, can_reorder: bool = False) -> tensor:
        input = self.to_tensor(input)
        dst_shape = self.validate_block_shape(tuple(_unwrap_if_constexpr(s) for s in dst_shape))
        numel = 1
        for s in dst_shape:
            numel *= s
        if input.type.numel != numel:
            raise ValueError(
                f"reshape() cannot change total number of elements in tensor "
                f"({input.type.numel} -> {numel})"
            )
        if not input.type.is_block():
            return self.splat(input, dst_shape)
        if tuple(dst_shape) == input.type.shape:
            return input
        ty = t.block_type(input.type.scalar, dst_shape)
        return tensor(self.builder.reshape(input.handle, ty, bool(can_reorder)), ty)

    def permute(self, input, dims) -> tensor:
        """`dims=None` is Triton's default of `x.T` and `tl.trans(x)`: the last two dimensions
        swapped ((1, 0) for a 2-D tensor, a batched transpose beyond)."""
        input = self.to_tensor(input)
        shape = input.type.get_block_shapes()
        if dims is None:
            if len(shape) < 2:
                raise ValueError(
                    f"tl.trans without dims swaps the last two dimensions, "
                    f"got shape {list(shape)}; pass the dims"
                )
            dims = [*range(len(shape) - 2), len(shape) - 1, len(shape) - 2]
        dims = [_unwrap_if_constexpr(d) for d in dims]
        if len(dims) != len(shape):
            raise ValueError(
                f"permute dims must have the same length as input shape, got {dims} "
                f"for shape {list(shape)}"
            )
        if sorted(dims) != list(range(len(shape))):
            raise ValueError(
                f"permutation must be a permutation of 0..{len(shape) - 1}, got {dims}"
            )
        if dims == list(range(len(shape))):
            return input
        ty = t.block_type(input.type.scalar, [shape[d] for d in dims])
        return tensor(self.builder.permute(input.handle, dims, ty), ty)

    def broadcast_to(self, input, shape) -> tensor:
        return self.broadcast_impl_shape(
            self.to_tensor(input), [_unwrap_if_constexpr(s) for s in shape]
        )

    def broadcast(self, input, other):
        return self.broadcast_impl_value(self.to_tensor(input), self.to_tensor(other))

    # -- join / split / cat ---------------------------------------------------------------------
    def join(self, a, b) -> tensor:
        a, b = self.to_tensor(a), self.to_tensor(b)
        a, b = self.broadcast_impl_value(a, b)
        if a.type.scalar != b.type.scalar:
            raise TypeError(
                f"join needs operands of one dtype, got {a.type.scalar} and {b.type.scalar}"
            )
        shape = list(a.type.get_block_shapes()) + [2]
        ty = t.block_type(a.type.scalar, shape)
        return tensor(self.builder.join(a.handle, b.handle, ty), ty)

    def split(self, a):
        a = self.to_tensor(a)
        shape = a.type.get_block_shapes()
        if not shape or shape[-1] != 2:
            raise ValueError(f"split's last dimension must have size 2, got shape {list(shape)}")
        out_shape = shape[:-1]
        ty = t.block_type(a.type.scalar, out_shape) if out_shape else a.type.scalar
        lo, hi = self.builder.split(a.handle, ty)
        return tensor(lo, ty), tensor(hi, ty)

    def interleave(self, a, b) -> tensor:
        joined = self.join(a, b)
        shape = joined.type.shape
        if len(shape) == 1:  # two scalars
            return joined
        return self.reshape(joined, list(shape[:-2]) + [shape[-2] * 2])

    def cat(self, lhs, rhs, can_reorder=False, dim=0) -> tensor:
        lhs, rhs = self.to_tensor(lhs), self.to_tensor(rhs)
        dim = _unwrap_if_constexpr(dim)
        shape, other = list(lhs.type.get_block_shapes()), list(rhs.type.get_block_shapes())
        if shape != other:
            # Triton's words, which its tests look for.
            raise ValueError(f"tl.cat requires tensors of the same shape, got {shape} and {other}")
        if lhs.type != rhs.type:
            raise TypeError(f"cat needs operands of one type, got {lhs.type} and {rhs.type}")
        if not shape:
            raise ValueError("cat needs block operands")
        dim = dim + len(shape) if dim < 0 else dim
        if not 0 <= dim < len(shape):
            raise ValueError(f"invalid dim {dim} for cat of rank {len(shape)}")
        if can_reorder and dim == 0 and len(shape) == 1:
            ty = t.block_type(lhs.type.scalar, [shape[0] * 2])
            return tensor(self.builder.cat(lhs.handle, rhs.handle, ty), ty)
        joined = self.join(lhs, rhs)
        order = list(range(len(shape)))
        order.insert(dim, len(shape))
        moved = self.permute(joined, order)
        out = shape[:dim] + [shape[dim] * 2] + shape[dim + 1 :]
        return self.reshape(moved, out)

    # -- indexing -------------------------------------------------------------------------------
    def getitem(self, input, slices) -> tensor:
        """`x[None, :]`: only `None` (new axis) and full slices `:` are allowed."""
        if not isinstance(slices, (tuple, list)):
            slices = [slices]
        ret = input
        axis = 0
        for sl in slices:
            sl = _unwrap_if_constexpr(sl)
            if sl is None:
                ret = self.expand_dims(ret, axis)
                axis += 1
            elif (
                isinstance(sl, slice) and sl.start is None and sl.stop is None and sl.step is None
            ) or (isinstance(sl, lang_slice) and sl.start is None and sl.stop is None):
                axis += 1
            else:
                raise ValueError(
                    f"unsupported tensor index: {sl!r} (only None and `:` are allowed)"
                )
        return ret

    def item(self, input) -> tensor:
        input = self.to_tensor(input)
        if not input.type.is_block():
            return input
        if input.type.numel != 1:
            raise ValueError(
                f"item() needs a single-element tensor, got shape {list(input.type.shape)}"
            )
        ty = input.type.scalar
        return tensor(self.builder.unsplat(input.handle, ty), ty)

    def gather(self, src, index, axis) -> tensor:
        src, index = self.to_tensor(src), self.to_tensor(index)
        axis = _unwrap_if_constexpr(axis)
        rank = len(src.type.get_block_shapes())
        if rank != len(index.type.get_block_shapes()):
            raise ValueError("gather: source and index tensors must have the same rank")
        if not -rank <= axis < rank:
            raise ValueError(f"gather axis {axis} out of range for rank {rank}")
        axis = axis + rank if axis < 0 else axis
        for d in range(rank):
            if d != axis and index.type.shape[d] != src.type.shape[d]:
                raise ValueError(
                    f"gather: index dim {d} must match source dim {d} "
                    f"({index.type.shape[d]} != {src.type.shape[d]})"
                )
        if not index.type.scalar.is_int():
            raise TypeError("gather: index must be an integer tensor")
        ty = t.block_type(src.type.scalar, index.type.shape)
        return tensor(self.builder.gather(src.handle, index.handle, axis, ty), ty)

    def histogram(self, input, num_bins, mask=None) -> tensor:
        input = self.to_tensor(input)
        num_bins = _unwrap_if_constexpr(num_bins)
        if len(input.type.get_block_shapes()) != 1:
            raise ValueError("histogram needs a 1-D input")
        if not input.type.scalar.is_int():
            raise TypeError("histogram needs an integer input")
        if input.type.scalar.int_bitwidth != 32:
            # Triton refuses other widths at compile time; its tests look for these words.
            raise ValueError(
                f"histogram only supports 32-bit integer input, got {input.type.scalar}: "
                f"convert it first (`x.to(tl.int32)`)"
            )
        self.validate_block_shape([num_bins])
        if mask is not None:
            mask = self.broadcast_impl_shape(
                self.cast(self.to_tensor(mask), t.int1), input.type.shape
            )
        ty = t.block_type(t.int32, [num_bins])
        return tensor(
            self.builder.histogram(
                input.handle, num_bins, None if mask is None else mask.handle, ty
            ),
            ty,
        )
