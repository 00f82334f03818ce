"""Triton's runtime surface that programs and libraries use, on Naiad: JIT functions' source
(`src`, `_unsafe_update_src`, kernels made by `exec`), `params[i].num`, `cache_key`,
`__globals__`; `warmup` and `triton.compile` returning a CompiledKernel that relaunches
(`compiled[grid](*args)`, `run`); other vendors' options in a Config; the `clc` launch
option; the Autotuner's subclassing surface; `do_bench_cudagraph`; the driver's
`set_active`/`reset_active`."""

import inspect
import linecache
import textwrap
import typing

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime import driver
from naiad.testing import do_bench_cudagraph
from naiad.triton.backends.compiler import GPUTarget
from naiad.triton.compiler import ASTSource, compile


@naiad.jit
def scaled(out, N: tl.constexpr):
    x = tl.arange(0, N)
    tl.store(out + x, x + 1)


@naiad.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


def launch_scaled(kernel) -> list:
    out = np.zeros(8, np.int32)
    kernel[(1,)](out, 8)
    return out.tolist()


def patch_by_exec(template, replacements):
    """Triton's own tests make kernels so (test_core.py's patch_kernel, interpreter branch)."""
    local_namespace = {}
    src = textwrap.dedent(inspect.getsource(template.fn))
    for old, new in replacements.items():
        src = src.replace(old, new)
    exec(src, template.fn.__globals__, local_namespace)
    return local_namespace[template.fn.__name__]


def patch_by_update(template, replacements):
    """The same, compiled branch: a new JITFunction whose source is replaced."""
    kernel = naiad.JITFunction(template.fn)
    for old, new in replacements.items():
        kernel._unsafe_update_src(kernel.src.replace(old, new))
    return kernel


@pytest.mark.parametrize("patch", [patch_by_exec, patch_by_update])
def test_kernels_with_replaced_source_run_it(patch):
    kernel = patch(scaled, {"x + 1": "x * 3"})
    assert launch_scaled(kernel) == [3 * i for i in range(8)]
    assert kernel.cache_key != scaled.cache_key
    assert launch_scaled(scaled) == [i + 1 for i in range(8)]  # the template is unchanged


def test_a_patched_nested_kernel_sees_variables_assigned_after_it():
    """test_core's test_scan2d: the kernel names a variable its test function assigns only
    later (`z`), so its closure cell is empty when the source is replaced."""

    @naiad.jit
    def kernel(out, N: tl.constexpr):
        x = tl.arange(0, N)
        GENERATE_HERE  # noqa: F821, B018
        tl.store(out + x, z + scale)

    scale = 1
    kernel = patch_by_update(kernel, {"GENERATE_HERE": "z = x * 5"})
    assert launch_scaled(kernel) == [5 * i + 1 for i in range(8)]
    z = None  # what makes `z` a free variable of the kernel


def test_an_exec_kernel_compiles_on_the_cpu():
    kernel = patch_by_exec(scaled, {"x + 1": "x - 2"})
    with knobs.override(NAIAD_BACKEND="cpu"):
        assert launch_scaled(kernel) == [i - 2 for i in range(8)]


def test_an_exec_kernel_is_not_read_from_another_programs_string_lines(monkeypatch):
    """Python 3.13 keeps `python -c`'s text in linecache under "<string>", the file name of
    every exec'd function too (pytest-xdist's workers start with `-c`): those lines are never
    taken for the kernel's."""
    lines = ["import sys;exec(eval(sys.stdin.readline()))\n"]
    monkeypatch.setitem(linecache.cache, "<string>", (len(lines[0]), None, lines, "<string>"))
    kernel = patch_by_exec(scaled, {"x + 1": "x - 3"})
    with knobs.override(NAIAD_BACKEND="cpu"):
        assert launch_scaled(kernel) == [i - 3 for i in range(8)]


def test_source_surface():
    assert scaled.src.startswith("def scaled(out, N: tl.constexpr):")
    assert [p.num for p in add.params] == [0, 1, 2, 3, 4]
    assert scaled.__globals__ is globals()
    assert scaled.cache_key == scaled.cache_key and len(scaled.cache_key) == 64
    with pytest.raises(AttributeError, match="_unsafe_update_src"):
        scaled.src = "def scaled(out, N): pass"


