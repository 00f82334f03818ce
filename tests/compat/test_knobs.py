"""`triton.knobs` on Naiad: a knob Naiad has is Naiad's setting (read, set, scoped, reset) and,
set, writes its TRITON_* variable as Triton's do; hooks Naiad would never call (stage
inspection) are refused; the kinds of knob programs build their own groups with (`env_str`,
`env_bool`, ..., `propagate_env`, `env`); the group surface Triton's own test fixtures use
(`base_knobs`, `copy`, `reset`, `scope`, `knob_descriptors`); Triton's cache folders under the
switch and its cache managers."""

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs as naiad_knobs
from naiad.runtime.cache import Cache
from naiad.triton import knobs, nvidia_tools
from naiad.triton._internal_testing import _fresh_knobs_impl
from naiad.triton.runtime import cache as triton_cache


@pytest.fixture(autouse=True)
def no_leftovers():
    """Fresh groups, their variables removed, and all of it (Naiad's settings too) put back
    after the test."""
    fresh, reset = _fresh_knobs_impl()
    with naiad_knobs.override():
        fresh()
        try:
            yield
        finally:
            reset()


@pytest.fixture
def as_triton():
    naiad_knobs.read_triton_twins(True)
    try:
        yield
    finally:
        naiad_knobs.read_triton_twins(False)


@naiad.jit
def _add_one(x, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x + offsets, tl.load(x + offsets, mask=offsets < n) + 1.0, mask=offsets < n)


def test_a_knob_naiad_has_is_naiads_setting():
    assert knobs.runtime.interpret is naiad_knobs.interpret.get()
    knobs.runtime.interpret = True
    assert naiad_knobs.interpret.get() is True and knobs.runtime.interpret is True
    knobs.runtime.interpret = None
    assert naiad_knobs.interpret.get() is False
    knobs.autotuning.print = True
    assert naiad_knobs.print_autotuning.get()


def test_scope_undoes_what_the_block_set():
    with knobs.compilation.scope():
        knobs.compilation.always_compile = True
        knobs.compilation.dump_ir = True
        assert naiad_knobs.always_compile.get()
    assert not naiad_knobs.always_compile.get() and knobs.compilation.dump_ir is False


def test_other_knobs_read_their_environment_variable(monkeypatch):
    monkeypatch.setenv("TRITON_KERNEL_OVERRIDE", "y")
    monkeypatch.setenv("USE_IR_LOC", "ttir")
    assert knobs.compilation.override is True and knobs.compilation.use_ir_loc == "ttir"
    assert knobs.amd.use_block_pingpong is None and knobs.redis.port == 6379


def test_override_arch_is_naiads_cuda_arch(monkeypatch):
    """`knobs.runtime.override_arch` (TRITON_OVERRIDE_ARCH) is NAIAD_CUDA_ARCH: set, it is the
    setting the CUDA launcher and warmup compile for; its environment variable is read while
    Naiad stands in for Triton."""
    knobs.runtime.override_arch = "sm80"
    assert naiad_knobs.cuda_arch.get() == "sm80" and knobs.runtime.override_arch == "sm80"
    knobs.runtime.override_arch = None
    assert naiad_knobs.cuda_arch.get() == ""
    monkeypatch.setenv("TRITON_OVERRIDE_ARCH", "sm90")
    naiad_knobs.read_triton_twins(True)
    try:
        assert knobs.runtime.override_arch == "sm90"
    finally:
        naiad_knobs.read_triton_twins(False)
    assert knobs.runtime.override_arch is None  # unset, as Triton says


def test_a_group_put_back_after_a_test_restores_naiads_settings():
    """Triton's `fresh_knobs` fixture: a fresh copy of each group stands in during the test,
    the group is put back after it. An `override_arch` the test set is Naiad's setting, so it
    must go with the copy; it had outlived the test and made the next tests of the process
    compile for sm_70."""
    original = knobs.runtime
    knobs.runtime.debug = True
    knobs.runtime = original.copy().reset()
    try:
        assert knobs.runtime.debug is False
        knobs.runtime.override_arch = "sm70"
        assert naiad_knobs.cuda_arch.get() == "sm70"
    finally:
        knobs.runtime = original
    try:
        assert naiad_knobs.cuda_arch.get() == "" and knobs.runtime.debug is True
    finally:
        knobs.runtime.debug = None


