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
from torch import Tensor

from ..allocate import check_castable, empty
from ..dtypes import Kind, computation_dtypes, tl_dtype
from ..graph_breaks import run_eagerly_under_compile
from ..kept import KeptTable
from . import codegen
from .layout import broadcast_shape, broadcast_strides, contiguous_walk, walk

__all__ = ["PointwiseOp", "UserPointwiseOp", "inplace_target", "pointwise", "user_pointwise"]

_INDEX32_LIMIT = 2**31 - 1
# An inner dim at least this long is walked a block of it per program (codegen.py, ROWS);
# shorter ones in one flat range, dividing each index by the sizes.
_ROWS_FROM = 64
# Plans kept per op before they are all forgotten (a program of ever-new shapes).
_PLANS_KEPT = 512


def _block(device: torch.device, n: int) -> tuple[int, dict]:
    """Elements per program and launch options: long runs per program on the CPU, where a
    program is a loop, but no longer than the tensor (from 256 up: a program computes its whole
    block, masked or not, so 4096 lanes for 64 elements cost 64 times the work); a thread per
    element or four on a GPU."""
    if device.type == "cpu":
        return min(4096, max(256, 1 << (n - 1).bit_length())), {}
    return 1024, {"num_warps": 4}


class _Plan:
    """What one kind of call (key: the dtype asked for, `out`'s and each argument's dtype,
    device, shape and strides, or a scalar's type) decided: the result's dtype and shape, how
    it is allocated, and the launch; a call of the kind only allocates and launches."""

    __slots__ = ("bound", "device", "grid", "itemized", "kernel", "options", "result",
                 "retyped", "shape", "tail", "template", "widened")  # fmt: skip

    def __init__(self, device, shape, result, template, itemized, widened):
        self.device = device
        self.shape = shape
        self.result = result
        self.template = template  # the operand the result is allocated like, or None
        self.retyped = False  # whether the result's dtype is not the template's (set by _plan)
        self.itemized = itemized  # 0-dim CPU tensors passed as numbers to another device
        self.widened = widened  # Python floats passed as fp64 tensors
        self.kernel = None  # None: nothing to launch (an empty result)
        self.bound = None  # the kernel's launch bound to this kind of call, at its first run

    def arguments(self, args):
        """The call's arguments as the kernel takes them."""
        if self.itemized or self.widened:
            args = list(args)
            for i in self.itemized:
                args[i] = args[i].item()
            for i in self.widened:
                args[i] = torch.tensor(args[i], dtype=torch.float64, device=self.device)
        return args

    def run(self, args, out):
        if self.itemized or self.widened:  # (a call of its own costs every op call)
            args = self.arguments(args)
        if out is None:
            if self.template is None:
                out = empty(self.shape, self.result, self.device)
            else:
                like = args[self.template]
                if self.retyped:  # a dtype given costs empty_like a microsecond more
                    out = torch.empty_like(like, dtype=self.result)
                else:
                    out = torch.empty_like(like)
        if self.kernel is not None:
            if self.bound is None:  # the operands and the output change between calls
                # (their dtypes and devices are the plan's: its key, `retyped`, `widened`)
                varying = self.kernel.arg_names[: len(args) + 1]
                self.bound = self.kernel.bind_launch(
                    varying, self.grid, *args, out, *self.tail, typed=varying, **self.options
                )
            self.bound(*args, out)
        return out


