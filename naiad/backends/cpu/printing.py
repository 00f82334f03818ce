"""`device_print` on the CPU: compiled code calls back into Python to print, so the text goes
to `sys.stdout` like the interpreter's (tests capture it, and it interleaves with Python's own
output in order).

A print in compiled code gathers the printed elements into a block of 8-byte slots (integers
widened by their signedness, floats as f64 bits, or every value's raw bits for `hex`, pointers as
addresses) and calls

    void naiad_device_print(const char *site, i32 pid_x, i32 pid_y, i32 pid_z, const i64 *slots)

(a kernel that prints runs its programs on one thread, in order, as the interpreter does), where
`site` is a JSON description the module holds as a constant string: the prefix, `hex`,
each value's kind (`i32`, `f16`, `i1`, `ptr`, ...) and signedness, and the block's shape. The
lines are the interpreter's (naiad/runtime/interpreter/printing.py):
`pid (x, y, z) idx (i, j){prefix}{value}, {value}`.
"""

from __future__ import annotations

import ctypes
import functools
import json
import sys

import numpy as np

from ..print_format import index_text, index_widths, operand_labels

CALLBACK = ctypes.CFUNCTYPE(
    None, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p
)
SYMBOL = "naiad_device_print"


@functools.cache
def _site(text: bytes) -> dict:
    return json.loads(text.decode())


def _value(slot: int, kind: str, signed: bool, hex_bits: bool) -> str:
    if kind == "ptr":
        return f"{slot & ((1 << 64) - 1):#x}"
    width = 1 if kind == "i1" else int("".join(ch for ch in kind if ch.isdigit())[:2] or 64)
    if hex_bits:
        bits = slot & ((1 << max(width, 8)) - 1) if kind != "i1" else slot & 1
        return f"0x{bits:0{max(width, 8) // 4}x}"
    if kind == "i1":
        return str(slot & 1)
    if kind.startswith("i"):
        value = slot & ((1 << width) - 1)
        if signed and value >> (width - 1):
            value -= 1 << width
        return str(value)
    value = float(np.int64(slot).view(np.float64))
    return f"{value:f}" if np.isfinite(value) else str(value)


def format_print(site: dict, pid, slots) -> list[str]:
    """The lines of one print of one program."""
    pid_text = ", ".join(str(p) for p in pid)
    kinds = site["kinds"]
    if not kinds:
        return [f"pid ({pid_text}){site['prefix']}"]
    shape = site["shape"]
    widths = index_widths(shape)
    count = len(kinds)
    lines = []
    for n, label in enumerate(operand_labels(count)):
        kind, signed = kinds[n], bool(site["signed"][n])
        for e, index in enumerate(np.ndindex(*shape)):
            value = _value(int(slots[e * count + n]), kind, signed, site["hex"])
            lines.append(
                f"pid ({pid_text}) idx ({index_text(index, widths)}){site['prefix']}{label}{value}"
            )
    return lines


def _print(site_text, pid_x, pid_y, pid_z, slots_address) -> None:
    site = _site(site_text)
    count = max(1, int(np.prod(site["shape"], dtype=np.int64))) * len(site["kinds"])
    slots = (
        np.ctypeslib.as_array((ctypes.c_int64 * count).from_address(slots_address)) if count else []
    )
    sys.stdout.write(
        "".join(line + "\n" for line in format_print(site, (pid_x, pid_y, pid_z), slots))
    )
    sys.stdout.flush()


_callback = CALLBACK(_print)  # alive for the process: compiled kernels hold its address


def callback_address() -> int:
    return ctypes.cast(_callback, ctypes.c_void_p).value