def test_a_kernel_named_like_a_test_is_not_collected_by_pytest():
    assert scaled.__test__ is False


def arrays(n=100):
    rng = np.random.default_rng(0)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    return x, y, np.full(n, np.nan, np.float32)


def test_warmup_returns_a_compiled_kernel_that_relaunches():
    x, y, out = arrays()
    with knobs.override(NAIAD_BACKEND="cpu"):
        compiled = add.warmup(x, y, out, 100, BLOCK=64, grid=(1,))
        compiled._init_handles()
        assert "ttir" in compiled.asm and compiled.metadata.name == "add"
        compiled[(2, 1, 1)](x, y, out, 100, 64)
        np.testing.assert_array_equal(out, x + y)
        out[:] = np.nan
        run = compiled.run
        run(2, 1, 1, 0, compiled.function, compiled.packed_metadata, None, None, None,
            x, y, out, 100, None)  # fmt: skip
        np.testing.assert_array_equal(out, x + y)


def test_triton_compile_of_an_ast_source_for_each_target():
    source = ASTSource(add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                       constexprs={"BLOCK": 64})  # fmt: skip
    compiled = compile(source, target=GPUTarget("cpu", "x86_64", 1), options={"kpack": 2})
    assert compiled.src is source
    # A CPU program takes its worker whole (compiled_kernel.py): occupancy as on a GPU gives 1.
    properties = driver.CpuDriver().utils.get_device_properties()
    assert properties["max_num_regs"] // (compiled.n_regs * 1 * 4) == 1
    assert properties["max_shared_mem"] // compiled.metadata.shared == 1
    assert "tt.func" in compiled.asm["ttir"] and compiled.kernel == compiled.binary
    x, y, out = arrays()
    with knobs.override(NAIAD_BACKEND="cpu"):
        compiled[(2,)](x, y, out, 100, None)
    np.testing.assert_array_equal(out, x + y)
    with pytest.raises(NotImplementedError, match="'hip'"):
        compile(source, target=GPUTarget("hip", "gfx942", 64))


def test_an_ast_source_reads_attrs_as_a_launch_specializes():
    """`attrs` says which arguments are divisible by 16, as in Triton: the kernel compiled is
    the one a launch with such arguments compiles (so relaunching it compiles nothing new)."""
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    divisible = {(index,): [["tt.divisibility", 16]] for index in range(4)}
    cpu = GPUTarget("cpu", "x86_64", 1)
    compiled = compile(ASTSource(add, signature, {"BLOCK": 64}, attrs=divisible), target=cpu)
    plain = compile(ASTSource(add, signature, {"BLOCK": 64}), target=cpu)
    assert "tt.divisibility = 16" in compiled.asm["ttir"]
    assert "tt.divisibility" not in plain.asm["ttir"]
    x, y, out = arrays(96)  # NumPy's buffers are 16-byte aligned; 96 is divisible by 16
    with knobs.override(NAIAD_BACKEND="cpu"):
        launched = add.warmup(x, y, out, 96, BLOCK=64, grid=(2,))
        compiled[(2,)](x, y, out, 96, None)
    assert launched.asm["ttir"] == compiled.asm["ttir"]
    np.testing.assert_array_equal(out, x + y)


def test_another_vendors_options_in_a_config_are_ignored():
    tuned = naiad.autotune(
        configs=[naiad.Config({"BLOCK": 64, "waves_per_eu": 2, "matrix_instr_nonkdim": 16})],
        key=["n"],
    )(add)
    x, y, out = arrays()
    tuned[lambda meta: (naiad.cdiv(100, meta["BLOCK"]),)](x, y, out, 100)
    np.testing.assert_array_equal(out, x + y)
    assert "ir_override: kernel.ttgir" in str(naiad.Config({}, ir_override="kernel.ttgir"))


def test_the_cluster_launch_control_option_launches_when_off_and_is_refused_on():
    """Triton's block-scaled tutorial passes `clc=False` to every launch; `True` asks for
    Blackwell's tile scheduling, which Naiad does not emit (Triton refuses it below sm_100)."""
    x, y, out = arrays()
    with knobs.override(NAIAD_BACKEND="cpu"):
        add[(2,)](x, y, out, 100, BLOCK=64, clc=False)
        np.testing.assert_array_equal(out, x + y)
        with pytest.raises(ValueError, match="clc=True"):
            add[(2,)](x, y, out, 100, BLOCK=64, clc=True)


