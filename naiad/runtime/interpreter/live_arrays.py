"""Host arrays alive in the process, for pointers made from integers that no argument holds.

A Triton program may pass a kernel a table of addresses (`x.data_ptr()` of several tensors, a
grouped GEMM's operands) and not the tensors themselves: the kernel loads an address, makes it a
pointer (`tl.load(table + g).to(tl.pointer_type(tl.float16))`) and reads through it. The
interpreter checks every access against storage it knows, so for such a pointer it looks for
the arrays that are alive now: NumPy arrays and torch CPU tensors that Python objects refer to
(found through the garbage collector's containers, and the local variables of the running
frames). An address inside one of them is checked against that array's storage, as an
argument's would be; an address inside none is still an error (the interpreter never touches
memory that no array owns). The search runs at most once per launch, when an access first
addresses memory that no argument holds.
"""

from __future__ import annotations

import gc
import sys

import numpy as np

from ..host_arrays import HostArray, describe


def live_host_arrays() -> list[HostArray]:
    """Every host array found alive, one per storage (the largest view of it)."""
    found: dict[int, HostArray] = {}
    for candidate in _candidates():
        try:
            array = describe(candidate)
        except (TypeError, ValueError, RuntimeError):
            continue
        if array.device != "cpu" or array.storage_base == 0:
            continue
        known = found.get(array.storage_base)
        if known is None or known.storage_nbytes < array.storage_nbytes:
            found[array.storage_base] = array
    return list(found.values())


def _candidates() -> list:
    objects = gc.get_objects()
    referents = gc.get_referents(*objects)
    frame = sys._getframe(1)
    while frame is not None:
        referents.extend(frame.f_locals.values())
        frame = frame.f_back
    # By type, not isinstance: some module objects warn when their `__class__` is read.
    arrays = [o for o in referents if issubclass(type(o), np.ndarray)]
    torch = sys.modules.get("torch")
    if torch is not None:
        tensor = torch.Tensor
        arrays += [o for o in objects if issubclass(type(o), tensor)]
        arrays += [o for o in referents if issubclass(type(o), tensor)]
    return arrays


def describe_live(array: HostArray) -> str:
    """How an error names a live array: its element type, size and address."""
    count = array.storage_nbytes // array.itemsize
    return f"<live array of {count} {array.dtype} at {array.storage_base:#x}>"
