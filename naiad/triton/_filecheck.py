"""`triton._filecheck`: FileCheck tests of the frontend, as Triton users write them. A jit
function's own source holds the directives as comments, and they are matched against the TTIR
the code generator made for it, before any pass, printed without locations (the values get
MLIR's default names: `%c11_i32`, `%0`, `%arg0`):

    @filecheck_test
    @triton.jit
    def test_constant():
        # CHECK-LABEL: test_constant
        # CHECK: arith.constant 11 : i32
        anchor(11)

`run_parser` gives that module (`str_nodebug()`, `str()`); a program the frontend refuses
raises its CompilationError. Naiad's TTIR is printed by its own printer and its own code
generator's (docs/compat.md says where its text differs from Triton's); the directives are
matched by naiad.testing.filecheck.
"""

from __future__ import annotations

import functools
import inspect

from ..runtime.compiler import frontend_ttir
from ..runtime.jit import JITFunction
from ..runtime.launch_options import OPTION_NAMES
from ..testing.filecheck import FileCheckError, check_text
from ._C.libtriton import ir
from .backends.compiler import target_name

MatchError = FileCheckError


def run_parser(kernel_fn, args=(), kwargs=None, target=None) -> ir.module:
    """The TTIR `kernel_fn`'s code generator makes for `args` and `kwargs` (launch arguments:
    arrays, MockTensors, dtypes or signature strings, numbers, constexpr values; launch options
    among `kwargs` are set aside), before any pass, for `target` (a GPUTarget; None: Naiad's
    default TTIR target, 'cuda:sm_90a').

    Raises:
        CompilationError: the frontend refuses the program (at the user's line).
    """
    if not isinstance(kernel_fn, JITFunction):
        raise TypeError(f"run_parser needs a @triton.jit function, got {type(kernel_fn).__name__}")
    kwargs = dict(kwargs or {})
    debug = bool(kwargs.get("debug", False)) if "debug" not in kernel_fn.params_by_name else False
    arguments = {
        name: value
        for name, value in kwargs.items()
        if name in kernel_fn.params_by_name or name not in OPTION_NAMES
    }
    bound = kernel_fn._bind(tuple(args), arguments)
    chosen = target_name(target) if target is not None else None
    return ir.module(frontend_ttir(kernel_fn, bound, chosen, debug=debug))


def run_filecheck(name: str, module_str: str, check_template: str) -> None:
    """Match `module_str` against the FileCheck directives in `check_template`.

    Raises:
        ValueError: (a MatchError) FileCheck's report and the module's text.
    """
    check_text(module_str, check_template, name)


def run_filecheck_test(kernel_fn, args=(), kwargs=None) -> None:
    """Match the TTIR `run_parser` gives for `kernel_fn` against the directives written in
    `kernel_fn`'s own source."""
    if not isinstance(kernel_fn, JITFunction):
        raise TypeError(f"a FileCheck test needs a @triton.jit function, got {kernel_fn!r}")
    directives = inspect.getsource(kernel_fn.fn)
    module = run_parser(kernel_fn, args=args, kwargs=kwargs)
    run_filecheck(kernel_fn.__name__, module.str_nodebug(), directives)


def filecheck_test(fn):
    """A test function (for pytest) running `run_filecheck_test` on the jit function `fn`."""

    @functools.wraps(fn)
    def test_fn():
        run_filecheck_test(fn)

    return test_fn
