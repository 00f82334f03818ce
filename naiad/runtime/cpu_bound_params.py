"""A prepared CPU launch bound to one bound launch's fixed arguments (bound_launch.py): their
slots of the parameter block converted once, and per call only the varying ones.

A bound launch passes the same grid, sizes, strides and constexprs at every call of its kind;
only its tensors (and a scalar factor) change. The prepared launch (cpu_fast_launch.py) still
did, per call, what depends only on the fixed part: the runtime values' tuple with the fixed
ones appended, each fixed integer's conversion to its 8-byte slot, the grid's program count,
its streaming threshold (cpu_streaming.program_threshold) and its thread choice; about 1 us of
a small launch's 5 on the development CPU. Here those are done once: each thread keeps a list
of the block's slots with the fixed ones in place, and a call writes the varying values and
the extents of the varying arrays into it, packs it and runs the grid on the pool, as the
prepared launch does.
"""

from __future__ import annotations

import struct
import threading
from typing import NamedTuple

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
    one_program: object  # its grid of one program run (the pool's one_program)
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
    threads = 1 if n_programs <= launch.inline_programs else None
    return _runner(launch, template, tuple(values_at), tuple(extents_at), n_programs, threads)


def _runner(launch: Prepared, template, values_at, extents_at, n_programs, threads):
    """The per-call function of `bind_parameters` (see there)."""
    launcher, table, check, tensor = launch.launcher, launch.table, launch.check, launch.tensor
    pack, run = launch.pack, launch.run
    launchable = launch.launchable  # held by the closure: its entry stays mapped
    entry, scratch, sites = launchable.entry, launchable.scratch_bytes, launchable.sites
    local = threading.local()
    if n_programs == 1:  # most small ops' launches
        go = launch.one_program
    else:

        def go(block):
            run(entry, block, n_programs, scratch, sites, threads)

    def bound_run(values, arguments):
        if launcher.kernels is not table:
            return False
        if check is not None:
            check()
        try:  # this thread's block and slots: the pool reads the block during the launch
            block, slots = local.state
        except AttributeError:
            block, slots = local.state = (launch.new_block(), list(template))
        for slot, place, convert in values_at:
            value = values[place]
            slots[slot] = value if convert is None else convert(value)
        for slot, place in extents_at:  # `extent`, a tensor's case inline (per launch)
            value, address = arguments[place], values[place]
            if type(value) is tensor:
                storage = value.untyped_storage()
                low = storage.data_ptr() - address
                slots[slot], slots[slot + 1] = low, low + storage.nbytes()
            else:
                slots[slot], slots[slot + 1] = extent(value, address, tensor)
        try:
            pack(block, 0, *slots)
        except struct.error:  # the normal path converts it as ctypes does
            return False
        go(block)
        return launchable.kernel  # the CompiledKernel that ran

    return bound_run
