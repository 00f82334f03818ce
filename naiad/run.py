"""`python -m naiad.run script.py [args]` (or `-m module [args]`, or `-c code [args]`): run a
Triton program on Naiad without editing it.

The program runs as `__main__` in this process with `import triton` giving Naiad
(as_triton.py), and the processes it starts are switched on too: `NAIAD_AS_TRITON=1` and the
stand-in `triton` folder first on PYTHONPATH are exported, so a `multiprocessing` worker or a
`subprocess` running Python imports Naiad's `triton` as well.

`python -m naiad.run --pythonpath` prints that folder, for programs started some other way:

    PYTHONPATH=$(python -m naiad.run --pythonpath) python program.py
"""

from __future__ import annotations

import os
import runpy
import sys
import types

from . import knobs
from .as_triton import install_as_triton

STAND_IN_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stand_in")

USAGE = """usage: python -m naiad.run script.py [args...]
       python -m naiad.run -m module [args...]
       python -m naiad.run -c code [args...]
       python -m naiad.run --pythonpath

Run a Triton program with `import triton` giving Naiad (naiad.install_as_triton), in this
process and in the Python processes it starts. --pythonpath prints the folder whose `triton`
switches Naiad on, to put first on PYTHONPATH."""


def switch_on_child_processes() -> None:
    """Make the Python processes this one starts import Naiad's `triton` too: export
    `NAIAD_AS_TRITON=1` and the stand-in folder first on PYTHONPATH, and put the folder on
    `sys.path` as well, for libraries that give their workers this process's `sys.path` as
    PYTHONPATH (torch's compile workers do). In this process the finder answers `triton`
    first, so the folder changes nothing here."""
    knobs.export_to_child_processes(knobs.as_triton.env, "1")
    knobs.export_to_child_processes("PYTHONPATH", STAND_IN_FOLDER, prepend_path=True)
    if STAND_IN_FOLDER not in sys.path:
        sys.path.insert(1, STAND_IN_FOLDER)


def main(argv: list[str] | None = None) -> int:
    """Run the program named by `argv` (sys.argv[1:] by default) as `__main__`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "--pythonpath":
        print(STAND_IN_FOLDER)
        return 0
    if argv[0] in ("-m", "-c") and len(argv) < 2:
        what = "a module name" if argv[0] == "-m" else "the code to run"
        print(f"naiad.run: {argv[0]} needs {what}\n\n" + USAGE, file=sys.stderr)
        return 2
    if argv[0] not in ("-m", "-c") and not os.path.exists(argv[0]):
        print(f"naiad.run: can't open file {argv[0]!r}: no such file", file=sys.stderr)
        return 2  # as `python missing.py` says and exits
    install_as_triton()
    switch_on_child_processes()
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]  # runpy puts the module's file in sys.argv[0]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        sys.path[0] = ""  # as `python -c` does: the working folder
        main = sys.modules["__main__"] = types.ModuleType("__main__")  # pickle finds it there
        exec(compile(argv[1], "<string>", "exec"), vars(main))
    else:
        script = argv[0]
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python script.py` does
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