def test_hooks_naiad_would_never_call_are_refused():
    knobs.runtime.add_stages_inspection_hook = None  # nothing to call: fine
    with pytest.raises(NotImplementedError, match="stage hooks"):
        knobs.runtime.add_stages_inspection_hook = print


def test_the_groups_surface_of_triton_s_test_fixtures():
    groups = {name: g for name, g in vars(knobs).items() if isinstance(g, knobs.base_knobs)}
    assert {"runtime", "compilation", "autotuning", "cache", "nvidia"} <= set(groups)
    fresh = groups["compilation"].copy().reset()
    assert isinstance(fresh, knobs.compilation_knobs)
    keys = {knob.key for knob in fresh.knob_descriptors.values()}
    assert "TRITON_ALWAYS_COMPILE" in keys and "TRITON_KERNEL_DUMP" in keys


def test_default_fp_fusion_is_the_launches_default(monkeypatch):
    """`knobs.language.default_fp_fusion` (TRITON_DEFAULT_FP_FUSION) decides whether a launch
    that does not say `enable_fp_fusion` fuses a multiply and an add into an fma on the GPU;
    a launch that says wins."""
    import numpy as np

    import naiad
    import naiad.language as tl

    @naiad.jit
    def mul_add(data):
        ptrs = data + tl.arange(0, 128)
        tl.store(ptrs, tl.load(ptrs) * 1.5 + 1.0)

    def fused(**options):
        x = np.zeros(128, np.float32)
        compiled = mul_add.warmup(x, grid=(1,), target="cuda:sm_90a", **options)
        return "fma.rn.f32" in compiled.asm["ptx"]

    assert knobs.language.default_fp_fusion is True and fused()
    knobs.language.default_fp_fusion = False
    assert naiad_knobs.default_fp_fusion.get() is False
    assert not fused() and fused(enable_fp_fusion=True)
    knobs.language.default_fp_fusion = True
    assert fused() and not fused(enable_fp_fusion=False)
    knobs.language.default_fp_fusion = None  # back to the environment, which says no
    monkeypatch.setenv("NAIAD_DEFAULT_FP_FUSION", "0")
    assert not fused()


class _mine(knobs.base_knobs):
    """A group a program declares with Triton's kinds of knob."""

    name = knobs.env_str("MY_KNOB_NAME", "triton")
    fast = knobs.env_bool("MY_KNOB_FAST", True)
    size = knobs.env_int("MY_KNOB_SIZE", 64)
    path = knobs.env_opt_str("MY_KNOB_PATH")
    wide = knobs.env_opt_bool("MY_KNOB_WIDE")
    kind = knobs.env_class("MY_KNOB_CLASS", "CacheManager")


def test_a_programs_own_group_reads_its_variables_when_asked(monkeypatch):
    for key in ("NAME", "FAST", "SIZE", "PATH", "WIDE", "CLASS"):
        monkeypatch.delenv(f"MY_KNOB_{key}", raising=False)
    group = _mine()
    defaults = {"name": "triton", "fast": True, "size": 64, "path": None, "wide": None}
    assert group.knobs == {**defaults, "kind": None}
    for truthy, falsy in (("y", "n"), ("YES", "NO"), ("On", "off"), ("1", "0"), ("TRUE", "x")):
        monkeypatch.setenv("MY_KNOB_FAST", falsy)
        monkeypatch.setenv("MY_KNOB_WIDE", truthy)
        assert (group.fast, group.wide) == (False, True)
    monkeypatch.setenv("MY_KNOB_SIZE", "12")
    monkeypatch.setenv("MY_KNOB_CLASS", "naiad.triton.runtime.cache:FileCacheManager")
    assert group.size == 12 and group.kind is triton_cache.FileCacheManager
    monkeypatch.setenv("MY_KNOB_SIZE", "twelve")
    with pytest.raises(RuntimeError, match="MY_KNOB_SIZE"):
        _ = group.size
    monkeypatch.setenv("MY_KNOB_CLASS", "os:getcwd")
    with pytest.raises(RuntimeError, match="not a subclass of CacheManager"):
        _ = group.kind


