"""A prepared CPU launch bound to one bound launch's fixed arguments (bound_launch.py): their
slots of the parameter block converted once, and per call only the varying ones.

A bound launch passes the same grid, sizes, strides and constexprs at every call of its kind;
only its tensors (and a scalar factor) change. The prepared launch (cpu_fast_launch.py) still
did, per call, what depends only on the fixed part: the runtime values' tuple with the fixed
ones appended, each fixed integer's conversion to its 8-byte slot, the grid's program count,
its streaming threshold (cpu_streaming.program_threshold) and its thread choice; about 1 us of
a small launch's 5 on the development CPU. Here those are done once: a per-call function is
generated for the block's layout, with the fixed slots as constants, and a call packs its
thread's block from them, the varying values and the extents of the varying arrays, and runs
the grid as the prepared launch does.
"""

from __future__ import annotations

import struct
import threading
from typing import NamedTuple

from .binder import define
from .cpu_parameters import extent
from .cpu_streaming import program_threshold


class Prepared(NamedTuple):
    """What a prepared CPU launch (cpu_fast_launch.FastCpuLaunch) reads at each call, and how
    its parameter block is laid out."""

    launcher: object  # its CpuLauncher, whose table of loaded kernels it checks
    table: dict  # that table when the launch was prepared
    check: object  # the globals check, or None
    tensor: type  # torch's tensor type, or a type no argument has
    slots: tuple  # per compiled argument: (runtime index, tuple place or None, converter)
    pointers: tuple  # per pointer argument, in slot order: (runtime index, place, path)
    stream_threshold: int  # the launch's streaming threshold in bytes
    inline_programs: int  # grids of at most this many programs run on the calling thread
    pack: object  # struct's pack_into of the whole block
    new_block: type  # the block's ctypes array type
    run: object  # the pool's run
    direct: object  # its small grids' run on the calling thread (lanes.direct_launch)
    launchable: object  # the loaded kernel (its `entry` stays mapped while this lives)


def bind_parameters(launch: Prepared, fixed: dict, varying: tuple, dims):
    """`run(values, arguments) -> kernel | False` over `dims` for a bound launch whose runtime
    values at the positions in `fixed` never change (position -> value) and those at `varying`
    come, in that order, as `values`, from `arguments` (the varying arguments as given, whose
    arrays' extents each call reads). None where one cannot be made: a tuple argument, a
    pointer among the fixed values, or a fixed value that does not fit its slot. False from a
    call: the kernel was forgotten, or a varying value does not fit its slot; nothing ran."""
    if any(j is not None for _, j, _ in launch.slots):
        return None
    template = list(dims)
    values_at = []  # (slot, place among the varying values, converter or None)
    for slot, (index, _, convert) in enumerate(launch.slots, start=len(template)):
        if index in fixed:
            value = fixed[index]
            template.append(value if convert is None else convert(value))
        elif index in varying:
            template.append(0)
            values_at.append((slot, varying.index(index), convert))
        else:
            return None
    extents_at = []  # (first of the two slots of its extent, place among the varying values)
    for index, _, _ in launch.pointers:
        if index not in varying:
            return None
        extents_at.append((len(template), varying.index(index)))
        template += (0, 0)
    n_programs = dims[0] * dims[1] * dims[2]
    template.append(program_threshold(launch.stream_threshold, n_programs))
    try:
        launch.pack(launch.new_block(), 0, *template)
    except struct.error:
        return None
    return _runner(launch, template, tuple(values_at), tuple(extents_at), n_programs)


def _runner(launch: Prepared, template, values_at, extents_at, n_programs):
    """The per-call function of `bind_parameters` (see there), generated for its slots: the
    varying values unpacked, each varying array's extent read inline (`extent`, a tensor's
    case), and one pack of the block from names and constants; a loop over the slots into a
    list and the list's unpacking cost a launch of three tensors 0.6 us more."""
    launchable = launch.launchable  # held by the function: its entry stays mapped
    env = {
        "__launcher": launch.launcher, "__table": launch.table, "__check": launch.check,
        "__tensor": launch.tensor, "__local": threading.local(), "__new_block": launch.new_block,
        "__pack": launch.pack, "__struct_error": struct.error, "__extent": extent,
        "__type": type, "__kernel": launchable.kernel, "__launchable": launchable,  # (kept)
    }  # fmt: skip
    run = _grid_run(launch, n_programs, env)
    slots = [str(int(value)) for value in template]  # the fixed slots, as constants
    places = sorted({place for _, place, _ in values_at} | {place for _, place in extents_at})
    lines = [
        "def bound_run(values, arguments):",
        "    if __launcher.kernels is not __table:",
        "        return False",
        *(["    __check()"] if launch.check is not None else []),
        "    try:  # this thread's block: the pool reads it during the launch",
        "        block = __local.block",
        "    except AttributeError:",
        "        block = __local.block = __new_block()",
    ]
    for place in places:
        lines.append(f"    v{place} = values[{place}]")
    for slot, place, convert in values_at:
        if convert is not None:
            env[f"__convert{slot}"] = convert
        slots[slot] = f"v{place}" if convert is None else f"__convert{slot}(v{place})"
    for slot, place in extents_at:
        lines += extent_lines(place, slot)
        slots[slot], slots[slot + 1] = f"low{slot}", f"high{slot}"
    lines += [
        "    try:",
        f"        __pack(block, 0, {', '.join(slots)})",
        "    except __struct_error:  # the normal path converts it as ctypes does",
        "        return False",
        f"    {run}",
        "    return __kernel  # the CompiledKernel that ran",
    ]
    return define("bound_run", "\n".join(lines) + "\n", env, "<naiad bound CPU launch>")


def _grid_run(launch: Prepared, n_programs: int, env: dict) -> str:
    """The source of the call that runs the grid of `n_programs` with `block` (a small grid,
    most small ops' launches, on the calling thread by the entry call made once:
    lanes.direct_launch), its functions put in `env`."""
    if n_programs == 1 or n_programs <= launch.inline_programs:
        from ..backends.cpu.lanes import program_count  # (loaded with the kernel already)

        env["__direct"], env["__end"] = launch.direct, program_count(n_programs)
        return "__direct(block, __end)"
    launchable = launch.launchable
    env.update(__run=launch.run, __entry=launchable.entry, __scratch=launchable.scratch_bytes,
               __sites=launchable.sites)  # fmt: skip
    return f"__run(__entry, block, {n_programs}, __scratch, __sites)"


def extent_lines(place: int, slot: int) -> list[str]:
    """The source that reads the extent of the array `arguments[place]` (its address
    `v{place}`) into `low{slot}`, `high{slot}` (cpu_launch_call.py's too)."""
    return [
        f"    array = arguments[{place}]",
        "    if __type(array) is __tensor:",
        "        storage = array.untyped_storage()",
        f"        low{slot} = storage.data_ptr() - v{place}",
        f"        high{slot} = low{slot} + storage.nbytes()",
        "    else:",
        f"        low{slot}, high{slot} = __extent(array, v{place}, __tensor)",
    ]
