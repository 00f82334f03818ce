"""Pausing Python's cyclic garbage collector while the printer or parser runs.

Parsing a module allocates tens of thousands of objects that all stay alive (ops, values,
locations), and the IR is full of reference cycles (op <-> block <-> region), so the collector
runs over and over and frees nothing: it took a third to a half of the parser's time on a
10,000-op module. The previous state is restored on exit, collections resume afterwards.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
