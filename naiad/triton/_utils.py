"""`triton._utils`: the helpers over nested arguments (tuples of tensors, of tuples ...) that
libraries building an ASTSource themselves import from Triton (torch's wrap_triton)."""

from __future__ import annotations


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