class PointwiseOp:
    """An elementwise op made from a scalar function; call it as a torch function."""

    def __init__(self, fn, promotion: Kind, promote, name: str):
        self.fn = fn
        self.promotion = promotion
        self.promote = promote
        self.__name__ = name
        self._kernels: dict = {}
        self._plans = KeptTable(_PLANS_KEPT)  # call key -> _Plan

    def __repr__(self):
        return f"<naiad.ops pointwise {self.__name__}>"

    @classmethod
    def decorator(cls, promotion: Kind = Kind.DEFAULT, promote=None, name=None):
        """Make an elementwise op (of this class) of a `@naiad.jit` scalar function.

        Args:
            promotion: torch's type-promotion kind for the result (Kind.DEFAULT,
                INT_TO_FLOAT, ALWAYS_BOOL, ...).
            promote: indices of the arguments that take part in promotion and are cast to the
                compute dtype before the call (None: all); others arrive as they are (a
                condition, a mask).
            name: the op's name (the function's by default).
        """
        return lambda fn: cls(fn, promotion, promote, name or fn.__name__)

    def __call__(self, *args, out=None, dtype=None):
        """Apply the op; `out` receives the result (cast to its dtype); `dtype` overrides the
        result dtype (and computes in it, or in fp32 for fp16 and bf16)."""
        key = (dtype, out if out is None else _kind(out))
        for a in args:  # the items of _kind, flat: one tuple to build and hash, no calls
            key += (a.dtype, a.device, a.shape, a.stride()) if isinstance(a, Tensor) else (type(a),)
        plan = self._plans.get(key)
        if plan is None:
            plan, out = self._plan(args, out, dtype, key)
        return plan.run(args, out)

    def inplace(self, target, *args):
        """The in-place variant: `target` is the first operand and receives the result."""
        return self(target, *args, out=inplace_target(target, *args))

    def _promoted(self, index: int) -> bool:
        return self.promote is None or index in self.promote

    def _plan(self, args, out, dtype, key):
        """(the plan of this kind of call, `out` resized to the result where it was not);
        kept under `key` unless `out` was resized (its key then no longer says its shape)."""
        device, itemized = _device_and_itemized(args, out)
        promoted = [a for i, a in enumerate(args) if self._promoted(i)]
        if dtype is None:
            compute, result = computation_dtypes(promoted, self.promotion)
        else:
            compute, result = _for_dtype(dtype), dtype
        if out is not None:
            check_castable(result, out)
        widened = ()
        if compute == torch.float64:  # a Python float reaches a kernel as fp32: pass fp64 data
            widened = tuple(i for i, a in enumerate(args) if isinstance(a, float))
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        shape = _broadcast_shape(tensors, out)
        plan = _Plan(device, shape, result, _template(args, shape), itemized, widened)
        plan.retyped = plan.template is not None and args[plan.template].dtype != result
        launched = plan.arguments(args)
        sample = out if out is not None else plan.run(args, None)
        if sample.numel():
            self._prepare(plan, launched, sample, shape, compute)
        if (out if out is None else _kind(out)) == key[1]:
            self._plans.put(key, plan)
        return plan, out

    def _prepare(self, plan, args, out, shape, compute):
        """Choose the kernel and its launch (trailing arguments, grid, options) for `plan`."""
        operands = [a for a in args if isinstance(a, torch.Tensor)]
        if all(t.shape == out.shape and t.is_contiguous() for t in operands) and (
            out.is_contiguous()
        ):  # the common case, without walking the dims
            layout = contiguous_walk(out.numel(), len(operands) + 1)
        else:
            strides = [broadcast_strides(t, shape) for t in operands] + [list(out.stride())]
            layout = walk(shape, strides)
        rank = len(layout.sizes)
        inner = layout.sizes[-1]
        rows = rank > 1 and inner >= _ROWS_FROM
        # On the CPU, an operand constant along the inner dim is one load a row (ROW), where a
        # block of it loaded at stride 0 was a gather of one address (x + c[:, None]: 4.9x
        # torch's time at 1024 x 1024).
        by_row = rows and out.device.type == "cpu"
        loads = [  # how each tensor operand is read, then the output (stored a block at a time)
            codegen.ROW if by_row and st[-1] == 0 else codegen.TENSOR for st in layout.strides[:-1]
        ]
        read = iter(loads)
        pattern = tuple(
            (next(read) if isinstance(a, torch.Tensor) else codegen.SCALAR, self._promoted(i))
            for i, a in enumerate(args)
        )
        kernel = self._kernels.get((pattern, rank))
        if kernel is None:
            kernel = self._kernels[(pattern, rank)] = codegen.generate(self.fn, pattern, rank)
        n = out.numel()
        block, options = _block(out.device, n)
        strides = [  # a ROW operand takes no stride along the inner dim
            s
            for st, kind in zip(layout.strides, [*loads, codegen.TENSOR], strict=True)
            for s in (st[:-1] if kind == codegen.ROW else st)
        ]
        index64 = max(n, layout.largest) + block > _INDEX32_LIMIT
        if rows:  # a program per block of the inner dim
            block = min(block, 1 << (inner - 1).bit_length())
            grid = (n // inner) * ((inner + block - 1) // block)
        else:
            grid = (n + block - 1) // block
        sizes = layout.sizes[1:]
        plan.kernel, plan.grid, plan.options = kernel, (grid,), options
        plan.tail = (n, *sizes, *strides, index64, tl_dtype(compute), rows, block)


def inplace_target(target, *others):
    """`target` as the output of an in-place op, after torch's check that the other operands
    broadcast to its shape (never it to theirs). Operands of its very shape (a gradient's
    accumulation: the Llama step's `add_`) pass without the broadcast's lists."""
    shape = target.shape
    for a in others:
        if isinstance(a, torch.Tensor) and a.shape != shape:
            break
    else:
        return target
    shapes = [a.shape for a in others if isinstance(a, torch.Tensor)]
    shape = broadcast_shape([target.shape, *shapes])
    if shape != tuple(target.shape):
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(shape)}"
        )
    return target