def test_setting_a_knob_writes_its_variable_while_propagate_env(monkeypatch):
    monkeypatch.delenv("MY_KNOB_SIZE", raising=False)
    group = _mine()
    group.size, group.fast, group.path = 7, False, "/tmp/x"
    assert [os.environ[f"MY_KNOB_{k}"] for k in ("SIZE", "FAST", "PATH")] == ["7", "0", "/tmp/x"]
    group.path = None  # None removes the variable
    assert "MY_KNOB_PATH" not in os.environ and group.path is None
    knobs.propagate_env = False
    group.size = 9
    assert group.size == 9 and os.environ["MY_KNOB_SIZE"] == "7"
    group.size = knobs.env  # back to the variable
    assert group.size == 7
    group.size = 11
    del group.size
    assert group.size == 7


def test_copy_reset_and_scope_of_a_group(monkeypatch):
    monkeypatch.setenv("MY_KNOB_NAME", "from the environment")
    monkeypatch.delenv("MY_KNOB_PATH", raising=False)
    knobs.propagate_env = False  # values stay on the groups
    group = _mine()
    group.name, group.size = "set", 5
    twin = group.copy()
    twin.name = "twin's"
    assert (group.name, twin.name, twin.size) == ("set", "twin's", 5)
    assert twin.reset().knobs["name"] == "from the environment" and group.size == 5
    with group.scope():
        group.name, group.size = "inside", 6
        monkeypatch.setenv("MY_KNOB_PATH", "/inside")
        assert (group.name, group.size, group.path) == ("inside", 6, "/inside")
    assert (group.name, group.size, group.path) == ("set", 5, None)
    assert os.environ["MY_KNOB_NAME"] == "from the environment"


def test_a_naiad_knob_writes_its_variable_and_goes_back_to_it(monkeypatch, as_triton):
    monkeypatch.delenv("NAIAD_ALWAYS_COMPILE", raising=False)
    knobs.compilation.always_compile = True
    assert os.environ["TRITON_ALWAYS_COMPILE"] == "1" and naiad_knobs.always_compile.get()
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "0")
    assert knobs.compilation.always_compile is True  # the value set wins
    knobs.compilation.always_compile = knobs.env
    assert knobs.compilation.always_compile is False
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "y")
    assert naiad_knobs.always_compile.get() and knobs.compilation.always_compile is True
    monkeypatch.setenv("TRITON_FRONT_END_DEBUGGING", "1")
    assert naiad_knobs.traceback.get() and knobs.compilation.front_end_debugging is True


def test_refresh_knobs_reads_debug_again(monkeypatch, as_triton):
    monkeypatch.delenv("NAIAD_DEBUG", raising=False)
    knobs.propagate_env = False
    knobs.runtime.debug = False
    monkeypatch.setenv("TRITON_DEBUG", "yes")
    assert knobs.runtime.debug is False
    knobs.refresh_knobs()
    assert knobs.runtime.debug is True and naiad_knobs.debug.get()


def test_under_the_switch_the_cache_folder_is_triton_s(tmp_path, monkeypatch, as_triton):
    """Naiad's disk cache, the compile's, follows Triton's knobs: TRITON_HOME moves it,
    `knobs.cache.dir` sets it; without the switch it is ~/.naiad/cache."""
    for name in ("NAIAD_CACHE_DIR", "TRITON_CACHE_DIR", "TRITON_DUMP_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRITON_HOME", str(tmp_path))
    assert knobs.cache.home_dir == str(tmp_path)
    assert knobs.cache.dir == str(Cache().directory) == str(tmp_path / ".triton" / "cache")
    assert knobs.cache.dump_dir == str(tmp_path / ".triton" / "dump")
    assert knobs.cache.override_dir == str(tmp_path / ".triton" / "override")
    knobs.cache.home_dir = str(tmp_path / "home")
    assert Cache().directory == tmp_path / "home" / ".triton" / "cache"
    knobs.cache.dir = str(tmp_path / "mine")
    assert Cache().directory == tmp_path / "mine" and knobs.cache.dir == str(tmp_path / "mine")
    naiad_knobs.read_triton_twins(False)
    del knobs.cache.dir
    assert Cache().directory == Path.home() / ".naiad" / "cache"


