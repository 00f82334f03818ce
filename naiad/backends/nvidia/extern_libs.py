"""Bitcode libraries a launch names with Triton's `extern_libs` option (`kernel[grid](...,
extern_libs={'libdevice': path})`, or `triton.compile(..., options={'extern_libs': ...})`).

The library named `libdevice` replaces the copy libdevice.py finds (Triton's tutorial 07 points
it at the file its own wheel ships); it is linked as that one is, the functions the kernel calls
cut out of it. Any other library is linked whole, its definitions made `linkonce_odr`, so the
optimizer keeps only what the kernel calls. A compile's cache key holds each file's path, size
and modification time: a rebuilt library compiles again.
"""

from __future__ import annotations

import functools
import os
import pathlib

import llvmlite.binding as llvm

from ...errors import NaiadError
from . import libdevice

LIBDEVICE = "libdevice"


class ExternLibNotFound(NaiadError, FileNotFoundError):
    """A library `extern_libs` names is not a file."""


def _file(name: str, path: str) -> pathlib.Path:
    found = pathlib.Path(path)
    if not found.is_file():
        raise ExternLibNotFound(
            f"extern_libs names {name!r} at {path}, which is not a file "
            "(expected an LLVM bitcode library)"
        )
    return found


def libdevice_path(libs: tuple[tuple[str, str], ...]) -> pathlib.Path | None:
    """The libdevice `libs` names, if any (None: the one libdevice.py finds)."""
    for name, path in libs:
        if name == LIBDEVICE:
            return _file(name, path)
    return None


def identity(libs: tuple[tuple[str, str], ...]) -> list[str]:
    """What a compile's cache key holds of `libs`: each file's name, path, size and time."""
    facts = []
    for name, path in libs:
        stat = _file(name, path).stat()
        facts.append(f"{name}={path}:{stat.st_size}:{stat.st_mtime_ns}")
    return facts


def link_others(module: llvm.ModuleRef, libs: tuple[tuple[str, str], ...]) -> None:
    """Link every library of `libs` but libdevice into `module` (see the module doc)."""
    for name, path in libs:
        if name != LIBDEVICE:
            file = _file(name, path)
            stat = file.stat()
            module.link_in(llvm.parse_bitcode(_prepared(os.fspath(file), stat.st_mtime_ns)))


@functools.lru_cache(maxsize=16)
def _prepared(path: str, mtime_ns: int) -> bytes:
    """The library at `path`, `linkable` (parsed once per file version; a module is consumed
    by the link, so bitcode is kept)."""
    return libdevice.linkable(pathlib.Path(path).read_bytes()).as_bitcode()
