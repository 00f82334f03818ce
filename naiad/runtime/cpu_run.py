"""Running a loaded CPU kernel over a grid on host arrays: their data addresses, the check of
read-only arrays against the kernel's stores, and the hand-over to the worker pool. The
launcher (cpu_launcher.py) and IR-file launches (ir_file_launch.py) share it."""

from __future__ import annotations

from .cpu_parameters import pack_parameters
from .cpu_streaming import program_threshold
from .host_arrays import describe, is_array_like
from .tensor_descriptor import TensorDescriptor


def run_launchable(launchable, arguments: dict, grid, pointers, name: str):
    """Run `launchable` over `grid` on the worker pool with `arguments` by name, whose arrays'
    `pointers` are `host_pointers(arguments)`; a read-only array the kernel `name` stores
    through is an error."""
    from ..backends.cpu import pool

    addresses, read_only = pointers
    for array in read_only & launchable.written:
        raise ValueError(f"argument `{array}` is read-only, and `{name}` stores through it")
    n_programs = grid[0] * grid[1] * grid[2]
    stream = program_threshold(launchable.stream_threshold, n_programs)
    params = pack_parameters(launchable.arguments, arguments, grid, addresses, stream)
    threads = 1 if n_programs <= launchable.inline_programs else None
    pool.run(
        launchable.entry, params, n_programs, launchable.scratch_bytes, launchable.sites, threads
    )


def host_pointers(arguments: dict):
    """The data address of every array argument (tuples spread), and the names of the
    read-only ones; None when an array is not in host memory."""
    addresses, read_only = {}, set()
    for name, value in arguments.items():
        if not is_array_like(value) or isinstance(value, TensorDescriptor):
            continue
        array = describe(value)
        if array.device != "cpu":
            return None
        addresses[name] = array.data_ptr
        if not array.writable:
            read_only.add(name)
    return addresses, read_only
