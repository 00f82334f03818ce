"""`@pointwise`: one scalar function written in the language becomes an elementwise torch op.

The decorated function (a `@naiad.jit` function of one value per argument) says what happens to
one element; the facility does the rest for any number of arguments, each a tensor or a Python
scalar: torch's type promotion (dtypes.py), broadcasting and strides (layout.py), the output
(allocated like the operand that already has its shape, or `out=`, which in-place variants pass
as their first argument), and one generated kernel per (operand pattern, rank) (codegen.py),
compiled by the launch for every dtype it meets.
"""

from __future__ import annotations

import torch

from ..dtypes import Kind, computation_dtypes, tl_dtype
from . import codegen
from .layout import broadcast_shape, broadcast_strides, contiguous_walk, walk

__all__ = ["PointwiseOp", "inplace_target", "pointwise"]

_INDEX32_LIMIT = 2**31 - 1
# An inner dim at least this long is walked a block of it per program (codegen.py, ROWS);
# shorter ones in one flat range, dividing each index by the sizes.
_ROWS_FROM = 64


def _block(device: torch.device, n: int) -> tuple[int, dict]:
    """Elements per program and launch options: long runs per program on the CPU, where a
    program is a loop, but no longer than the tensor (from 256 up: a program computes its whole
    block, masked or not, so 4096 lanes for 64 elements cost 64 times the work); a thread per
    element or four on a GPU."""
    if device.type == "cpu":
        return min(4096, max(256, 1 << (n - 1).bit_length())), {}
    return 1024, {"num_warps": 4}


class PointwiseOp:
    """An elementwise op made from a scalar function; call it as a torch function."""

    def __init__(self, fn, promotion: Kind, promote, name: str):
        self.fn = fn
        self.promotion = promotion
        self.promote = promote
        self.__name__ = name
        self._kernels: dict = {}

    def __repr__(self):
        return f"<naiad.ops pointwise {self.__name__}>"

    def __call__(self, *args, out=None, dtype=None):
        """Apply the op; `out` receives the result (cast to its dtype); `dtype` overrides the
        result dtype (and computes in it, or in fp32 for fp16 and bf16)."""
        args, device = _scalars_off_device(args)
        promoted = [a for i, a in enumerate(args) if self._promoted(i)]
        if dtype is None:
            compute, result = computation_dtypes(promoted, self.promotion)
        else:
            compute, result = _for_dtype(dtype), dtype
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        shape = _broadcast_shape(tensors, out)
        if out is None:
            out = _allocate(tensors, shape, result, device)
        if out.numel() == 0:
            return out
        self._launch(args, out, shape, compute)
        return out

    def inplace(self, target, *args):
        """The in-place variant: `target` is the first operand and receives the result."""
        return self(target, *args, out=inplace_target(target, *args))

    def _promoted(self, index: int) -> bool:
        return self.promote is None or index in self.promote

    def _launch(self, args, out, shape, compute):
        if compute == torch.float64:  # a Python float reaches a kernel as fp32: pass fp64 data
            args = [_as_tensor(a, out.device) if isinstance(a, float) else a for a in args]
        operands = [a for a in args if isinstance(a, torch.Tensor)]
        if all(t.shape == out.shape and t.is_contiguous() for t in operands) and (
            out.is_contiguous()
        ):  # the common case, without walking the dims
            layout = contiguous_walk(out.numel(), len(operands) + 1)
        else:
            strides = [broadcast_strides(t, shape) for t in operands] + [list(out.stride())]
            layout = walk(shape, strides)
        pattern = tuple(
            (codegen.TENSOR if isinstance(a, torch.Tensor) else codegen.SCALAR, self._promoted(i))
            for i, a in enumerate(args)
        )
        rank = len(layout.sizes)
        kernel = self._kernels.get((pattern, rank))
        if kernel is None:
            kernel = self._kernels[(pattern, rank)] = codegen.generate(self.fn, pattern, rank)
        n = out.numel()
        block, options = _block(out.device, n)
        strides = [s for st in layout.strides for s in st]
        index64 = max(n, layout.largest) + block > _INDEX32_LIMIT
        inner = layout.sizes[-1]
        rows = rank > 1 and inner >= _ROWS_FROM
        if rows:  # a program per block of the inner dim
            block = min(block, 1 << (inner - 1).bit_length())
            grid = (n // inner) * ((inner + block - 1) // block)
        else:
            grid = (n + block - 1) // block
        sizes = layout.sizes[1:]
        compute = tl_dtype(compute)
        kernel[(grid,)](*args, out, n, *sizes, *strides, index64, compute, rows, block, **options)


def inplace_target(target, *others):
    """`target` as the output of an in-place op, after torch's check that the other operands
    broadcast to its shape (never it to theirs)."""
    shapes = [a.shape for a in others if isinstance(a, torch.Tensor)]
    shape = torch.broadcast_shapes(target.shape, *shapes)
    if tuple(shape) != tuple(target.shape):
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(shape)}"
        )
    return target


def _for_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _as_tensor(value, device):
    return torch.tensor(value, dtype=torch.float64, device=device)


def _scalars_off_device(args):
    """0-dim CPU tensors beside tensors of another device become Python scalars, as torch
    allows them there; the device is that of the other tensors."""
    devices = {a.device for a in args if isinstance(a, torch.Tensor) and a.dim() > 0}
    devices |= {a.device for a in args if isinstance(a, torch.Tensor) and a.device.type != "cpu"}
    if len(devices) > 1:
        raise RuntimeError(f"expected all tensors on one device, found {sorted(map(str, devices))}")
    if not devices:
        devices = {a.device for a in args if isinstance(a, torch.Tensor)} or {torch.device("cpu")}
    (device,) = devices
    if device.type == "cpu":
        return list(args), device
    return [
        a.item() if isinstance(a, torch.Tensor) and a.device != device else a for a in args
    ], device


def _broadcast_shape(tensors, out) -> tuple[int, ...]:
    if not tensors:  # fill: only scalars, into `out`
        return tuple(out.shape) if out is not None else ()
    shape = broadcast_shape([t.shape for t in tensors])
    if out is not None and tuple(out.shape) != shape:
        out.resize_(shape)  # as torch's out= does (it also warns where `out` was not empty)
    return shape


def _allocate(tensors, shape, dtype, device):
    """Like the first operand of the result's shape (its memory order kept, as torch does for
    dense operands), else contiguous."""
    for t in tensors:
        if tuple(t.shape) == shape and t.dim() > 0:
            return torch.empty_like(t, dtype=dtype)
    return torch.empty(shape, dtype=dtype, device=device)


def pointwise(promotion: Kind = Kind.DEFAULT, promote=None, name=None):
    """Make an elementwise op of a `@naiad.jit` scalar function.

    Args:
        promotion: torch's type-promotion kind for the result (Kind.DEFAULT,
            INT_TO_FLOAT, ALWAYS_BOOL, ...).
        promote: indices of the arguments that take part in promotion and are cast to the
            compute dtype before the call (None: all); others arrive as they are (a
            condition, a mask).
        name: the op's name (the function's by default).
    """

    def decorate(fn):
        return PointwiseOp(fn, promotion, promote, name or fn.__name__)

    return decorate
