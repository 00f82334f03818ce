"""Back ends by target name (backends/registry.py): the package's own are found by prefix, and
a third one plugs in from outside the package — registered by hand or through the
`naiad.backends` entry-point group — without touching the runtime. The one here stops at LLVM
IR (the CPU back end's first two stages): `warmup(target="llir")` compiles for it, through the
same trip and disk cache as every other target."""

import importlib.metadata
import sys
import types

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.backends import registry
from naiad.backends.cpu import compiler as cpu_compiler
from naiad.backends.cpu.target import cpu_target
from naiad.language.target import CUDA_HOPPER
from naiad.runtime import compiler


@naiad.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)


class LlvmIrOnly(registry.Backend):
    """A back end of its own: host LLVM IR and nothing after it; it launches nothing."""

    name = "llir-only"
    prefixes = ("llir",)

    def parse_target(self, name):
        if name != "llir":
            raise ValueError(f"unknown target {name!r}")
        return cpu_target("cpu")

    def language_target(self, target, options):
        return CUDA_HOPPER.with_options(name="llir", backend="cpu", arch=0, debug=options.debug)

    def stages(self, target, options):
        return list(cpu_compiler.STAGES[:3])  # ttgir, linalg, llir

    def cache_facts(self, target, options):
        return {"triple": target.triple, "debug": options.debug}


@pytest.fixture
def llir_backend(fresh_cache):
    backend = registry.register_backend(LlvmIrOnly())
    yield backend
    registry.unregister_backend(backend.name)


def test_the_packages_back_ends_are_found_by_prefix():
    backend, target = registry.lookup("cpu")
    assert backend.name == "cpu" and target.name == "cpu"
    backend, target = registry.lookup("cuda:sm_80")
    assert backend.name == "cuda" and target.capability == 80
    assert registry.for_device("cuda").name == "cuda"
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        registry.lookup("tpu")


def test_a_back_end_of_ones_own_compiles_through_the_same_trip(llir_backend, monkeypatch):
    x = np.random.default_rng(0).random(64, dtype=np.float32)
    kernel = add_kernel.warmup(x, x, x, 64, grid=(1,), BLOCK=64, target="llir")
    assert list(kernel.asm) == ["source", "ttir", "ttgir", "linalg", "llir"]
    assert "define" in kernel.asm["llir"] and kernel.binary is None
    assert kernel.metadata["entry"].startswith("add_kernel")
    # Its stages ran once: the second compile is served by the disk cache.
    compiler.disk_cache().clear_memory()
    monkeypatch.setattr(compiler, "_run_stages", lambda *a: pytest.fail("compiled again"))
    again = add_kernel.warmup(x, x, x, 64, grid=(1,), BLOCK=64, target="llir")
    assert again.asm["llir"] == kernel.asm["llir"]


def test_an_entry_point_registers_a_back_end(monkeypatch):
    plugin = types.ModuleType("naiad_test_backend_plugin")
    plugin.make = LlvmIrOnly
    monkeypatch.setitem(sys.modules, plugin.__name__, plugin)
    entry = importlib.metadata.EntryPoint(
        name="llir", value=f"{plugin.__name__}:make", group="naiad.backends"
    )
    real = importlib.metadata.entry_points

    def entry_points(**selection):
        if selection.get("group") == "naiad.backends":
            return [entry]
        return real(**selection)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    try:
        backend, _ = registry.lookup("llir")
        assert isinstance(backend, LlvmIrOnly)
    finally:
        registry.unregister_backend("llir-only")


def test_the_packages_own_back_ends_are_found_without_reading_entry_points(monkeypatch):
    """Finding entry points reads every installed distribution's metadata: a lookup the
    package's own back ends answer does not wait for it."""

    def entry_points(**selection):
        pytest.fail("entry points read")

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    backend, target = registry.lookup("cpu:aarch64")
    assert backend.name == "cpu" and target.triple.startswith("aarch64")
    assert registry.for_device("cpu") is backend
