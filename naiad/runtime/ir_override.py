"""A launch of a JIT function compiled from a file of IR instead of its source: Triton's
`ir_override` launch option, which an autotuning `Config(..., ir_override=path)` passes, so
that a hand-edited `.ttir` (or `.ttgir`) of a kernel can be tried in its place.

    kernel[grid](x, y, n, BLOCK=1024, ir_override="kernel.ttir")

The file is compiled for the device the arguments live on, with the launch's options
(runtime/ir_files.py), once per file version, target and options; the launch passes the
arguments the kernel's compile would keep, in order: every parameter but the constexprs and
the integers specialized to the constant 1 (as the file's `tt.func`, made from such a compile,
declares them). Nothing else specializes: what the file promises of its parameters
(`tt.divisibility = 16`) is the caller's to keep, as for any IR file (ir_file_launch.py).
"""

from __future__ import annotations

import os

from .compiler import compile_options
from .launchers import backend_for_launch
from .specialization import Specialization
from .tuple_arguments import is_tuple

# (path, its modification time and size, target, options) -> the file's CompiledKernel
_compiled: dict = {}


def launch_from_file(jit_function, path, bound: dict, grid: tuple, options, debug: bool):
    """Run the kernel of the IR file at `path` in place of `jit_function`'s over `grid` with
    the `bound` arguments; return its CompiledKernel."""
    # (imported here: reading IR files needs the dialects, which a launch from source in the
    # interpreter does not load)
    from .ir_file_launch import launch_ir_kernel
    from .ir_files import compile_ir_file

    backend, index = backend_for_launch(bound)
    if backend is None:
        raise ValueError("ir_override: no back end runs on the device of these arguments")
    target = backend.device_target(index)
    compiled = compile_options(options, debug)
    status = os.stat(path)
    key = (os.fspath(path), status.st_mtime_ns, status.st_size, target, compiled)
    kernel = _compiled.get(key)
    if kernel is None:
        kernel = _compiled[key] = compile_ir_file(path, target, compiled)
    spec = Specialization.of(jit_function, bound)
    kept = [name for name, kind in spec.signature.items() if kind != "constexpr"]
    if any(is_tuple(bound[name]) for name in kept):
        raise TypeError("ir_override: a kernel taking a tuple argument is launched from source")
    launch_ir_kernel(kernel, grid, tuple(bound[name] for name in kept))
    return kernel


def forget_all() -> None:
    """Drop every compiled IR file (the next override launch compiles its file again)."""
    _compiled.clear()
