"""A TTGIR module's kernel as one LLVM function: the signature, the entry block, the body.

The module doc of this package states the contract with the compiler; `lower_module` is the
one entry point.
"""

from __future__ import annotations

from ....dialects import tt
from ....errors import InternalError
from ....ir import IntegerAttr
from ....ir.types import i32
from ....llvm_util import ident_strings
from ....passes.analysis.axis_info import AxisInfoAnalysis
from .. import target as nv_target
from . import (  # noqa: F401  (each module registers its lowerings)
    async_copy,
    atomics,
    bounds,
    control,
    convert,
    debug_ops,
    dot_mma,
    elementwise,
    exchanges,
    fp8,
    inline_asm,
    math_ops,
    memory,
    partitions,
    polling,
    positions,
    reduce,
    scalar_maps,
    scan,
    shared_memory,
    tensor_map_create,
    tma,
    wgmma,
)
from .context import Context, lowers
from .emitter import llvm_type
from .lines import KernelLines
from .occupancy import min_ctas_per_sm


def _kernel(module):
    """The module's one `tt.func` (the kernel; its callees are inlined)."""
    funcs = [op for op in module.body.ops if isinstance(op, tt.FuncOp)]
    if len(funcs) != 1:
        names = ", ".join(f.sym_name.value for f in funcs)
        raise InternalError(f"lowering expects one tt.func after inlining; found: {names}")
    return funcs[0]


def _module_int(module, name: str, default: int) -> int:
    attr = module.attributes.get(name)
    return default if attr is None else int(attr.value)


def lower_module(
    module,
    target,
    debug: bool = False,
    maxnreg: int | None = None,
    fp_fusion: bool = True,
    line_info: bool = False,
    local_variables: bool = False,
    functions=(),
) -> str:
    """The LLVM IR text of `module`'s kernel for `target` (see the package doc); sets the
    module's `ttg.shared` attribute to the bytes of shared memory the kernel needs. With
    `debug`, every access is bounds-checked against hidden extent parameters (bounds.py).
    `maxnreg` caps the registers per thread in the PTX itself (`.maxnreg`): the linkers
    compile PTX as relocatable code, where a `-maxrregcount` option leaves kernels alone.
    `fp_fusion` (Triton's `enable_fp_fusion`) lets float multiplies and adds fuse into fma.
    `line_info` locates the instructions at the kernel's source lines (lines.py), and
    `local_variables` describes the values the kernel names too; `functions` are the
    `noinline` functions inlined into it (debug_info.function_ranges)."""
    if isinstance(target, str):
        target = nv_target.cuda_target(target)
    func = _kernel(module)
    num_warps = _module_int(module, "ttg.num-warps", 4)
    launched_warps = _module_int(module, "ttg.total-num-warps", num_warps)  # partitions too
    if _module_int(module, "ttg.threads-per-warp", 32) != 32:
        raise InternalError("NVIDIA warps have 32 threads")
    allocated = module.attributes.get("ttg.shared")  # set by allocate-shared-memory
    allocated = None if allocated is None else int(allocated.value)
    buffers = {}
    if allocated is None:
        buffers, end = shared_memory.place_without_reuse(func)
        allocated = end if buffers else None
    ctx = Context(num_warps, target.capability, AxisInfoAnalysis(module), allocated)
    ctx.buffer_offsets = buffers
    ctx.fp_fusion = fp_fusion
    ctx.register_floor = min_ctas_per_sm(func, launched_warps) is not None
    if line_info:
        ctx.lines = KernelLines(ctx.em, func, local_variables, functions)
    block = func.body.block
    params = []
    for index, arg in enumerate(block.arguments):
        name = f"%arg{index}"
        ctx[arg] = [name]
        params.append(f"{_parameter_type(arg.type)} {name}")
    if debug:
        params += bounds.install(ctx, func)
    params += tensor_map_create.install(ctx, func)
    ctx.lower_block(block)
    module.attributes["ttg.shared"] = IntegerAttr(ctx.shared_bytes, i32)
    return _module_text(
        ctx, func, params, _kernel_attributes(func, launched_warps, maxnreg, ctx.em)
    )


def _module_text(ctx: Context, func, params: list[str], attributes: str) -> str:
    """The module: its declarations (metadata too), then the kernel's one function."""
    em = ctx.em
    attachment = ""
    if ctx.lines is not None:
        ctx.lines.finish()
        attachment = ctx.lines.attachment()
    name = func.sym_name.value
    idents = [em.metadata_text(f'!{{!"{text}"}}') for text in ident_strings()]
    em.declarations["llvm.named.llvm.ident"] = f"!llvm.ident = !{{{', '.join(idents)}}}"
    header = f"define ptx_kernel void @{name}({', '.join(params)}) #0{attachment} {{\nentry:"
    lines = [
        f'target triple = "{nv_target.TRIPLE}"',
        f'target datalayout = "{nv_target.DATA_LAYOUT}"',
        "",
        *em.declarations.values(),
        "",
        header,
        *em.entry,
        *em.body,
        "}",
        "",
        f"attributes #0 = {{ {attributes} }}",
        "",
    ]
    return "\n".join(lines)


def _parameter_type(t) -> str:
    """A kernel parameter's LLVM type: a tensor map (`!tt.tensordesc`, lowering/tma.py) is the
    128-byte `CUtensorMap` itself, passed by value and read in place (`__grid_constant__`), as
    the copy engine needs its address; every other argument is a scalar."""
    if isinstance(t, tt.TensorDescType):
        return 'ptr byval([128 x i8]) align 64 "nvvm.grid_constant"'
    return llvm_type(t)


def _calls(em) -> bool:
    """Whether the kernel calls functions (libdevice's, vprintf, __assertfail) rather than
    only LLVM intrinsics. The linker compiles a called function apart, without the kernel's
    register cap, and refuses a capped kernel that calls one needing more registers (libdevice's
    fp64 sin reduces large arguments in a function of 46)."""
    return any(not name.startswith(("llvm.", "@")) for name in em.declarations)


def _kernel_attributes(func, num_warps: int, maxnreg: int | None, em) -> str:
    """`.reqntid` (as Triton's: a launch of another block size fails, where `.maxntid` would
    let a smaller block run part of each tile), and either the launch's register cap or the
    floor on CTAs per SM that keeps a memory-bound kernel's occupancy (occupancy.py; none for
    a kernel that calls functions, see `_calls`)."""
    attributes = f'"nvvm.reqntid"="{32 * num_warps}"'
    if maxnreg is not None:
        return attributes + f' "nvvm.maxnreg"="{maxnreg}"'
    ctas = None if _calls(em) else min_ctas_per_sm(func, num_warps)
    if ctas is not None:
        attributes += f' "nvvm.minctasm"="{ctas}"'
    return attributes


@lowers("tt.return")
def _return(ctx: Context, op) -> None:
    if op.operands:
        raise InternalError("a kernel returns nothing")
    ctx.em.emit("ret void")
