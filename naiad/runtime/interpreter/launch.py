"""Running a kernel in the interpreter: arguments to kernel values, then every program in order.

Programs run one at a time in increasing linear program id (x fastest), so atomics are exact and
a spin lock across programs works. Arrays on a GPU are copied to the host before the launch and
back after it (aliasing arguments share one copy), so GPU code can be debugged here too.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ...language import core
from ...language import dtypes as t
from ...language.semantic import Semantic
from ...language.target import CUDA_HOPPER, TargetInfo
from ...language.tensor_descriptors import tensor_descriptor
from ...language.unspecialized_constexprs import refuse_unspecialized_constexprs
from .. import diagnostics
from ..driver import host_gpu_target
from ..host_arrays import describe, is_array_like
from ..params import integer_argument_type, unsupported_argument
from ..tensor_descriptor import TensorDescriptor
from .builder import InterpreterBuilder, scalar_tensor
from .memory import HostCopies, Memory, argument_pointers


def _pointer(name, value, param, memory: Memory, copies: HostCopies):
    array = describe(value)
    pointers = argument_pointers(name, array, memory, copies)
    element = (
        param.annotation.element_ty
        if param.annotation is not None and param.annotation.is_ptr()
        else array.dtype
    )
    ty = t.pointer_type(element, const=param.is_const)
    return core.tensor(pointers, ty)


def kernel_value(name, value, param, memory, copies):
    """The kernel-side value of one launch argument (a TypeError names the argument if invalid)."""
    if param is not None and param.is_constexpr:
        return core.constexpr(value)
    annotation = param.annotation if param is not None else None
    if value is None:
        return None
    if annotation is not None and annotation.is_floating() and isinstance(value, int | float):
        value = float(value)  # `x: tl.float32` given 1 is 1.0 (specialization.py agrees)
    if isinstance(value, bool):
        return scalar_tensor(value, t.int1)
    if isinstance(value, int):
        ty = integer_argument_type(name, value, annotation)
        return scalar_tensor(value % (1 << ty.int_bitwidth) if ty.is_int_unsigned() else value, ty)
    if isinstance(value, float):
        ty = annotation if annotation is not None and annotation.is_floating() else t.float32
        from .floats import convert

        return core.tensor(convert(np.array(value), "fp64", ty.name), ty)
    if (
        isinstance(value, (t.dtype, core.constexpr))
        or getattr(value, "__naiad_jit__", False)
        or callable(getattr(value, "run", None))
    ):
        return core.constexpr(value)
    if isinstance(value, (tuple, list)):
        values = [
            kernel_value(f"{name}[{i}]", v, None, memory, copies) for i, v in enumerate(value)
        ]
        fields = getattr(type(value), "_fields", None)
        return core.tuple(values, t.tuple_type([getattr(v, "type", None) for v in values], fields))
    if isinstance(value, TensorDescriptor):
        return _descriptor(name, value, memory, copies)
    if is_array_like(value):
        return _pointer(name, value, param or _ANY, memory, copies)
    raise unsupported_argument(name, value)


def _descriptor(name, desc: TensorDescriptor, memory, copies):
    """A host tensor descriptor as the language's: base pointer, int64 shape and strides."""
    base = _pointer(name, desc.base, _ANY, memory, copies)
    element = base.type.element_ty
    block = [int(core._unwrap_if_constexpr(b)) for b in desc.block_shape]
    if block[-1] * element.primitive_bitwidth // 8 < 16:
        raise ValueError(
            f"argument `{name}`: descriptor blocks need at least 16 bytes in the last "
            f"dimension, got {block[-1]} x {element.primitive_bitwidth // 8} bytes"
        )
    shape = [scalar_tensor(s, t.int64) for s in desc.shape]
    strides = [scalar_tensor(s, t.int64) for s in desc.strides]
    return tensor_descriptor(base, shape, strides, t.block_type(element, block), desc.padding)


class _AnyParam:
    annotation = None
    is_const = False


_ANY = _AnyParam()


def interpreter_rules(**options) -> TargetInfo:
    """The language's rules in the interpreter with `options`: CUDA on Hopper's, the strictest,
    so a kernel that runs here compiles for the GPU; but `tl.target_info` answers as the host's
    CPU, where the kernel runs (a kernel's `if is_cuda():` takes its portable branch here)."""
    return CUDA_HOPPER.with_options(gpu_target=host_gpu_target(), **options)


def run_grid(jit_function, bound: dict, grid: tuple, debug: bool, language=None):
    """Run `jit_function` in the interpreter over `grid` with the bound arguments, under the
    rules of `language` (a language target; None: CUDA on Hopper's, the strictest, with
    `debug`): a launch standing in for a compiled one takes its back end's rules."""
    refuse_unspecialized_constexprs(jit_function)  # as a compile does (frontend)
    memory, copies = Memory(), HostCopies()
    params = {p.name: p for p in jit_function.params}
    try:
        args = {
            name: kernel_value(name, value, params[name], memory, copies)
            for name, value in bound.items()
        }
    except (TypeError, ValueError, OverflowError) as exc:
        raise type(exc)(f"{jit_function.__name__}: {exc}") from None
    builder = InterpreterBuilder(memory, grid, debug)
    if language is None:
        language = interpreter_rules(debug=debug)
    semantic = Semantic(builder, language)
    fn = jit_function.interpreted()
    failure = None
    with np.errstate(all="ignore"), core.use_semantic(semantic):
        try:
            for z in range(grid[2]):
                for y in range(grid[1]):
                    for x in range(grid[0]):
                        builder.pid = (x, y, z)
                        fn(**args)
        except errors.InternalError:
            raise
        except Exception as exc:  # every kernel failure is reported at the user's line
            failure = exc
        finally:
            copies.write_back()
    if failure is not None:
        diagnostics.reraise(failure, jit_function.__name__)
