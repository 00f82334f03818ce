"""`naiad.install_as_triton()`: every public Triton submodule imports and is Naiad's own module,
once; names with no Naiad module fail clearly; `TRITON_*` settings read as their `NAIAD_*` twins
only while the switch is on. Each check runs in a fresh interpreter: the switch changes
`sys.modules` and `sys.meta_path` for the whole process."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from naiad import knobs
from naiad.as_triton import PUBLIC_SUBMODULES, naiad_name

PROGRAMS = Path(__file__).parent / "programs"


def run_python(code: str, env: dict | None = None, extra=()) -> str:
    environment = dict(os.environ, **(env or {}))
    for name in ("NAIAD_AS_TRITON", "TRITON_INTERPRET", "NAIAD_INTERPRET"):
        if name not in (env or {}):
            environment.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *extra],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_every_public_submodule_is_naiads_own_module_once():
    out = run_python(
        f"""
        import importlib, json, sys
        import naiad
        before = set(sys.modules)
        naiad.install_as_triton()
        found = {{}}
        for name in {list(PUBLIC_SUBMODULES)!r}:
            module = importlib.import_module(name)
            parent, _, child = name.rpartition(".")
            found[name] = {{
                "naiad": module.__spec__.name,
                "same": sys.modules[name] is sys.modules[module.__spec__.name],
                "parent_attribute": parent == "" or getattr(sys.modules[parent], child) is module,
            }}
        # No file was imported a second time under a Triton name: one module object per file.
        modules = {{id(m): m for m in list(sys.modules.values())}}.values()
        # Naiad's files only: torch enters its extension's submodules under the one file.
        root = naiad.__path__[0]
        files = [getattr(m, "__file__", None) or "" for m in modules]
        files = [f for f in files if f.startswith(root)]
        found["duplicated_files"] = sorted({{f for f in files if files.count(f) > 1}})
        found["naiad.knobs intact"] = naiad.knobs.__name__ == "naiad.knobs"
        print(json.dumps(found))
        """
    )
    found = json.loads(out)
    for name in PUBLIC_SUBMODULES:
        entry = found[name]
        assert entry["naiad"] == naiad_name(name) and entry["naiad"].startswith("naiad"), name
        assert entry["same"] and entry["parent_attribute"], (name, entry)
    # One module object per file: a Triton alias is the Naiad module, never a copy of it.
    modules_by_file = found["duplicated_files"]
    assert modules_by_file == [], modules_by_file
    assert found["naiad.knobs intact"]


def test_libdevice_is_one_module_whichever_path_imports_it():
    run_python(
        """
        import naiad
        naiad.install_as_triton()
        import triton.language as tl
        from triton.language.extra import libdevice
        from triton.language.extra.cuda import libdevice as cuda_libdevice
        from triton.language.extra.cpu import libdevice as cpu_libdevice
        import triton.language.extra.libdevice as dotted
        assert libdevice is cuda_libdevice is cpu_libdevice is dotted is tl.extra.libdevice
        assert libdevice is naiad.language.extra.libdevice
        """
    )


def test_a_name_naiad_does_not_have_fails_saying_so():
    run_python(
        """
        import naiad
        naiad.install_as_triton()
        try:
            import triton.fb.build
        except ModuleNotFoundError as error:
            assert error.name == "triton.fb" and "Naiad" in str(error), error
        else:
            raise AssertionError("triton.fb imported")
        import triton
        try:
            triton.AsyncCompileMode
        except AttributeError as error:
            assert "triton.AsyncCompileMode" in str(error) and "Naiad" in str(error), error
        """
    )


def test_triton_names_map_by_table_then_by_child_name():
    assert naiad_name("triton") == "naiad.triton"
    assert naiad_name("triton.language.standard") == "naiad.language.standard"
    assert naiad_name("triton.runtime.jit") == "naiad.runtime.jit"
    assert naiad_name("triton.compiler.compiler") == "naiad.triton.compiler.compiler"
    assert naiad_name("triton.language.extra.cuda.libdevice") == "naiad.language.extra.libdevice"
    assert naiad_name("triton.no_such_module") is None


def test_without_the_switch_naiad_never_touches_triton():
    run_python(
        """
        import sys
        import naiad, naiad.language, naiad.runtime.jit
        assert not any(n == "triton" or n.startswith("triton.") for n in sys.modules)
        try:
            import triton
        except ImportError:
            pass
        else:  # a real Triton is installed here: it is that one, not Naiad's
            assert not triton.__spec__.name.startswith("naiad")
        """
    )


# -- the TRITON_* twins -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "naiad_setting, triton_setting",
    [
        (knobs.interpret, "TRITON_INTERPRET"),
        (knobs.debug, "TRITON_DEBUG"),
        (knobs.print_autotuning, "TRITON_PRINT_AUTOTUNING"),
        (knobs.always_compile, "TRITON_ALWAYS_COMPILE"),
        (knobs.disable_line_info, "TRITON_DISABLE_LINE_INFO"),
        (knobs.extract_di_local_variables, "LLVM_EXTRACT_DI_LOCAL_VARIABLES"),
    ],
)
def test_triton_flags_read_as_their_naiad_twins_only_while_switched_on(
    naiad_setting, triton_setting, monkeypatch
):
    monkeypatch.delenv(naiad_setting.env, raising=False)
    monkeypatch.setenv(triton_setting, "1")
    assert knobs.TRITON_TWINS[naiad_setting.env] == triton_setting
    assert naiad_setting.get() is False
    try:
        knobs.read_triton_twins(True)
        assert naiad_setting.get() is True
        monkeypatch.setenv(naiad_setting.env, "0")  # Naiad's own setting wins when set
        assert naiad_setting.get() is False
    finally:
        knobs.read_triton_twins(False)


def test_triton_cache_dir_is_naiads_while_switched_on(monkeypatch, tmp_path):
    monkeypatch.delenv("NAIAD_CACHE_DIR", raising=False)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    try:
        knobs.read_triton_twins(True)
        assert knobs.cache_dir.get() == str(tmp_path)
    finally:
        knobs.read_triton_twins(False)
    assert knobs.cache_dir.get() == ""


def test_launch_settings_see_triton_interpret(monkeypatch):
    monkeypatch.delenv("NAIAD_INTERPRET", raising=False)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    try:
        knobs.read_triton_twins(True)
        assert knobs.launch_settings()[0] in ("1", b"1")  # text under override(), else bytes
    finally:
        knobs.read_triton_twins(False)
    assert knobs.launch_settings()[0] in (None, "")


def test_triton_interpret_makes_kernels_run_in_the_interpreter():
    out = run_python(
        """
        import naiad
        naiad.install_as_triton()
        import sys, numpy as np
        sys.path.insert(0, sys.argv[1])
        from kernels import store_range

        out = np.zeros(4, np.int32)
        store_range[(1,)](out)
        print(out.tolist(), sorted(store_range._launchers))
        """,
        env={"TRITON_INTERPRET": "1", "NAIAD_BACKEND": ""},
        extra=(str(PROGRAMS),),
    )
    assert out.split() == ["[0,", "1,", "2,", "3]", "[]"]  # ran, and no back end compiled


def test_a_dtype_s_repr_evaluates_under_the_name_it_was_imported_by():
    """Generated kernel source and Triton's tests `eval` a dtype's repr."""
    out = run_python(
        """
        import naiad, naiad.language as nl
        plain = repr(nl.int8)
        naiad.install_as_triton()
        import triton
        switched = repr(nl.bfloat16)
        print(plain, switched, eval(switched) is nl.bfloat16)
        naiad.uninstall_as_triton()
        print(repr(nl.int8))
        """
    )
    assert out.split() == [
        "naiad.language.int8",
        "triton.language.bfloat16",
        "True",
        "naiad.language.int8",
    ]
