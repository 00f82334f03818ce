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
