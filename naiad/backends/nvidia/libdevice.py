"""libdevice: NVIDIA's math library in LLVM bitcode, linked into kernels that call `__nv_*`.

Where it is found, in order: the `nvidia-nvvm` wheel (`nvidia/<cuXX>/nvvm/libdevice/` inside
site-packages; the `cuda` extra installs it), then a CUDA toolkit at `$CUDA_HOME` and at
`/usr/local/cuda` (`nvvm/libdevice/`).

The bitcode is parsed once per process. Its function definitions are made `linkonce_odr` before
linking, so the optimizer drops every function the kernel does not call (libdevice has ~350
definitions; a kernel calls a few), and only modules that declare an `__nv_*` function pay for
the link at all. Linking the whole library takes 60-130 ms, so a kernel links a subset: the
functions it declares and everything they call, cut out of the library once per set of names
in a process (`_subset`), a few milliseconds to link.

libdevice's code asks `__nvvm_reflect("__CUDA_FTZ")` whether to flush f32 denormals to zero; LLVM's
NVVMReflect pass (part of the NVPTX -O3 pipeline) answers from the module flag
`nvvm-reflect-ftz`, which `link` sets as the kernel asks. Every other reflected parameter
(`__CUDA_PREC_SQRT`, ...) reads as 0. Triton does the same: it sets `nvvm-reflect-ftz` to 1
unless `enable_reflect_ftz=False`, and nothing else, so Naiad's default is `ftz=True` and
libdevice functions compile to the same instructions (e.g. `__nv_sqrtf` → `sqrt.approx.ftz.f32`).
"""

from __future__ import annotations

import functools
import pathlib
import sys

import llvmlite.binding as llvm

from ... import knobs
from ...errors import NaiadError
from . import target as nv_target

FILE_NAME = "libdevice.10.bc"
_PREFIX = "__nv_"


class LibdeviceNotFound(NaiadError, FileNotFoundError):
    """No copy of libdevice was found where Naiad looks for one."""


def _candidates() -> list[pathlib.Path]:
    """Every place libdevice may be, in the order they are tried."""
    places = []
    for entry in sys.path:  # the nvidia-nvvm wheel: nvidia/cu13/nvvm/..., nvidia/nvvm/...
        root = pathlib.Path(entry or ".") / "nvidia"
        if root.is_dir():
            places += sorted(root.glob(f"*/nvvm/libdevice/{FILE_NAME}"), reverse=True)
            places.append(root / "nvvm" / "libdevice" / FILE_NAME)
    if knobs.cuda_home.get():
        places.append(pathlib.Path(knobs.cuda_home.get()) / "nvvm" / "libdevice" / FILE_NAME)
    places.append(pathlib.Path("/usr/local/cuda/nvvm/libdevice") / FILE_NAME)
    return places


@functools.cache
def path() -> pathlib.Path:
    """The libdevice bitcode file this process links (found once)."""
    places = _candidates()
    for place in places:
        if place.is_file():
            return place
    raise LibdeviceNotFound(
        f"{FILE_NAME} was not found; install the `nvidia-nvvm` wheel (pip install "
        "'naiad[cuda]') or set CUDA_HOME to a CUDA toolkit. Looked in: "
        + ", ".join(str(place) for place in places)
    )


def linkable(bitcode: bytes) -> llvm.ModuleRef:
    """A bitcode library retargeted to the kernels' triple and data layout (so that linking
    does not warn about a mismatch), its definitions made `linkonce_odr` (the optimizer drops
    those a kernel does not call)."""
    module = llvm.parse_bitcode(bitcode)
    module.triple = nv_target.TRIPLE
    module.data_layout = nv_target.DATA_LAYOUT
    for function in module.functions:
        if not function.is_declaration:
            function.linkage = "linkonce_odr"
    return module


@functools.cache
def _prepared(library: pathlib.Path) -> llvm.ModuleRef:
    """The libdevice at `library`, parsed once and `linkable`."""
    return linkable(library.read_bytes())


def calls_libdevice(module: llvm.ModuleRef) -> bool:
    """Whether `module` declares a libdevice function (`__nv_*`), i.e. needs the link."""
    return any(f.is_declaration and f.name.startswith(_PREFIX) for f in module.functions)


def _reflect_flags(ftz: bool) -> llvm.ModuleRef:
    """An empty module carrying the `nvvm-reflect-ftz` flag (behaviour 4: override), to be
    linked in: llvmlite has no call that sets a module flag."""
    return llvm.parse_assembly(
        f'target triple = "{nv_target.TRIPLE}"\n'
        f'target datalayout = "{nv_target.DATA_LAYOUT}"\n'
        "!llvm.module.flags = !{!0}\n"
        f'!0 = !{{i32 4, !"nvvm-reflect-ftz", i32 {int(ftz)}}}\n'
    )


def link(module: llvm.ModuleRef, ftz: bool = True, library: pathlib.Path | None = None) -> bool:
    """Link libdevice into `module` if it calls any `__nv_*` function; return whether it did.

    `ftz` answers `__CUDA_FTZ` (flush f32 denormals in libdevice's code); `library` is the
    bitcode a launch named (extern_libs.py; None: the one `path()` finds). The unused functions
    are removed by the optimizer that runs next (they are `linkonce_odr`)."""
    if not calls_libdevice(module):
        return False
    module.link_in(_reflect_flags(ftz))
    declared = sorted(
        str(f).strip() for f in module.functions if f.is_declaration and f.name.startswith(_PREFIX)
    )
    module.link_in(llvm.parse_bitcode(_subset(tuple(declared), library or path())))
    return True


@functools.lru_cache(maxsize=64)
def _subset(declarations: tuple[str, ...], library: pathlib.Path) -> bytes:
    """The bitcode of the libdevice functions `declarations` declare and of everything they
    call, alone (see the module doc): linking fetches only the `linkonce_odr` definitions a
    module refers to, so the library linked into a module of these declarations is the subset.
    The cost is in copying the library for the link, once per set."""
    module = llvm.parse_assembly(
        f'target triple = "{nv_target.TRIPLE}"\n'
        f'target datalayout = "{nv_target.DATA_LAYOUT}"\n' + "\n".join(declarations)
    )
    module.link_in(_prepared(library), preserve=True)
    return module.as_bitcode()
