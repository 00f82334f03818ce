"""Profiling sessions: `start`, `activate`, `deactivate`, `finalize`.

A session owns a tree (tree.py) and records into it while active: every scope entered
(scope.py) becomes a node under the session's innermost open scope, and with `hook="triton"`
every Naiad kernel launch a node under that (launch.py). An interval's marks (clock.py) are
read when the session is deactivated or finalized, or, without waiting, once many are
pending, so that recording does not synchronize a GPU per scope. Deactivating closes the
session's open scopes at that moment; a deactivated session records nothing until activated
again. `finalize` writes `<name>.hatchet` and forgets the session.

Sessions are numbered from 0 in the order started, as Proton numbers them, so that
`proton.activate(0)` names the first.
"""

from __future__ import annotations

import os

from . import clock, devices, launch
from .tree import COUNT, CPU_TIME, ROOT, Node, write

# Read pending marks (those done, without waiting) once this many are pending.
READ_EVERY = 4096
DATA_KINDS = ("tree",)
HOOKS = (None, "triton")
CONTEXTS = ("shadow", "python")


class Record:
    """An interval being timed: a scope's or a kernel launch's."""

    __slots__ = ("clock", "cpu_start", "node", "open", "parent", "start")

    def __init__(self, node, parent, cpu: bool):
        self.node, self.parent, self.open = node, parent, True
        self.clock = clock.current()
        self.cpu_start = clock.HOST.mark() if cpu else None
        self.start = self.clock.mark()


class Session:
    """One profile being recorded: its tree, its open intervals and its unread marks."""

    def __init__(self, number: int, path: str, hook):
        self.id, self.path, self.hook = number, path, hook
        self.active = True
        self.root = Node(ROOT)
        self.stack: list[Record] = []  # open scopes, innermost last
        self.kernels: list[Record] = []  # kernel launches between their hooks
        self.pending: list = []  # (node, clock, start, end), marks not read yet
        self.measured: dict = {}  # node -> ns measured over its entries
        self.device = None  # the CUDA device of the event clock, once it timed something

    def _current(self) -> Node:
        return self.stack[-1].node if self.stack else self.root

    def open_scope(self, name: str, metrics, cpu: bool = False) -> Record:
        node = self._current().child(name)
        node.add({COUNT: 1, **(metrics or {})})
        record = Record(node, None, cpu)
        self.stack.append(record)
        return record

    def open_kernel(self) -> Record:
        """A launch's interval, named when it ends (its metadata needs the compiled kernel)."""
        record = Record(None, self._current(), False)
        self.kernels.append(record)
        return record

    def restart_kernel(self) -> None:
        """The innermost launch's kernel is loaded now: time it from here, not its compile."""
        if self.kernels:
            record = self.kernels[-1]
            record.clock.release(record.start)
            record.start = record.clock.mark()

    def end_kernel(self):
        """End the innermost launch's interval now: (its record, the end's mark), or None."""
        if not self.kernels:
            return None
        record = self.kernels.pop()
        return record, record.clock.mark()

    def name_kernel(self, ended: tuple, name: str, metrics: dict) -> None:
        """File a launch `end_kernel` ended under `name` (its metadata's), with `metrics`."""
        record, end = ended
        record.node = record.parent.child(name)
        record.node.add({COUNT: 1, **metrics})
        self.close(record, end=end)

    def close(self, record: Record, metrics=None, end=None) -> None:
        """End `record`'s interval (now, or at the mark `end`), if still open, and add
        `metrics` to its node."""
        if not record.open:
            return
        record.open = False
        end = record.clock.mark() if end is None else end
        if record.cpu_start is not None:
            record.node.add({CPU_TIME: clock.HOST.mark() - record.cpu_start})
        if metrics:
            record.node.add(metrics)
        if record in self.stack:
            self.stack.remove(record)
        self.pending.append((record.node, record.clock, record.start, end))
        if len(self.pending) >= READ_EVERY:
            self.read(wait=False)

    def read(self, wait: bool) -> None:
        """Add the pending intervals' times to their nodes: all of them (waiting for the device
        where it must), or those done, in the order they ended."""
        done = 0
        for node, timer, start, end in self.pending:
            if not timer.done(end):
                if not wait:
                    break
                timer.wait(end)
            self.measured[node] = self.measured.get(node, 0) + timer.elapsed_ns(start, end)
            if timer.device is not None:
                self.device = timer.device
            timer.release(start, end)
            done += 1
        del self.pending[:done]

    def stop(self) -> None:
        """Close what is open (scopes and launches) and read every mark."""
        for record in reversed(self.stack + self.kernels):
            if record.node is not None:
                self.close(record)
        self.stack.clear()
        self.kernels.clear()
        self.read(wait=True)

    def write(self) -> None:
        table = devices.cuda_table(self.device) if self.device is not None else {}
        write(self.path, self.root, self.measured, table)


_sessions: dict[int, Session] = {}
# The active sessions, in the order started: what every scope and hooked launch records into.
active: list[Session] = []
_numbers = [0]


def start(name=None, *, context="shadow", data="tree", backend=None, mode=None, hook=None):
    """Start recording a profile, written to `<name>.hatchet` (`proton.hatchet` without a
    name) by `finalize`; returns the session's number. `backend` and `mode` choose how
    Proton reads the GPU and are accepted: every session here is timed as clock.py says."""
    _check("data", data, DATA_KINDS)
    _check("hook", hook, HOOKS)
    _check("context", context, CONTEXTS)
    path = name or "proton"
    if not os.path.splitext(path)[1]:
        path += ".hatchet"
    number = _numbers[0]
    _numbers[0] += 1
    _sessions[number] = Session(number, path, hook)
    _changed()
    return number


def _check(what: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(
            f"triton.profiler: {what}={value!r} is not supported by Naiad's profiler "
            f"(supported: {', '.join(repr(a) for a in allowed)}; see docs/compat.md)"
        )


def _chosen(session) -> list[Session]:
    if session is None:
        return list(_sessions.values())
    if session not in _sessions:
        raise ValueError(f"triton.profiler: no session {session} (started: {sorted(_sessions)})")
    return [_sessions[session]]


def activate(session=None) -> None:
    """Record into `session` (every session when None) again."""
    for chosen in _chosen(session):
        chosen.active = True
    _changed()


def deactivate(session=None, flushing=False) -> None:
    """Stop recording into `session` (every session when None): its open scopes end now and
    its times are read (`flushing` is accepted: they always are)."""
    for chosen in _chosen(session):
        if chosen.active:
            chosen.stop()
            chosen.active = False
    _changed()


def finalize(session=None, output_format="hatchet") -> None:
    """Stop `session` (every session when None), write its file and forget it."""
    _check("output_format", output_format or "hatchet", ("hatchet",))
    for chosen in _chosen(session):
        deactivate(chosen.id)
        chosen.write()
        del _sessions[chosen.id]
    _changed()


def _changed() -> None:
    """Keep `active` and the launch hooks in step with the sessions' states."""
    active[:] = [session for session in _sessions.values() if session.active]
    launch.watch([session for session in active if session.hook == "triton"])


def reset() -> None:
    """Forget every session unwritten, number from 0 again, and choose the clock again."""
    _sessions.clear()
    _numbers[0] = 0
    _changed()
    clock.reset()
