"""`triton._utils`: the helpers over nested arguments (tuples of tensors, of tuples ...) that
libraries building an ASTSource themselves import from Triton (torch's wrap_triton), and the
block-shape checks of the language (`is_power_of_two`, `validate_block_shape`)."""

from __future__ import annotations

from ..language.core import TRITON_MAX_TENSOR_NUMEL
from ..language.semantic.values import block_numel, is_power_of_two  # noqa: F401


def validate_block_shape(shape) -> int:
    """The elements of a block of `shape` (each dimension an int power of 2, at most
    TRITON_MAX_TENSOR_NUMEL in all), as the language checks a block's shape."""
    return block_numel(shape, TRITON_MAX_TENSOR_NUMEL)


def find_paths_if(iterable, pred) -> list[tuple]:
    """The index paths, in order, of the leaves of nested lists and tuples `iterable` for which
    `pred(path, leaf)` holds (a leaf that is not a list or tuple at the top is path `()`)."""
    found = []

    def visit(path, value):
        if isinstance(value, list | tuple):
            for index, item in enumerate(value):
                visit((*path, index), item)
        elif pred(path, value):
            found.append(path)

    visit((), iterable)
    return found


def get_iterable_path(iterable, path):
    """The element of nested lists and tuples `iterable` at index path `path`."""
    for index in path:
        iterable = iterable[index]
    return iterable