def _for_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _kind(value):
    """What a plan depends on in an argument: a tensor's dtype, device, shape and strides; a
    scalar's type (its value reaches the kernel as an argument). `PointwiseOp.__call__` keys
    the operands by the same items, inline."""
    if isinstance(value, torch.Tensor):
        return (value.dtype, value.device, value.shape, value.stride())
    return type(value)


def _device_and_itemized(args, out):
    """(the device the op runs on, the positions of 0-dim CPU tensors beside tensors of another
    device, which torch allows there and the kernel takes as numbers). Numbers alone (fill_)
    run where `out` lies."""
    devices = {a.device for a in args if isinstance(a, torch.Tensor) and a.dim() > 0}
    devices |= {a.device for a in args if isinstance(a, torch.Tensor) and a.device.type != "cpu"}
    if len(devices) > 1:
        raise RuntimeError(f"expected all tensors on one device, found {sorted(map(str, devices))}")
    if not devices:
        devices = {a.device for a in args if isinstance(a, torch.Tensor)}
        devices = devices or {torch.device("cpu") if out is None else out.device}
    (device,) = devices
    if device.type == "cpu":
        return device, ()
    itemized = tuple(
        i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.device != device
    )
    return device, itemized


def _broadcast_shape(tensors, out) -> tuple[int, ...]:
    if not tensors:  # fill: only scalars, into `out`
        return tuple(out.shape) if out is not None else ()
    shape = broadcast_shape([t.shape for t in tensors])
    if out is not None and tuple(out.shape) != shape:
        if any(t.data_ptr() == out.data_ptr() for t in tensors):  # out is an operand: resizing
            raise RuntimeError(  # it would lose the values the op reads (torch refuses too)
                f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            )
        out.resize_(shape)  # as torch's out= does (it also warns where `out` was not empty)
    return shape


def _template(args, shape):
    """The position of the first operand of the result's shape, which the result is allocated
    like (its memory order kept, as torch does for dense operands); None: contiguous."""
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and tuple(a.shape) == shape and a.dim() > 0:
            return i
    return None


class UserPointwiseOp(PointwiseOp):
    """A pointwise op made by a user (`naiad.ops.pointwise`): under torch.compile its call runs
    eagerly between the graphs (it has no custom-op twin: graph_breaks.py). The library's own
    ops are plain PointwiseOps, called inside other ops without the mark's cost."""

    __call__ = run_eagerly_under_compile(PointwiseOp.__call__)


# The library's ops, and the ones users make (naiad.ops.pointwise): one decorator, whose class
# says which.
pointwise = PointwiseOp.decorator
user_pointwise = UserPointwiseOp.decorator
