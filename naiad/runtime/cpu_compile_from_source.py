"""The compile of a first launch tiered before its TTIR (cpu_first_launch.py tells it small):
all of it from the source in the background, and the frontend's error raised where the
interpreted launch fails.
"""

from __future__ import annotations

import contextlib

from ..errors import KernelNotImplementedError
from ..source_locations import refusing_parses
from .compiled_kernel import CompiledKernel
from .compiler import begin_compile, frontend_module
from .cpu_first_launch import Verdict, small_before_ir


class CompileFromSource:
    """The compile of a launch tiered before its TTIR: `finish` runs it all from the source
    (frontend, TTIR pipeline, the disk cache, the back end's stages), in the background with
    no source parsed there (`_reached` parsed them in the launching thread)."""

    def __init__(self, jit_function, spec, options, site):
        self.jit_function, self.spec = jit_function, spec
        self.options, self.site = options, site

    def finish(self, background: bool = False, between_stages=None) -> CompiledKernel:
        with refusing_parses() if background else contextlib.nullcontext():
            begun = begin_compile(self.jit_function, self.spec, "cpu", self.options, self.site)
            if isinstance(begun, CompiledKernel):  # the disk cache had it
                return begun
            return begun.finish(background, between_stages)


def tiered_from_source(jit_function, spec, options, grid: tuple, bound: dict, site):
    """(CompileFromSource, its `small` test) for a launch the AST says is small; None
    otherwise (cpu_tiering.mode tiers no launch while the JIT hooks are set). Where a
    loop's body runs in no program of the launch, the frontend runs here first and raises
    what it refuses in that body (the interpreted launch would not meet it); the rest of the
    compile goes to the background as for any small launch."""
    small = small_before_ir(jit_function, spec.constexprs, spec.signature)
    verdict = Verdict.LARGE if small is None else small(bound, grid)
    if not verdict:
        return None
    if verdict is Verdict.SMALL_WITH_A_LOOP_UNRUN:
        with contextlib.suppress(KernelNotImplementedError):
            frontend_module(jit_function, spec, "cpu", options)
    return CompileFromSource(jit_function, spec, options, site), small


def raise_compile_error(jit_function, spec, options) -> None:
    """After an interpreted launch failed: raise the error the kernel's compile meets, if it
    meets one (the frontend refuses the kernel: a CompilationError at the launch, as when the
    launch compiles first); a kernel the CPU back end does not compile yet is no such error."""
    with contextlib.suppress(KernelNotImplementedError):
        begin_compile(jit_function, spec, "cpu", options)
