"""What `import naiad` and a first launch load: the compiler (the dialects, the passes, the code
generator) loads with the first compile, never with `import naiad`, `import triton` under the
switch, or on the thread of a launch the interpreter runs while its kernel compiles in the
background. Each case runs in a fresh process, whose modules are its own."""

import subprocess
import sys
import textwrap

import pytest

COMPILER = ("naiad.dialects", "naiad.passes", "naiad.frontend.codegen", "naiad.middle")


def _loaded_by(program: str, folder) -> list[str]:
    """The compiler's modules the program imported, as it prints them (a file of `folder`: the
    kernels' source is read from it)."""
    path = folder / "program.py"
    path.write_text(textwrap.dedent(program))
    done = subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize(
    "imports",
    [
        "import naiad, naiad.language, naiad.testing",
        "import naiad; naiad.install_as_triton()\n"
        "import triton, triton.language, triton.compiler, triton.testing",
    ],
    ids=["naiad", "triton under the switch"],
)
def test_importing_loads_no_compiler(imports, tmp_path):
    shown = f"print(*[m for m in sys.modules if m.startswith({COMPILER!r})])"
    program = f"import sys\n{imports}\n{shown}"
    assert _loaded_by(program, tmp_path) == []


def test_an_interpreted_first_launch_loads_no_compiler_on_its_thread(tmp_path):
    names = _loaded_by(
        f"""
        import os, sys, threading
        os.environ["NAIAD_CACHE_DIR"] = {str(tmp_path)!r}
        os.environ["NAIAD_CPU_TIERING"] = "auto"
        os.environ["NAIAD_BACKEND"] = "auto"  # (this test run's is the interpreter)
        import numpy as np
        import naiad, naiad.language as tl

        @naiad.jit
        def double(x, y, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y + offsets, tl.load(x + offsets, mask=offsets < n) * 2, mask=offsets < n)

        main, seen = threading.get_ident(), []

        def watch(event, args):
            if event == "import" and threading.get_ident() == main:
                seen.append(args[0])

        x = np.random.default_rng(0).random(100).astype(np.float32)
        y = np.zeros_like(x)
        sys.addaudithook(watch)
        double[(1,)](x, y, 100, BLOCK=128)
        assert np.array_equal(y, 2 * x)
        print(*[m for m in seen if m.startswith({COMPILER!r})])
    """,
        tmp_path,
    )
    assert names == []


def test_a_background_compile_parses_no_source_under_pytest(tmp_path):
    """The background compile imports the compiler: under pytest, whose assertion rewriting
    parses each module named as a test file when it is imported, no source may be parsed in its
    thread (CPython 3.11's parser fails in the other thread parsing at that time: a pytest run
    formatting a failure ended with 'AST constructor recursion depth mismatch')."""
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(
            """
            import ast, threading
            PARSED_ELSEWHERE, _parse = [], ast.parse

            def parse(*args, **kwargs):
                if threading.current_thread() is not threading.main_thread():
                    PARSED_ELSEWHERE.append(kwargs.get("filename", "<unknown>"))
                return _parse(*args, **kwargs)

            ast.parse = parse
            """
        )
    )
    (tmp_path / "test_background.py").write_text(
        textwrap.dedent(
            f"""
            import os, sys
            os.environ["NAIAD_CACHE_DIR"] = {str(tmp_path / "cache")!r}
            os.environ["NAIAD_CPU_TIERING"] = "auto"
            os.environ["NAIAD_BACKEND"] = "auto"
            import numpy as np
            import naiad, naiad.language as tl
            from naiad.runtime import cpu_tiering
            from conftest import PARSED_ELSEWHERE

            @naiad.jit
            def double(x, y, n, BLOCK: tl.constexpr):
                offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                mask = offsets < n
                tl.store(y + offsets, tl.load(x + offsets, mask=mask) * 2, mask=mask)

            def test_launch():
                x = np.random.default_rng(0).random(100).astype(np.float32)
                y = np.zeros_like(x)
                double[(1,)](x, y, 100, BLOCK=128)
                assert cpu_tiering.settled() and "naiad.passes" in sys.modules
                double[(1,)](x, y, 100, BLOCK=128)
                assert np.array_equal(y, 2 * x)
                assert PARSED_ELSEWHERE == []
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
