"""PTX → cubin, and what the cubin says about its kernel (registers, local memory, shared memory).

Two linkers turn PTX into machine code (both run NVIDIA's ptxas inside):

- nvJitLink (`cuda.bindings.nvjitlink`, library from the `nvidia-nvjitlink` wheel): needs no GPU
  and no driver, so kernels compile ahead on machines without one; tried first.
- the driver's cuLinkCreate / cuLinkAddData / cuLinkComplete: needs a CUDA driver and a context;
  the fallback where nvJitLink's library is missing.

The cubin is cached, so a reload skips both, and the counts Naiad reports are read from the cubin
itself (its ELF), identical wherever it is loaded:

- `n_regs`: the kernel's registers per thread (`.nv.info` REGCOUNT, else the high byte of its
  `.text.<name>` section's `sh_info`);
- `n_spills`: local memory per thread in 4-byte words (`.nv.info` FRAME_SIZE / 4), as Triton
  counts it from the driver's LOCAL_SIZE_BYTES;
- `static_shared`: the `.nv.shared.<name>` section's size (dynamic shared memory is the
  compiler's `metadata.shared`, not in the cubin).
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass

from ...errors import InternalError, NaiadError
from . import driver
from . import target as nv_target

# `.nv.info` attribute codes (EIATTR_*) and formats: each entry is (format u8, attribute u8), then
# for the sized format a u16 size and that many bytes, else a 2-byte value.
_EIATTR_FRAME_SIZE = 0x11
_EIATTR_REGCOUNT = 0x2F
_EIFMT_SVAL = 0x04
_SHT_NOBITS = 8


class LinkerNotFound(NaiadError, RuntimeError):
    """Neither nvJitLink nor a CUDA driver is available to turn PTX into a cubin."""


@dataclass(frozen=True)
class Cubin:
    """A kernel's machine code and its resource counts."""

    data: bytes
    n_regs: int
    n_spills: int  # local memory per thread / 4, as Triton reports it
    local_bytes: int
    static_shared: int
    linker: str  # which linker made it, e.g. "nvJitLink 13.5"
    log: str  # the linker's info log (ptxas's resource report)


# -- reading the cubin ---------------------------------------------------------------------------
def _sections(elf: bytes) -> dict[str, tuple[int, int, int, int]]:
    """The sections of a 64-bit little-endian ELF: name → (type, offset, size, info)."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise InternalError("the linker's output is not a 64-bit little-endian ELF cubin")
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    entsize, count, names_index = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * entsize) for i in range(count)]
    names_offset = headers[names_index][4]

    def name(offset: int) -> str:
        start = names_offset + offset
        return elf[start : elf.index(b"\0", start)].decode()

    return {name(h[0]): (h[1], h[4], h[5], h[7]) for h in headers}


def _function_attributes(elf: bytes, section: tuple[int, int, int, int]) -> dict[tuple, int]:
    """The per-symbol attributes of the global `.nv.info`: (attribute, symbol) → value."""
    _, offset, size, _ = section
    data, position, found = elf[offset : offset + size], 0, {}
    while position + 4 <= len(data):
        fmt, attribute = data[position], data[position + 1]
        if fmt == _EIFMT_SVAL:
            (length,) = struct.unpack_from("<H", data, position + 2)
            if length == 8:
                symbol, value = struct.unpack_from("<II", data, position + 4)
                found[attribute, symbol] = value
            position += 4 + length
        else:
            position += 4
    return found


def cubin_resources(elf: bytes, entry: str) -> tuple[int, int, int]:
    """(registers per thread, local memory bytes per thread, static shared bytes) of `entry`."""
    sections = _sections(elf)
    text = sections.get(f".text.{entry}")
    if text is None:
        raise InternalError(f"the cubin has no code for `{entry}`")
    symbol, registers = text[3] & 0xFFFFFF, text[3] >> 24
    attributes = _function_attributes(elf, sections[".nv.info"]) if ".nv.info" in sections else {}
    registers = attributes.get((_EIATTR_REGCOUNT, symbol), registers)
    local = attributes.get((_EIATTR_FRAME_SIZE, symbol), 0)
    shared = sections.get(f".nv.shared.{entry}")
    return registers, local, shared[2] if shared is not None else 0


# -- the linkers -----------------------------------------------------------------------------------
@functools.cache
def _nvjitlink():
    """The nvJitLink module if its library loads here, else None."""
    try:
        from cuda.bindings import nvjitlink

        nvjitlink.version()
    except (ImportError, OSError, RuntimeError):  # no cuda-bindings, or no libnvJitLink (the
        return None  # library finder raises a RuntimeError): the driver's linker is the fallback
    return nvjitlink


def linker_version() -> int | None:
    """The CUDA version (cuDriverGetVersion's form, 12080 for 12.8) of the linker `link` will
    use, which bounds the PTX ISA version; None when no linker is available here."""
    nvjitlink = _nvjitlink()
    if nvjitlink is not None:
        major, minor = nvjitlink.version()
        return 1000 * major + 10 * minor
    return driver.driver_version() if driver.available() else None


def _link_nvjitlink(nvjitlink, ptx: bytes, options: list[str], name: str) -> tuple[bytes, str]:
    handle = nvjitlink.create(len(options), options)
    try:
        try:
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, ptx, len(ptx), f"{name}.ptx")
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as exc:
            log = bytearray(nvjitlink.get_error_log_size(handle))
            nvjitlink.get_error_log(handle, log)
            raise InternalError(
                f"nvJitLink could not compile the PTX of `{name}`: {exc}\n{log.decode()}"
            ) from exc
        cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, cubin)
        log = bytearray(nvjitlink.get_info_log_size(handle))
        nvjitlink.get_info_log(handle, log)
        return bytes(cubin), log.decode(errors="replace").rstrip("\0")
    finally:
        nvjitlink.destroy(handle)


def link(
    ptx: str,
    entry: str,
    target: nv_target.CudaTarget,
    *,
    maxnreg: int | None = None,
    linker: str | None = None,
) -> Cubin:
    """The cubin of `ptx` (whose kernel is `entry`) for `target`.

    Args:
        maxnreg: a cap on registers per thread (`-maxrregcount`), as the `maxnreg` option.
        linker: "nvjitlink" or "driver" to insist on one; None takes nvJitLink where it loads.

    Raises:
        LinkerNotFound: no linker is available (or not the one asked for).
        InternalError: the PTX does not assemble (it is Naiad's output).
    """
    data = ptx.encode()
    nvjitlink = _nvjitlink() if linker in (None, "nvjitlink") else None
    if nvjitlink is not None:
        options = [f"-arch={target.arch}", "-lineinfo", "-verbose"]
        if maxnreg is not None:
            options.append(f"-maxrregcount={maxnreg}")
        cubin, log = _link_nvjitlink(nvjitlink, data, options, entry)
        used = "nvJitLink {}.{}".format(*nvjitlink.version())
    elif linker in (None, "driver"):
        if not driver.available():
            raise LinkerNotFound(
                "no linker for PTX: install the `nvidia-nvjitlink` wheel, or run where a CUDA "
                "driver is installed"
            )
        cubin, log = driver.link_ptx(data, entry, maxnreg)
        used = f"CUDA driver {driver.driver_version()}"
    else:
        raise LinkerNotFound(f"the {linker!r} linker is not available here")
    registers, local, shared = cubin_resources(cubin, entry)
    return Cubin(cubin, registers, local // 4, local, shared, used, log)
