"""`tl.extra.cuda`: what only an NVIDIA GPU has - its clocks and ids, read by inline PTX, and the
launch's warp count.

    @naiad.jit
    def kernel(out):
        start = cuda.globaltimer()
        ...
        tl.store(out, cuda.globaltimer() - start)

`libdevice` is `naiad.language.extra.libdevice` itself (Triton's `extra.cuda.libdevice`).
`globaltimer` and `smid` run only on the GPU (the interpreter and the CPU back end cannot execute
PTX); `num_warps` and `num_threads` are compile-time constants of the target being compiled for.

`gdc_wait` and `gdc_launch_dependents` are grid dependence control, for kernels launched with
`launch_pdl=True` (programmatic dependent launch, Hopper and later). Where kernels run one after
another - the CPU, the interpreter, GPUs before sm_90 - the grid before has always finished,
so they do nothing.
"""

from __future__ import annotations

from ... import dtypes
from ...core import builtin, constexpr
from ...debug import inline_asm_elementwise
from .. import libdevice  # noqa: F401  (`extra.cuda.libdevice`, as Triton's path has it)


@builtin
def globaltimer(_semantic=None):
    """The GPU's global nanosecond timer (`%globaltimer`), an int64; not pure: every call
    reads it again."""
    return inline_asm_elementwise(
        "mov.u64 $0, %globaltimer;", "=l", [], dtypes.int64, False, 1, _semantic=_semantic
    )


@builtin
def smid(_semantic=None):
    """The index of the multiprocessor running this program (`%smid`), an int32."""
    return inline_asm_elementwise(
        "mov.u32 $0, %smid;", "=r", [], dtypes.int32, True, 1, _semantic=_semantic
    )


@builtin
def num_warps(_semantic=None):
    """The warps per program of the compilation target, a constexpr."""
    return constexpr(_semantic.target.num_warps)


@builtin
def num_threads(_semantic=None):
    """The threads per program (warps x warp size), a constexpr."""
    return constexpr(_semantic.target.num_warps * _semantic.target.warp_size)


@builtin
def gdc_wait(_semantic=None):
    """Wait until the grid this launch depends on has finished and its memory writes are
    visible (`griddepcontrol.wait`): before reading what the kernel launched before wrote."""
    _grid_dependence_control("griddepcontrol.wait;", _semantic)


@builtin
def gdc_launch_dependents(_semantic=None):
    """Let the launch that depends on this one start (`griddepcontrol.launch_dependents`),
    once every program has said so or finished; it orders no memory (`gdc_wait` does)."""
    _grid_dependence_control("griddepcontrol.launch_dependents;", _semantic)


def _grid_dependence_control(instruction: str, semantic) -> None:
    """`instruction` where the kernel is compiled for an NVIDIA GPU of sm_90 or later; nothing
    elsewhere (see the module doc)."""
    target = semantic.target
    if target.backend != "cuda" or target.arch < 90 or not semantic.builder.holds_inline_ptx:
        return
    # Inline assembly yields a value; this one's is a register nothing reads.
    inline_asm_elementwise(
        f"{instruction} // $0", "=r", [], dtypes.int32, False, 1, _semantic=semantic
    )
