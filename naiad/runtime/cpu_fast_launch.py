"""A CPU specialization's launch on the hot path (`FastCpuLaunch`): the binder's launch values
(binder.py) packed into the parameter block (cpu_parameters.py) and the grid run on the pool.

Apart from the launcher (cpu_launcher.py), which compiles, loads and runs the slow path, because
this is the code every launch after the first runs: it is written for speed (a block packed in
place per thread, the common extents read inline), and reads best alone.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from typing import TYPE_CHECKING

import numpy as np

from .binder import tensor_type
from .cpu_bound_params import Prepared, bind_parameters
from .cpu_launch_call import launch_call
from .cpu_parameters import extent, slot_converter
from .cpu_streaming import program_threshold
from .globals_check import globals_checker
from .tuple_arguments import is_tuple, leaves

if TYPE_CHECKING:
    from .cpu_launcher import CpuLaunchable, CpuLauncher


class FastCpuLaunch:
    """A CPU specialization's launch on the hot path (jit.py): the binder's launch values
    (binder.py) become the parameter block of abi.py, and the grid runs on the pool. It lives
    as long as its launcher's table of loaded kernels (`CpuLauncher.forget` replaces it, so
    the next launch takes the slow path and loads them again), and checks the kernel's
    globals at every launch. It holds its kernel (`_launchable`, which
    holds the loaded object): the code it calls stays mapped while anyone can call it, even
    when another thread drops the table, or the table's entry, between the check and the run.
    It reads the extent of each array argument at every launch (`extent`), from the arguments
    as given. Debug launches are never prepared: they run seldom, and should stay simple."""

    __slots__ = (
        "_block",
        "_call",
        "_check",
        "_direct",
        "_entry",
        "_inline_programs",
        "_launchable",
        "_launcher",
        "_local",
        "_pack",
        "_pointers",
        "_program_count",
        "_run",
        "_scratch",
        "_select",
        "_sites",
        "_slots",
        "_stream_threshold",
        "_table",
        "_tensor",
    )

    def __init__(self, launcher: CpuLauncher, launchable: CpuLaunchable, places, select, pointers):
        from ..backends.cpu import lanes, pool

        jit_function = launcher.jit_function
        self._launcher = launcher
        self._table = launcher.kernels
        self._check = globals_checker(jit_function, launchable.globals_used)
        slots = 3 + len(launchable.arguments) + 2 * len(pointers) + 1
        self._block = ctypes.c_int64 * slots
        self._pack = struct.Struct(f"={slots}q").pack_into  # native: the kernel reads it
        self._local = threading.local()
        # per pointer argument, in slot order: its runtime index, and for a tuple's leaf its
        # place among the tuple's launch values and its path in the tuple
        self._pointers = pointers
        self._slots = tuple(places)  # per compiled argument: (runtime index, place, converter)
        self._tensor = tensor_type()
        self._stream_threshold = launchable.stream_threshold
        self._select = select
        self._run = pool.run
        self._direct = lanes.direct_launch(
            launchable.entry, launchable.scratch_bytes, launchable.sites
        )
        self._program_count = lanes.program_count
        self._entry = launchable.entry
        self._launchable = launchable  # keeps `_entry` mapped
        self._scratch = launchable.scratch_bytes
        self._sites = launchable.sites
        self._inline_programs = launchable.inline_programs
        self._call = None
        if all(j is None for _, j, _ in places):
            self._call = launch_call(self, places, pointers)

    @classmethod
    def prepare(cls, launcher: CpuLauncher, launchable: CpuLaunchable):
        """The launch of `launchable`, or None when one of its arguments is not a launch value
        of the binder (the parts of a tensor descriptor)."""
        places = _places(launcher.jit_function, launchable.kernel.metadata["signature"])
        slots, pointers = [], []
        for name, kind in launchable.arguments:
            if name not in places:
                return None
            i, j, path, annotation = places[name]
            slots.append((i, j, slot_converter(kind, annotation)))
            if kind == "ptr":
                pointers.append((i, j, path))
        if all(j is None for _, j, _ in slots):
            runtime_count = len({place[0] for place in places.values()})
            identity = [i for i, _, _ in slots] == list(range(runtime_count))
            if identity and not any(convert for _, _, convert in slots):
                return cls(launcher, launchable, slots, None, pointers)
            converters = [(i, convert) for i, _, convert in slots]

            def select(values):
                return [values[i] if c is None else c(values[i]) for i, c in converters]

        else:

            def select(values):
                picked = []
                for i, j, convert in slots:
                    value = values[i] if j is None else values[i][j]
                    picked.append(value if convert is None else convert(value))
                return picked

        return cls(launcher, launchable, slots, select, pointers)

    def __call__(self, dims, values, arguments=None):
        """Run over `dims` (three sizes) with the binder's `values` and the `arguments` they
        come from (binder.py); return the CompiledKernel, or False (nothing run) when the kernel
        has been forgotten since it was prepared, or no arguments give the arrays' extents.
        A launch without tuple arguments runs its generated function (cpu_launch_call.py)."""
        if self._call is not None:
            return self._call(dims, values, arguments)
        if self._launcher.kernels is not self._table or arguments is None:
            return False
        if self._check is not None:
            self._check()
        extents = []
        tensor = self._tensor
        for i, j, path in self._pointers:  # `extent`, its two common cases inline (per launch)
            value, address = arguments[i], values[i]
            if j is not None:  # a tuple's leaf
                address = address[j]
                for k in path:
                    value = value[k]
            kind = type(value)
            if kind is np.ndarray and value.base is None:
                extents += (0, value.nbytes)
            elif kind is tensor:
                storage = value.untyped_storage()
                low = storage.data_ptr() - address
                extents += (low, low + storage.nbytes())
            else:
                extents += extent(value, address, tensor)
        if self._select is not None:
            values = self._select(values)
        n_programs = dims[0] * dims[1] * dims[2]
        stream = program_threshold(self._stream_threshold, n_programs)
        block = self._block_of_this_thread()
        try:  # one pack into a block made once per thread: 3x faster than a new ctypes array
            self._pack(block, 0, dims[0], dims[1], dims[2], *values, *extents, stream)
        except struct.error:  # not an int64 (an unsigned one past 2**63): as ctypes converts it
            block = self._block(dims[0], dims[1], dims[2], *values, *extents, stream)
        if n_programs <= self._inline_programs or n_programs == 1:  # small: on this thread
            self._direct(block, self._program_count(n_programs))
        else:
            self._run(self._entry, block, n_programs, self._scratch, self._sites)
        return self._launchable.kernel  # the CompiledKernel that ran: what a launch returns

    def bind(self, fixed: dict, varying: tuple, dims):
        """This launch bound to a bound launch's fixed runtime values (bound_launch.py), or
        None: cpu_bound_params.bind_parameters."""
        prepared = Prepared(
            self._launcher, self._table, self._check, self._tensor, self._slots,
            tuple(self._pointers), self._stream_threshold, self._inline_programs, self._pack,
            self._block, self._run, self._direct, self._launchable,
        )  # fmt: skip
        return bind_parameters(prepared, fixed, varying, dims)

    def _block_of_this_thread(self):
        """This thread's parameter block: the pool reads it during the launch, which another
        thread's launch must not overwrite."""
        try:
            return self._local.block
        except AttributeError:
            block = self._local.block = self._block()
            return block


def _places(jit_function, signature: dict) -> dict:
    """Where the binder puts each argument of the compiled function (by name): (runtime index,
    place among a tuple's flat launch values or None, path of indices in the tuple, declared
    type). A tuple argument's leaves are named by their paths (tuple_arguments.py)."""
    places = {}
    runtime = [p for p in jit_function.params if not p.is_constexpr]
    for i, param in enumerate(runtime):
        spec = signature.get(param.name)
        if not is_tuple(spec):
            places[param.name] = (i, None, (), param.annotation)
            continue
        for j, (path, _) in enumerate(leaves(param.name, spec)):
            steps = tuple(int(k) for k in path[len(param.name) + 1 :].split("."))
            places[path] = (i, j, steps, None)
    return places
