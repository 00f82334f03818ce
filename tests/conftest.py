"""Test-wide settings: GPU tests are skipped where no NVIDIA GPU is present, and kernels run in
the interpreter unless a test chooses a back end (tests/language and tests/examples run each test
on both; tests/backends and tests/differential name theirs), and a CPU launch always waits for
its compiled kernel (no tiered execution). The interpreter checks every access,
so tests that make a kernel go out of bounds on purpose stay safe. Compiled kernels are cached in
a directory of the run (removed at its end) unless NAIAD_CACHE_DIR says otherwise; a test that
needs an empty cache of its own takes `fresh_cache` (`cpu_fresh_cache` to compile for the CPU
too). A parametrized hypothesis test starts every invocation from the settings it was declared
with."""

import os
import shutil
import sys
import tempfile

import pytest

_TEMPORARY_CACHE = []


def pytest_configure(config):
    os.environ.setdefault("NAIAD_BACKEND", "interpreter")
    # Launches on the CPU run compiled from the first: the tests compare that code with the
    # interpreter (tests/runtime/test_cpu_tiering.py tests tiering itself).
    os.environ.setdefault("NAIAD_CPU_TIERING", "always-compile")
    # The same CPU code on every machine: bf16 and int8 dots keep their vector paths, whose
    # values tests compare bit for bit; tests/backends/cpu/test_matmul_amx.py asks for AMX.
    os.environ.setdefault("NAIAD_CPU_AMX", "0")
    if "NAIAD_CACHE_DIR" not in os.environ:  # compiled kernels go to a cache of this run only
        directory = tempfile.mkdtemp(prefix="naiad-test-cache-")
        os.environ["NAIAD_CACHE_DIR"] = directory
        _TEMPORARY_CACHE.append(directory)


def pytest_unconfigure(config):
    for directory in _TEMPORARY_CACHE:
        shutil.rmtree(directory, ignore_errors=True)


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _hypothesis_settings_as_declared(request):
    """Each invocation of a parametrized hypothesis test starts from the settings it was
    declared with. Hypothesis' pytest plugin wraps them in a new child at every invocation (to
    relax one health check), so the chain grows with the parametrization: past about a
    thousand cases of one function in one process (the full tier's binary-operator matrix),
    reading a setting walks the whole chain and overflows the stack."""
    fn = getattr(request.function, "__func__", request.function)
    declared = getattr(fn, "_hypothesis_internal_use_settings", None)
    if declared is not None:
        fn._hypothesis_internal_use_settings = fn.__dict__.setdefault(
            "_naiad_declared_hypothesis_settings", declared
        )


@pytest.fixture
def fresh_cache(tmp_path):
    """An empty compile cache of the test's own, tmp_path / "cache" (yielded): for tests that
    count compiles, read what a compile stored, or must not load an object compiled under other
    settings. The process's disk cache object is made again on both sides, so nothing it
    remembers of one directory outlives the test. (Naiad is imported inside the fixtures: this
    file is imported before its pytest_configure sets the run's environment, and nothing of
    Naiad should load before that.)"""
    from naiad import knobs
    from naiad.runtime import compiler

    directory = tmp_path / "cache"
    with knobs.override(NAIAD_CACHE_DIR=str(directory)):
        compiler._cache = None
        yield directory
        tiering = sys.modules.get("naiad.runtime.cpu_tiering")
        if tiering is not None:  # a tiered launch's compile stores into the cache of its end
            tiering.settled()
    compiler._cache = None


@pytest.fixture
def cpu_fresh_cache(fresh_cache):
    """Launches compile for this machine's CPU, into `fresh_cache` (yielded)."""
    from naiad import knobs

    with knobs.override(NAIAD_BACKEND="cpu"):
        yield fresh_cache
