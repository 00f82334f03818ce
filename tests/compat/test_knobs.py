"""`triton.knobs` on Naiad: a knob Naiad has is Naiad's setting (read, set, scoped, reset); its
environment variable is the TRITON_* twin; hooks Naiad would never call (stage inspection) are
refused; the group surface Triton's own test fixtures use (`base_knobs`, `copy`, `reset`,
`knob_descriptors`)."""

import pytest

from naiad import knobs as naiad_knobs
from naiad.triton import knobs


@pytest.fixture(autouse=True)
def no_leftovers():
    with naiad_knobs.override():  # whatever a test sets is undone after it
        yield


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
    monkeypatch.setenv("TRITON_KERNEL_DUMP", "1")
    assert knobs.compilation.dump_ir is True


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
    assert knobs.runtime.override_arch == ""


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
