"""How `device_print` writes its lines, as the GPU's printf output has them (Triton's tests
compare lines such as `pid (0, 0, 0) idx (  5) x: 5`), the same on every back end: an element's
index with each coordinate right-aligned to the digits of its dimension's last index, so that
the lines of one print line up, and several operands each on lines of their own, operand by
operand, labelled `(operand n)`."""

from __future__ import annotations


def index_widths(shape) -> list[int]:
    """The characters each coordinate of a block of `shape` takes."""
    return [len(str(max(int(size) - 1, 0))) for size in shape]


def index_text(index, widths) -> str:
    """`index` (one coordinate per dimension) as `idx (...)` holds it, with `widths`."""
    return ", ".join(f"{int(i):{w}}" for i, w in zip(index, widths))


def operand_labels(count: int) -> list[str]:
    """What precedes each operand's value: nothing for one; for several, `(operand n) `, each
    operand on lines of its own (Triton's `pid (0, 0, 0) idx (  5): (operand 1) 1`)."""
    return [""] if count <= 1 else [f"(operand {n}) " for n in range(count)]
