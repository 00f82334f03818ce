"""young_gc.py: while a launch takes its slow path or a kernel compiles, the cyclic collector
collects only its young generations; the region's end restores the thresholds and collects the
young generations, so the garbage the region made is freed there (issue 18: full collections
took 17-200 ms each in the middle of compiles and of a cached kernel's first launch)."""

import gc
import json
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.runtime import young_gc
from naiad.runtime.young_gc import young_collections_only

pytestmark = pytest.mark.skipif(not young_gc.APPLIES, reason="CPython's generational collector")


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self):
        self.me = self


@pytest.fixture
def thresholds():
    """The test's own thresholds, the collector on; the program's put back afterwards."""
    before, enabled = gc.get_threshold(), gc.isenabled()
    gc.enable()
    yield
    gc.set_threshold(*before)
    (gc.enable if enabled else gc.disable)()


@pytest.fixture
def old_collections():
    """The generations of the collections made meanwhile that reached the old generation."""
    seen = []

    def watch(phase, info):
        if phase == "start" and info["generation"] == 2:
            seen.append(info["generation"])

    gc.callbacks.append(watch)
    yield seen
    gc.callbacks.remove(watch)


def test_the_older_thresholds_are_held_until_the_outermost_region_ends(thresholds):
    gc.set_threshold(613, 7, 9)
    with young_collections_only():
        assert gc.get_threshold() == (613, young_gc.HELD, young_gc.HELD)
        with young_collections_only():
            pass
        assert gc.get_threshold() == (613, young_gc.HELD, young_gc.HELD)
    assert gc.get_threshold() == (613, 7, 9)


def test_a_cycle_made_in_the_region_is_freed_at_its_end(thresholds):
    with young_collections_only():
        node = Node()
        alive = weakref.ref(node)
        del node
        assert alive() is not None  # a cycle: refcounting alone does not free it
    assert alive() is None


def test_a_threshold_the_program_sets_meanwhile_is_kept(thresholds):
    gc.set_threshold(700, 10, 10)
    with young_collections_only():
        gc.set_threshold(345, 6, 7)
    assert gc.get_threshold() == (345, 6, 7)


def test_with_the_collector_off_the_end_collects_nothing(thresholds):
    gc.disable()
    with young_collections_only():
        node = Node()
        alive = weakref.ref(node)
        del node
    assert alive() is not None and not gc.isenabled()
    gc.enable()
    gc.collect()
    assert alive() is None


def test_after_many_regions_without_a_full_collection_one_is_made(thresholds, old_collections):
    gc.set_threshold(1 << 20, 10, 10)  # no automatic collection between the regions
    gc.collect()  # counts from a full collection
    old_collections.clear()
    for _ in range(young_gc.FULL_EVERY - 1):
        with young_collections_only():
            pass
    assert old_collections == []
    with young_collections_only():
        pass
    assert old_collections == [2]


FORK = """
import gc, json, os, threading
from naiad.runtime import young_gc

gc.set_threshold(700, 10, 10)
inside, release = threading.Event(), threading.Event()

def in_a_region():
    with young_gc.young_collections_only():
        inside.set()
        release.wait()

thread = threading.Thread(target=in_a_region)
thread.start()
inside.wait()
held = gc.get_threshold()
pid = os.fork()
if pid == 0:  # the thread in its region is not here
    ok = gc.get_threshold() == (700, 10, 10)
    with young_gc.young_collections_only():
        ok = ok and gc.get_threshold() == (700, young_gc.HELD, young_gc.HELD)
    os._exit(0 if ok and gc.get_threshold() == (700, 10, 10) else 1)
_, status = os.waitpid(pid, 0)
release.set()
thread.join()
print(json.dumps([held, os.waitstatus_to_exitcode(status), gc.get_threshold()]))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_child_forgets_the_regions_of_threads_it_has_not():
    """A region open in another thread at a fork never ends in the child: the child's
    thresholds are the program's, and its own regions hold and restore them (a subprocess:
    it forks with a thread running)."""
    done = subprocess.run([sys.executable, "-c", FORK], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    held, child, after = json.loads(done.stdout)
    assert held == [700, young_gc.HELD, young_gc.HELD]
    assert child == 0
    assert after == [700, 10, 10]


@naiad.jit
def _scale(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


def test_every_collection_during_a_compile_is_a_young_one(thresholds, cpu_fresh_cache):
    """The first launch (a compile) runs with the older generations held: the collections
    meanwhile are young ones, then the region's end collects the young generations under the
    program's thresholds again; the kernel's values are NumPy's."""
    x = np.random.default_rng(7).standard_normal(1000).astype(np.float32)
    out = np.full_like(x, np.nan)
    seen = []

    def watch(phase, info):
        if phase == "start":
            seen.append((info["generation"], gc.get_threshold()[1:]))

    gc.set_threshold(50, 1, 1)  # a collection every 50 allocations
    gc.callbacks.append(watch)
    try:
        _scale[(4,)](x, out, x.size, 1.5, BLOCK=256)
    finally:
        gc.callbacks.remove(watch)
    assert gc.get_threshold() == (50, 1, 1)
    gc.set_threshold(700, 10, 10)
    np.testing.assert_allclose(out, x * np.float32(1.5), rtol=1e-6)
    held = [generation for generation, older in seen if older == (young_gc.HELD,) * 2]
    assert len(held) > 100 and set(held) == {0}  # (the binder's, before the slow path: not)
    assert seen[-1] == (1, (1, 1))  # the region's end, its thresholds put back
