"""A located error also gives its position counted from the enclosing function's `def` (line 1
is the `def`, columns are offsets from the `def` keyword), written `at L:C:`, for the error and
for each call that led there: the count Triton's errors use, so a Triton user's test that looks
for it finds it. The file:line:col header, the source line and the caret stay first."""

import inspect

import numpy as np
import pytest
from diagnostic_checks import assert_located

import naiad
import naiad.language as tl
from naiad import knobs


def position_in_function(fn, marker, at):
    """`at`'s (line, column offset) on the line of `fn` holding `marker`, counted from the line
    and column of `fn`'s `def` (found here by reading the lines, not through Naiad)."""
    fn = getattr(fn, "fn", fn)
    lines, _ = inspect.getsourcelines(fn)
    def_index = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    def_col = len(lines[def_index]) - len(lines[def_index].lstrip())
    hit = next(i for i, line in enumerate(lines) if marker in line)
    return hit - def_index + 1, lines[hit].index(at) - def_col


@naiad.jit(
    do_not_specialize=[],  # a decorator of several lines: the count starts at the `def`
)
def add_wide(x):
    return x + tl.arange(0, 32)  # CALLEE


@naiad.jit
def calls_add_wide(out_ptr):
    offs = tl.arange(0, 16)
    y = add_wide(offs)  # CALLER
    tl.store(out_ptr + offs, y)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_error_and_call_chain_carry_positions_in_their_functions(backend):
    with knobs.override(NAIAD_BACKEND=backend), pytest.raises(naiad.CompilationError) as info:
        calls_add_wide[(1,)](np.zeros(16, np.int32))
    error = info.value
    assert_located(error, add_wide, "# CALLEE", at="x + tl.arange")
    line, col = position_in_function(add_wide, "# CALLEE", at="x + tl.arange")
    assert error.location.in_function == (line, col)
    assert f"\n  in `add_wide` at {line}:{col}: (line {line} from its def" in str(error)
    line, col = position_in_function(calls_add_wide, "# CALLER", at="add_wide(offs)")
    assert f" in `calls_add_wide` at {line}:{col}:" in str(error).splitlines()[-1]


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_a_kernel_defined_in_a_function_counts_columns_from_its_def(backend):
    """The `def` is indented here: columns are offsets from it, not from the file's margin."""

    @naiad.jit
    def fails_static_assert(out_ptr):
        tl.store(out_ptr, 1.0)
        tl.static_assert(out_ptr is None, "a pointer is passed")  # MARK

    with knobs.override(NAIAD_BACKEND=backend), pytest.raises(naiad.CompilationError) as info:
        fails_static_assert[(1,)](np.zeros(4, np.float32))
    error = info.value
    assert_located(error, fails_static_assert, "# MARK", at="tl.static_assert")
    line, col = position_in_function(fails_static_assert, "# MARK", at="tl.static_assert")
    assert (line, col) == (3, 4)
    assert f"in `fails_static_assert` at {line}:{col}:" in str(error)
    # The located error takes the place of the unlocated one the builtin raised: it is not its
    # own cause.
    assert isinstance(error, naiad.errors.CompileTimeAssertionFailure)
    assert error.__cause__ is None


def plain_helper(x):
    return x + "text"  # HELPER


@naiad.jit
def calls_plain_helper(out_ptr):
    x = tl.load(out_ptr)
    tl.store(out_ptr, plain_helper(x))  # KERNEL


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_a_plain_python_helper_has_its_position_too(backend):
    with knobs.override(NAIAD_BACKEND=backend), pytest.raises(TypeError) as info:
        calls_plain_helper[(1,)](np.zeros(4, np.float32))
    error = info.value
    assert_located(error, plain_helper, "# HELPER", at="x + ")
    line, col = position_in_function(plain_helper, "# HELPER", at="x + ")
    assert f"in `plain_helper` at {line}:{col}:" in str(error)
    line, col = position_in_function(calls_plain_helper, "# KERNEL", at="plain_helper(x)")
    assert f"in `calls_plain_helper` at {line}:{col}:" in str(error)


def test_unknown_function_or_column_leaves_the_position_out():
    """A location with no function (a back end's fault site) or no `def` shows no position."""
    site = naiad.errors.SourceLocation("k.py", 7, 3, "    y = x", "", 0, 0)
    assert site.in_function is None
    assert "at " not in str(naiad.CompilationError("bad", site))
    before_def = naiad.errors.SourceLocation("k.py", 3, 1, "@jit", "k", 4, 1)
    assert before_def.in_function is None


def test_the_enclosing_definition_of_a_source_line(tmp_path):
    """What a compiled fault site (file, line, column) is given to count its position from its
    function's `def`: the nearest `def` above, indented less; none at module level."""
    from naiad.errors import enclosing_definition

    path = tmp_path / "k.py"
    path.write_text(
        "import naiad\n\n@naiad.jit\ndef outer(x):\n    y = 1\n\n    def inner():\n"
        "        return y\n    return inner\n\nz = 2\n"
    )
    assert enclosing_definition(str(path), 5) == ("outer", 4, 1)
    assert enclosing_definition(str(path), 8) == ("inner", 7, 5)
    assert enclosing_definition(str(path), 9) == ("outer", 4, 1)
    assert enclosing_definition(str(path), 11) == ("", 0, 0)
