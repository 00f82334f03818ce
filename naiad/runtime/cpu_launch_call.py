"""The per-call function of a prepared CPU launch (cpu_fast_launch.FastCpuLaunch), generated
for its parameter block's layout.

What `kernel[grid](...)` runs on the hot path after the launch entry has keyed the call: the
arrays' extents, the block packed, the grid run. Written as a loop over the pointer arguments
into a list of extents and a pack of the values and that list unpacked, it cost a launch of
three tensors and two integers 2.35 us of host time besides the kernel's run (a library's
SwiGLU forward, 16x128, on the development CPU); generated for the launch, with each pointer's
extent read into names and one pack from names, the loop, the list and the unpacking go.
Launches whose arguments include tuples keep the loop (FastCpuLaunch.__call__).
"""

from __future__ import annotations

import struct

from .binder import define
from .cpu_bound_params import extent_lines
from .cpu_parameters import extent
from .cpu_streaming import program_threshold


def launch_call(launch, slots, pointers):
    """`call(dims, values, arguments) -> kernel | False`, what `FastCpuLaunch.__call__` does
    (see there) for `launch`, whose compiled arguments `slots` ((runtime index, None,
    converter) per slot) and `pointers` ((runtime index, None, ()) per pointer, in slot order)
    name no tuple's leaf. The launch's fields are constants of the function (they never
    change), not read through the launch, which does not hold the function in a cycle."""
    launchable = launch._launchable
    env = {
        "__launcher": launch._launcher, "__table": launch._table, "__check": launch._check,
        "__tensor": launch._tensor, "__type": type, "__extent": extent,
        "__threshold": program_threshold, "__stream_threshold": launch._stream_threshold,
        "__local": launch._local, "__pack": launch._pack, "__block": launch._block,
        "__struct_error": struct.error, "__inline_programs": launch._inline_programs,
        "__direct": launch._direct, "__program_count": launch._program_count,
        "__run": launch._run, "__entry": launchable.entry, "__scratch": launchable.scratch_bytes,
        "__sites": launchable.sites, "__kernel": launchable.kernel,
        "__launchable": launchable,  # kept: its entry stays mapped while the function lives
    }  # fmt: skip
    packed = ["gx", "gy", "gz"]
    for slot, (index, _, convert) in enumerate(slots):
        if convert is not None:
            env[f"__convert{slot}"] = convert
        packed.append(f"v{index}" if convert is None else f"__convert{slot}(v{index})")
    lines = [
        "def call(dims, values, arguments=None):",
        "    if __launcher.kernels is not __table or arguments is None:",
        "        return False",
        *(["    __check()"] if launch._check is not None else []),
        *(f"    v{i} = values[{i}]" for i in sorted({index for index, _, _ in slots})),
    ]
    for k, (index, _, _) in enumerate(pointers):
        lines += extent_lines(index, k)
        packed += [f"low{k}", f"high{k}"]
    packed.append("__threshold(__stream_threshold, n_programs)")
    lines += [
        "    gx, gy, gz = dims",
        "    n_programs = gx * gy * gz",
        "    try:  # this thread's block: the pool reads it during the launch",
        "        block = __local.block",
        "    except AttributeError:",
        "        block = __local.block = __block()",
        "    try:",
        f"        __pack(block, 0, {', '.join(packed)})",
        "    except __struct_error:  # not an int64: as ctypes converts it",
        f"        block = __block({', '.join(packed)})",
        "    if n_programs <= __inline_programs or n_programs == 1:  # small: on this thread",
        "        __direct(block, __program_count(n_programs))",
        "    else:",
        "        __run(__entry, block, n_programs, __scratch, __sites)",
        "    return __kernel",
    ]
    return define("call", "\n".join(lines) + "\n", env, "<naiad CPU launch>")
