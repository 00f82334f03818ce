"""Naiad beside a real Triton (simulated by a fake `triton` package first on the path): without
the switch the real one is imported; with it (install_as_triton, `python -m naiad.run`, the
stand-in on PYTHONPATH, NAIAD_AS_TRITON=1 in the processes naiad.run starts) Naiad's is;
switching on after the real one was imported is an error; switching off gives the real one
back."""

import os
import subprocess
import sys
import textwrap

import pytest

from naiad.run import STAND_IN_FOLDER


@pytest.fixture
def fake_triton(tmp_path):
    """A folder holding a `triton` package that says it is the fake one."""
    package = tmp_path / "site" / "triton"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "0.0.fake"\nFAKE = True\n')
    (package / "language.py").write_text("FAKE = True\n")
    return str(tmp_path / "site")


def run(args, pythonpath, tmp_path, code=None) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath))
    for name in ("NAIAD_AS_TRITON", "TRITON_INTERPRET"):
        env.pop(name, None)
    if code is not None:
        script = tmp_path / "program.py"
        script.write_text(textwrap.dedent(code))
        args = [*args, str(script)]
    done = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


WHICH = """
import triton, triton.language
print("fake" if getattr(triton, "FAKE", False) else triton.__spec__.name,
      "fake" if getattr(triton.language, "FAKE", False) else triton.language.__spec__.name)
"""


def test_without_the_switch_the_real_triton_is_imported(fake_triton, tmp_path):
    assert run([], [fake_triton], tmp_path, "import naiad\n" + WHICH) == "fake fake"


def test_the_switch_wins_over_an_installed_triton(fake_triton, tmp_path):
    code = "import naiad\nnaiad.install_as_triton()\n" + WHICH
    assert run([], [fake_triton], tmp_path, code) == "naiad.triton naiad.language"


def test_switching_on_after_the_real_triton_was_imported_is_an_error(fake_triton, tmp_path):
    code = """
    import triton, naiad
    try:
        naiad.install_as_triton()
    except RuntimeError as error:
        print("refused" if "before naiad.install_as_triton" in str(error) else error)
    """
    assert run([], [fake_triton], tmp_path, code) == "refused"


def test_switching_off_gives_the_real_triton_back(fake_triton, tmp_path):
    code = """
    import naiad
    naiad.install_as_triton()
    import triton.language
    assert triton.__spec__.name == "naiad.triton"
    naiad.uninstall_as_triton()
    """
    assert run([], [fake_triton], tmp_path, textwrap.dedent(code) + WHICH) == "fake fake"


def test_naiad_run_switches_on_the_program_and_its_children(fake_triton, tmp_path):
    code = (
        WHICH
        + """
import subprocess, sys
child = subprocess.run([sys.executable, "-c", '''WHICH'''], capture_output=True, text=True)
print(child.stdout.strip() or child.stderr)
""".replace("WHICH", WHICH)
    )
    out = run(["-m", "naiad.run"], [fake_triton], tmp_path, code).splitlines()
    assert out == ["naiad.triton naiad.language", "naiad.triton naiad.language"]


def test_the_stand_in_on_pythonpath_switches_on_a_program_that_imports_only_triton(
    fake_triton, tmp_path
):
    out = run([], [STAND_IN_FOLDER, fake_triton], tmp_path, WHICH)
    assert out == "naiad.triton naiad.language"


def test_naiad_run_prints_the_stand_in_folder(tmp_path):
    assert run(["-m", "naiad.run", "--pythonpath"], [], tmp_path) == STAND_IN_FOLDER
