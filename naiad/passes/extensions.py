"""Passes users add to the JIT's pipelines, process-wide or for one kernel.

    naiad.add_pass("my-pass", pipeline="ttir", after="canonicalize")            # every kernel
    naiad.add_pass(MyPass(factor=2), pipeline="ttgir", before="coalesce", kernel=my_kernel)
    with naiad.added_pass("my-pass"): ...                                       # for a block

A pipeline is one of `PIPELINES`: the TTIR pipeline every target runs, and the pass lists each
back end's stages run (the CPU back end's `linalg` and `cpu`, the NVIDIA one's `ttgir` and
`llir`). A pass goes before or after the first pass of that name in the pipeline (a ValueError
names the pipeline's passes when there is none), or at its end. What is added is part of the
cache key of every kernel it applies to — its name, options and the source of its class — so a
kernel compiled with a pass is never served from an entry compiled without it, and editing the
pass compiles again. Adding or removing a pass makes launches compile again
(`ir.passes.pipeline_listeners`).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..ir.passes import Pass, pass_class, pipeline_listeners

PIPELINES = ("ttir", "linalg", "cpu", "ttgir", "llir")


@dataclass(frozen=True, eq=False)
class Insertion:
    """One added pass: where it goes, and for which kernel (None: every kernel)."""

    pipeline: str
    pass_: Pass
    before: str | None = None
    after: str | None = None
    kernel: object | None = None

    def fingerprint(self) -> list:
        """What of it enters the cache key: the place, the pass with its options, and a hash
        of its class's source (an edited pass compiles again)."""
        cls = type(self.pass_)
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):  # defined where no source is kept (an exec'd string)
            source = cls.__qualname__
        digest = hashlib.sha256(source.encode()).hexdigest()
        return [self.pipeline, self.before, self.after, repr(self.pass_), digest]


_insertions: list[Insertion] = []


def add_pass(
    pass_: str | Pass,
    *,
    pipeline: str = "ttir",
    before: str | None = None,
    after: str | None = None,
    kernel=None,
) -> Insertion:
    """Add `pass_` (a registered name or a Pass object) to `pipeline`, before or after the first
    pass named `before`/`after` (neither: at the end), for `kernel` only (a `@naiad.jit`
    function) or for every kernel. Returns the insertion, for `remove_pass`."""
    if pipeline not in PIPELINES:
        raise ValueError(f"unknown pipeline {pipeline!r}; the pipelines are {', '.join(PIPELINES)}")
    if before is not None and after is not None:
        raise ValueError("give `before` or `after`, not both")
    instance = pass_class(pass_)() if isinstance(pass_, str) else pass_
    if not isinstance(instance, Pass):
        raise TypeError(f"expected a pass name or a Pass object, got {type(pass_).__name__}")
    insertion = Insertion(pipeline, instance, before, after, kernel)
    _insertions.append(insertion)
    _changed()
    return insertion


def remove_pass(insertion: Insertion) -> None:
    """Take back what `add_pass` returned (nothing happens when it is already gone)."""
    if insertion in _insertions:
        _insertions.remove(insertion)
        _changed()


@contextlib.contextmanager
def added_pass(pass_: str | Pass, **where):
    """`add_pass` for the duration of a `with` block."""
    insertion = add_pass(pass_, **where)
    try:
        yield insertion
    finally:
        remove_pass(insertion)


def insertions_for(kernel) -> tuple[Insertion, ...]:
    """The insertions that apply to `kernel`: process-wide ones and its own, in order."""
    return tuple(i for i in _insertions if i.kernel is None or i.kernel is kernel)


def extend(pipeline: str, passes: Iterable, insertions: Sequence[Insertion]) -> list:
    """`passes` (names or Pass objects) with the `insertions` for `pipeline` put in place."""
    result = list(passes)
    for insertion in insertions:
        if insertion.pipeline != pipeline:
            continue
        anchor = insertion.before or insertion.after
        if anchor is None:
            result.append(insertion.pass_)
            continue
        names = [p if isinstance(p, str) else p.name for p in result]
        if anchor not in names:
            raise ValueError(
                f"no pass {anchor!r} in the {pipeline} pipeline to add "
                f"{insertion.pass_.name!r} next to; it runs: {', '.join(names)}"
            )
        at = names.index(anchor) + (1 if insertion.after else 0)
        result.insert(at, insertion.pass_)
    return result


def _changed() -> None:
    for listener in list(pipeline_listeners):
        listener()
