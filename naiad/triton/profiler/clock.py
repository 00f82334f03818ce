"""How a profile's intervals are timed: CUDA events on the current stream where the program's
work is on a CUDA device through torch, the host's clock elsewhere.

A scope or kernel launch marks its start and its end; the marks are read later (`Clock.done`,
`Clock.wait`, `Clock.elapsed_ns`), so that profiling does not synchronize the device once per
scope: on a GPU an event is only a point in the stream's queue, and the time between two is the
device's time for the work queued between them. The event clock is chosen once torch has
initialized CUDA in this process, as `do_bench` chooses (runtime/bench.py); Naiad's CUDA driver
wrapper has no events of its own, so a GPU program without torch is timed on the host, where a
launch returns when its work is queued, not done (docs/compat.md).
"""

from __future__ import annotations

import sys
from time import perf_counter_ns


class HostClock:
    """Wall time: a mark is `perf_counter_ns()`, read at once."""

    device = None  # no device: what the profile's device table leaves out

    @staticmethod
    def mark() -> int:
        return perf_counter_ns()

    @staticmethod
    def done(end) -> bool:
        return True

    @staticmethod
    def wait(end) -> None:
        """Nothing is in flight on the host."""

    @staticmethod
    def elapsed_ns(start, end) -> int:
        return end - start

    @staticmethod
    def release(*marks) -> None:
        """Host marks are numbers: nothing to give back."""


class EventClock:
    """CUDA events (torch.cuda.Event) recorded on the current stream. Events are reused once
    read: a profile of many launches makes few."""

    def __init__(self, torch):
        self.cuda = torch.cuda
        self.device = torch.cuda.current_device()
        self._free: list = []

    def mark(self):
        event = self._free.pop() if self._free else self.cuda.Event(enable_timing=True)
        event.record()
        return event

    @staticmethod
    def done(end) -> bool:
        return end.query()

    @staticmethod
    def wait(end) -> None:
        end.synchronize()

    @staticmethod
    def elapsed_ns(start, end) -> int:
        return round(start.elapsed_time(end) * 1e6)  # elapsed_time is in milliseconds

    def release(self, *events) -> None:
        self._free.extend(events)


HOST = HostClock()
_events: list = []  # the event clock, made once CUDA is in use (reset() forgets it)


def current() -> HostClock | EventClock:
    """The clock for an interval starting now: CUDA events once torch has initialized CUDA."""
    if _events:
        return _events[0]
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        _events.append(EventClock(torch))
        return _events[0]
    return HOST


def reset() -> None:
    """Choose the clock again (tests; a process that reinitialized CUDA)."""
    _events.clear()
