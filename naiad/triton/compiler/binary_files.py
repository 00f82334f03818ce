"""Where `triton.compile` leaves a CUDA kernel's binary: `<TRITON_CACHE_DIR>/<hash>/<name>.cubin`,
as Triton's compile leaves its artifacts in its cache directory (`hash`: the CompiledKernel's).

Tools built on Triton load compiled kernels from there without Triton's launcher: torch's
Inductor launches each kernel it compiled through its own C++ launcher (its "static launcher")
where it finds the cubin, passing the grid, the stream and the signature's non-constexpr
arguments in order; where it finds none it calls `CompiledKernel.run`, which relaunches
through Naiad's launch path (relaunch.py), several microseconds slower per launch.

So the cubin is written only where that launcher would pass what the kernel takes: a CUDA
kernel whose parameters are the source signature's non-constexpr arguments one for one. A
host tensor descriptor becomes several parameters (and a tensor map) in Naiad's kernels, and
an argument the signature leaves out takes its default in the compile: such kernels are left
to `CompiledKernel.run`. Nothing is written where `TRITON_CACHE_DIR` is unset (Inductor sets
it before compiling); the file is written whole and renamed into place, since compile workers
may write the same kernel at once.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ... import knobs


def leave_binary(kernel, src) -> Path | None:
    """Write `kernel`'s cubin where Triton's compile would leave it (module doc); return its
    path, or None where nothing is written."""
    directory = knobs.triton_cache_dir()
    if not directory or not _launchable_from_signature(kernel, src):
        return None
    folder = Path(directory) / kernel.hash
    path = folder / f"{kernel.name}.cubin"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    with os.fdopen(handle, "wb") as out:
        out.write(kernel.binary)
    os.replace(partial, path)
    return path


def _launchable_from_signature(kernel, src) -> bool:
    """Whether `kernel` is a cubin taking `src`'s non-constexpr arguments one for one."""
    metadata = kernel.metadata
    if not str(metadata.get("target", "")).startswith("cuda") or not kernel.binary:
        return False
    if metadata.get("tensor_maps"):
        return False
    compiled = [(n, t) for n, t in metadata["signature"].items() if t != "constexpr"]
    given = [
        (name, kind)
        for name, kind in src.signature.items()
        if kind != "constexpr" and name not in src.constants
    ]
    order = {name: i for i, name in enumerate(src.fn.arg_names)}
    given.sort(key=lambda item: order.get(item[0], len(order)))
    return compiled == given and not any(kind.startswith("tensordesc") for _, kind in given)
