"""The text of `device_print`: one line per element, prefixed by program and element index, like
the GPU's printf output (`pid (0, 0, 0) idx (  3) x: 1.5`, backends/print_format.py)."""

from __future__ import annotations

import numpy as np

from ...backends.print_format import index_text, index_widths, operand_labels
from .memory import Pointers


def _format(value, ty, hex: bool) -> str:
    if ty.scalar.is_ptr():
        return f"{int(value):#x}"
    if hex:
        bits = np.asarray(value).reshape(1).view(f"u{np.asarray(value).dtype.itemsize}")[0]
        return f"0x{int(bits):0{2 * np.asarray(value).dtype.itemsize}x}"
    if ty.scalar.is_floating():
        return f"{float(value):f}" if np.isfinite(float(value)) else str(float(value))
    return str(int(value) if not ty.scalar.is_bool() else int(bool(value)))


def format_device_print(pid, prefix, hex, values, types):
    arrays = [v.addr if isinstance(v, Pointers) else np.asarray(v) for v in values]
    shape = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
    arrays = [np.broadcast_to(a, shape) for a in arrays]
    pid_text = ", ".join(str(p) for p in pid)
    if not arrays:
        yield f"pid ({pid_text}){prefix}"
        return
    widths = index_widths(shape)
    for label, a, ty in zip(operand_labels(len(arrays)), arrays, types):
        for index in np.ndindex(*shape):
            idx = index_text(index, widths)
            yield f"pid ({pid_text}) idx ({idx}){prefix}{label}{_format(a[index], ty, hex)}"