def test_a_compile_is_stored_in_the_folder_the_knob_sets(tmp_path, monkeypatch):
    from naiad.runtime import compiler

    knobs.cache.dir = str(tmp_path / "cache")
    compiler._cache = None
    try:
        x = np.random.default_rng(3).standard_normal(50).astype(np.float32)
        _add_one.warmup(x, 50, BLOCK=64, grid=(1,), target="cpu")
    finally:
        compiler._cache = None
    assert any(path.is_file() for path in (tmp_path / "cache").rglob("*"))


def test_kernel_dump_writes_every_stage_under_dump_dir(tmp_path):
    """Triton's `compilation.dump_ir` (TRITON_KERNEL_DUMP) with `cache.dump_dir`: every
    stage's text of each compile, as NAIAD_DUMP_DIR writes it."""
    knobs.compilation.always_compile = True
    knobs.compilation.dump_ir = True
    knobs.cache.dump_dir = str(tmp_path)
    x = np.random.default_rng(4).standard_normal(40).astype(np.float32)
    _add_one.warmup(x, 40, BLOCK=64, grid=(1,), target="cpu")
    (llir,) = tmp_path.rglob("*.llir")
    assert "define" in llir.read_text() and llir.name == "_add_one.llir"
    assert "tt.func public @_add_one" in next(tmp_path.rglob("*.ttir")).read_text()


def test_file_cache_manager_keeps_files_and_groups(tmp_path):
    knobs.cache.dir = str(tmp_path)
    manager = triton_cache.get_cache_manager("key1")
    assert isinstance(manager, triton_cache.FileCacheManager) and manager.get_file("a") is None
    data = np.random.default_rng(5).bytes(100)
    binary = manager.put(data, "a.bin")
    text = manager.put("some text", "b.txt", binary=False)
    assert Path(binary).read_bytes() == data and Path(text).read_text() == "some text"
    assert Path(binary).parent == tmp_path / "key1" and manager.get_file("a.bin") == binary
    manager.put_group("kernel.json", {"a.bin": binary, "b.txt": text})
    assert manager.get_group("kernel.json") == {"a.bin": binary, "b.txt": text}
    os.unlink(text)
    assert manager.get_group("kernel.json") is None  # a member is missing: a miss
    assert manager.get_group("other.json") is None
    assert triton_cache.get_dump_manager("k").cache_dir == os.path.join(knobs.cache.dump_dir, "k")

    class Counting(triton_cache.FileCacheManager):
        made = 0

        def __init__(self, key, override=False, dump=False):
            Counting.made += 1
            super().__init__(key, override, dump)

    knobs.cache.manager_class = Counting
    assert isinstance(triton_cache.get_cache_manager("key2"), Counting) and Counting.made == 1


@pytest.mark.skipif(
    nvidia_tools.installed_tool("ptxas") is None, reason="no ptxas (pip install nvidia-cuda-nvcc)"
)
def test_nvidia_tools_are_found_where_installed(tmp_path, monkeypatch):
    """`knobs.nvidia.ptxas` is the installed ptxas and its release; TRITON_PTXAS_PATH, or a
    value set, names another, and one that does not run falls back to the installed one."""
    installed = nvidia_tools.installed_tool("ptxas")
    tool = knobs.nvidia.ptxas
    assert tool.path == installed and re.fullmatch(r"\d+\.\d+", tool.version)
    assert knobs.nvidia.ptxas_blackwell.path == installed
    copy = tmp_path / "ptxas-special"
    shutil.copy(installed, copy)
    monkeypatch.setenv("TRITON_PTXAS_PATH", str(copy))
    assert knobs.nvidia.ptxas == nvidia_tools.NvidiaTool(str(copy), tool.version)
    knobs.propagate_env = False
    knobs.nvidia.ptxas = str(tmp_path / "missing")
    assert knobs.nvidia.ptxas.path == installed
    del knobs.nvidia.ptxas
    assert knobs.nvidia.ptxas.path == str(copy)
    monkeypatch.setattr(nvidia_tools, "installed_tool", lambda binary: None)
    monkeypatch.delenv("TRITON_PTXAS_PATH")
    with pytest.raises(RuntimeError, match="TRITON_PTXAS_PATH"):
        _ = knobs.nvidia.ptxas