class CountingAutotuner(naiad.Autotuner):
    """A library's Autotuner subclass, through Triton's surface."""

    benched: typing.ClassVar[list] = []

    def prune_configs(self, kwargs):
        assert set(self.nargs) == {"x_ptr", "y_ptr", "out_ptr", "n"}
        return super().prune_configs(kwargs)

    def _bench(self, *args, config, **meta):
        self.benched.append((config.kwargs["BLOCK"], "grid" in meta))
        return super()._bench(*args, config=config, **meta)


def test_an_autotuner_subclass_uses_triton_s_surface():
    configs = [naiad.Config({"BLOCK": 32}), naiad.Config({"BLOCK": 64})]
    tuner = CountingAutotuner(add, add.arg_names, configs, ["n"], None, ["out_ptr"],
                              do_bench=lambda call, quantiles: (call(), 1.0)[1])  # fmt: skip
    assert tuner.base_fn is add.fn
    x, y, out = arrays()
    tuner[lambda meta: (naiad.cdiv(100, meta["BLOCK"]),)](x, y, out, 100)
    np.testing.assert_array_equal(out, x + y)
    assert sorted(CountingAutotuner.benched) == [(32, True), (64, True)]
    tuner.pre_hook({"out_ptr": out}, reset_only=True)  # Triton's signature


def test_do_bench_cudagraph_times_on_the_host_without_cuda():
    calls = []
    ms = do_bench_cudagraph(lambda: calls.append(1), rep=2)
    assert ms >= 0 and len(calls) > 1
    assert len(do_bench_cudagraph(lambda: None, rep=1, quantiles=(0.5, 0.8))) == 2


def test_driver_set_active_and_reset_active():
    cpu = driver.CpuDriver()
    try:
        driver.set_active(cpu)
        assert driver.active.get() is cpu and driver.driver.active.get() is cpu
        assert driver.active.get_current_target().backend == "cpu"
    finally:
        driver.reset_active()
    assert driver.driver.default.backend in ("cpu", "cuda")


def test_a_launch_returns_the_compiled_kernel_it_ran():
    x, y, out = arrays()
    with knobs.override(NAIAD_BACKEND="cpu"):
        first = add[(2,)](x, y, out, 100, BLOCK=64)  # the slow path
        again = add[(2,)](x, y, out, 100, BLOCK=64)  # the hot path
        assert first is again and "tt.func" in first.asm["ttir"]
        assert add.run(x, y, out, 100, BLOCK=64, grid=(2,)) is first
        tuned = naiad.autotune([naiad.Config({"BLOCK": 64})], key=["n"])(add)
        assert tuned[(2,)](x, y, out, 100) is first
        out[:] = np.nan
        first[(2,)](x, y, out, 100, 64)
    np.testing.assert_array_equal(out, x + y)
    with knobs.override(NAIAD_BACKEND="interpreter"):
        assert add[(2,)](x, y, out, 100, BLOCK=64) is None  # nothing was compiled


@naiad.jit
def no_parameters():
    huge: tl.constexpr = 0xFFFFFFFFFFFFFF
    x = tl.full((), 32, dtype=tl.int32)
    x + huge


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_a_kernel_without_parameters_launches(backend):
    """test_core's test_scalar_overflow: the launch entry of a kernel without parameters is
    valid Python, and the error is the compile error."""
    with knobs.override(NAIAD_BACKEND=backend), pytest.raises(naiad.NaiadError, match="range"):
        no_parameters[(1,)]()


@naiad.jit(noinline=True)
def _two_values(x, y):
    return x + 1, y + 2


@naiad.jit(noinline=True)
def _store_sum(x, y, Z):
    x, y = _two_values(x, y)
    tl.store(Z, x + y)


@naiad.jit
def _calls_noinline(X, Y, Z):
    _store_sum(tl.load(X), tl.load(Y), Z)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_noinline_callees_returning_several_values(backend):
    """test_core's test_noinline[multi_values]: the module holds the kernel and its private
    callees; the CPU back end reads the kernel's own arguments."""
    z = np.zeros(1, np.float32)
    with knobs.override(NAIAD_BACKEND=backend):
        _calls_noinline[(1,)](np.ones(1, np.float32), np.full(1, 2.0, np.float32), z)
    assert z[0] == 6.0
