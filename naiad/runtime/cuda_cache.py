"""The CUDA stages of a kernel (TTGIR, LLVM IR, PTX, cubin), from the disk cache when it has them.

    compile_cuda_stages(build, target_name, options)

The key is the hash of what decides those stages: the kernel's optimized TTIR (which holds its
specialization), the target, the launch options the back end reads (num_warps, num_ctas,
maxnreg), debug mode, the version of the linker (it bounds the PTX ISA and makes the cubin) and
the libdevice file linked; `cache.cache_key` adds the hash of Naiad's source and the
llvmlite/LLVM version. An entry holds each stage's text, the cubin, and the metadata a launch
reads (name, warps, shared bytes, PTX ISA, registers, spills, parameters) as JSON, so a process
that finds it neither lowers to LLVM IR nor runs LLVM nor links: it loads the cubin as it is
(once per device, backends/nvidia/driver.py). The CPU back end keys its objects the same way
(cpu_launcher.py); both share `cache.Cache`, whose entries are checked and rebuilt when damaged.
"""

from __future__ import annotations

import json
import pathlib

from .. import knobs
from .cache import Cache, cache_key

_CUBIN = "kernel.cubin"
_STAGES = ("ttgir", "llir", "ptx")

_cache: Cache | None = None


def _disk_cache() -> Cache:
    """This process's cache, made again when `NAIAD_CACHE_DIR` names another directory."""
    global _cache
    configured = knobs.cache_dir.get()
    if _cache is None or (configured and pathlib.Path(configured) != _cache.directory):
        _cache = Cache()
    return _cache


def _libdevice_identity() -> str:
    """Which libdevice a compile links: its path and size (none: 'missing')."""
    from ..backends.nvidia import libdevice

    try:
        found = libdevice.path()
    except libdevice.LibdeviceNotFound:
        return "missing"
    return f"{found}:{found.stat().st_size}"


def _key(build, target_name: str, options) -> str:
    from ..backends.nvidia import link

    return cache_key(
        {
            "backend": "cuda",
            "ttir": build.kernel.asm["ttir"],
            "target": target_name,
            "num_warps": getattr(options, "num_warps", 4),
            "num_ctas": getattr(options, "num_ctas", 1),
            "maxnreg": getattr(options, "maxnreg", None),
            "debug": bool(build.kernel.metadata.get("debug")),
            "linker": link.linker_version(),
            "libdevice": _libdevice_identity(),
        }
    )


def compile_cuda_stages(build, target_name: str, options) -> None:
    """TTIR -> TTGIR -> LLVM IR -> PTX (-> cubin) into `build.kernel` (its asm and metadata),
    from the disk cache when it has them (then `build.module` stays TTIR)."""
    key = _key(build, target_name, options)
    cache = _disk_cache()
    entry = cache.get(key)
    if entry is None:
        entry = cache.put(key, *_compile(build, target_name, options))
    kernel = build.kernel
    for stage in _STAGES:
        kernel.asm[stage] = entry.files[stage].decode()
    if _CUBIN in entry.files:
        kernel.asm["cubin"] = entry.files[_CUBIN]
    # JSON turned the parameters' (name, spec) pairs into lists: make them pairs again.
    metadata = json.loads(json.dumps(entry.metadata))
    metadata["params"] = [tuple(pair) for pair in metadata["params"]]
    kernel.metadata.update(metadata)


def _compile(build, target_name: str, options) -> tuple[dict, dict]:
    """The files and metadata of a cache entry, compiled (backends/nvidia/compiler.py)."""
    from ..backends.nvidia import passes  # noqa: F401  (registers the TTGIR passes)
    from ..backends.nvidia.compiler import compile_module

    stages = compile_module(
        build.module,
        target_name,
        num_warps=getattr(options, "num_warps", 4),
        num_ctas=getattr(options, "num_ctas", 1),
        maxnreg=getattr(options, "maxnreg", None),
        debug=bool(build.kernel.metadata.get("debug")),
    )
    files = {stage: stages.asm[stage].encode() for stage in _STAGES}
    if "cubin" in stages.asm:
        files[_CUBIN] = bytes(stages.asm["cubin"])
    signature = build.kernel.metadata["signature"]
    params = [[name, spec] for name, spec in signature.items() if spec != "constexpr"]
    return files, {**stages.metadata, "params": params}
