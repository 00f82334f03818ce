"""`triton.knobs` on Naiad: a knob Naiad has is Naiad's setting (read, set, scoped, reset); its
environment variable is the TRITON_* twin; hooks Naiad would never call are refused; the group
surface Triton's own test fixtures use (`base_knobs`, `copy`, `reset`, `knob_descriptors`)."""

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
    monkeypatch.setenv("TRITON_OVERRIDE_ARCH", "sm90")
    assert knobs.runtime.override_arch == "sm90"


def test_hooks_naiad_would_never_call_are_refused():
    knobs.runtime.launch_enter_hook = None  # nothing to call: fine
    with pytest.raises(NotImplementedError, match="launch hooks"):
        knobs.runtime.launch_enter_hook = print


def test_the_groups_surface_of_triton_s_test_fixtures():
    groups = {name: g for name, g in vars(knobs).items() if isinstance(g, knobs.base_knobs)}
    assert {"runtime", "compilation", "autotuning", "cache", "nvidia"} <= set(groups)
    fresh = groups["compilation"].copy().reset()
    assert isinstance(fresh, knobs.compilation_knobs)
    keys = {knob.key for knob in fresh.knob_descriptors.values()}
    assert "TRITON_ALWAYS_COMPILE" in keys and "TRITON_KERNEL_DUMP" in keys
