"""The frontend's diagnostics: each a `naiad.CompilationError` (of the matching builtin type) at
the user's own file:line:col, showing the line with a caret, with none of Naiad's frames."""

import inspect
import os
import traceback

import pytest

import naiad
import naiad.language as tl
from naiad.frontend import compile_to_ttir

NAIAD_DIR = os.path.dirname(os.path.abspath(naiad.__file__)) + os.sep
POINTER = {"X": "*fp32", "n": "i32", "BLOCK": "constexpr"}


def _compile(kernel, signature=POINTER, constexprs=None):
    return compile_to_ttir(kernel, signature, constexprs or {"BLOCK": 16})


def _position(fn, marker, at):
    """(file, absolute line, 1-based column, line) of the line of `fn` holding `marker`."""
    fn = getattr(fn, "fn", fn)
    lines, first = inspect.getsourcelines(fn)
    (index,) = [i for i, line in enumerate(lines) if marker in line]
    line = lines[index].rstrip("\n")
    return fn.__code__.co_filename, first + index, line.index(at) + 1, line


def assert_located(exc, fn, marker, at):
    """`exc` is at `marker`'s line of `fn`, with a caret under `at`; returns the message."""
    assert isinstance(exc, naiad.CompilationError), type(exc)
    filename, lineno, col, line = _position(fn, marker, at)
    text = str(exc).splitlines()
    head = f"{filename}:{lineno}:{col}: error: "
    assert text[0].startswith(head), f"expected {head!r}, got:\n{exc}"
    assert text[1] == "    " + line.strip()
    indent = len(line) - len(line.lstrip())
    assert text[2].index("^") == 4 + col - 1 - indent, str(exc)
    shown = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    assert NAIAD_DIR not in shown, f"Naiad's own frames are shown:\n{shown}"
    return text[0][len(head) :]


# -- the three diagnostics of the brief ------------------------------------------------------------
@naiad.jit
def branch_type_mismatch(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if n > 0:  # MARK
        y = tl.load(X + offs)
    else:
        y = offs
    tl.store(X + offs, y)


def test_a_name_has_one_type_in_both_branches_of_a_runtime_if():
    with pytest.raises(TypeError) as info:
        _compile(branch_type_mismatch)
    message = assert_located(info.value, branch_type_mismatch, "# MARK", at="if")
    assert "y" in message and "fp32" in message and "int32" in message


@naiad.jit
def loop_type_change(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for _ in range(n):
        acc = acc + 0.5  # MARK
    tl.store(X + offs, acc)


def test_a_loop_carried_value_keeps_its_type():
    with pytest.raises(TypeError) as info:
        _compile(loop_type_change)
    message = assert_located(info.value, loop_type_change, "# MARK", at="acc =")
    assert "Loop-carried variable acc" in message
    assert "int32" in message and "fp32" in message


@naiad.jit
def arange_runtime_bound(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, n)  # MARK
    tl.store(X + offs, offs)


def test_arange_bounds_must_be_constexpr():
    with pytest.raises(ValueError) as info:
        _compile(arange_runtime_bound)
    message = assert_located(info.value, arange_runtime_bound, "# MARK", at="tl.arange")
    assert "constexpr" in message


# -- more of them ----------------------------------------------------------------------------------
@naiad.jit
def python_value_of_a_tensor(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    k = int(n)  # MARK
    tl.store(X + offs + k, offs)


def test_a_tensor_has_no_python_value():
    with pytest.raises(TypeError) as info:
        _compile(python_value_of_a_tensor)
    message = assert_located(info.value, python_value_of_a_tensor, "# MARK", at="int(n)")
    assert message.startswith("a tensor has no Python value at compile time")


@naiad.jit
def block_condition(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if offs < n:  # MARK
        tl.store(X + offs, offs)


def test_a_runtime_condition_is_a_scalar():
    with pytest.raises(ValueError) as info:
        _compile(block_condition)
    message = assert_located(info.value, block_condition, "# MARK", at="if")
    assert "scalar" in message and "[16]" in message


@naiad.jit
def _helper_with_a_bad_axis(x):
    return tl.sum(x, axis=3)  # MARK


@naiad.jit
def calls_a_bad_helper(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(X, _helper_with_a_bad_axis(tl.load(X + offs)))  # CALL


def test_an_error_in_a_callee_names_the_call_chain():
    """The language's own `tl.sum` is reported at the user's line that called it, and the
    jit function that called that one is the call chain."""
    with pytest.raises(ValueError) as info:
        _compile(calls_a_bad_helper)
    message = assert_located(info.value, _helper_with_a_bad_axis, "# MARK", at="tl.sum")
    assert "axis" in message
    (caller,) = info.value.call_chain
    _, lineno, col, _ = _position(calls_a_bad_helper, "# CALL", "_helper")
    assert (caller.lineno, caller.col) == (lineno, col)


@naiad.jit
def defined_in_one_branch(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if n > 0:
        y = offs
    tl.store(X + offs, y)  # MARK


def test_a_name_defined_in_one_branch_only_is_explained():
    with pytest.raises(NameError) as info:
        _compile(defined_in_one_branch)
    message = assert_located(info.value, defined_in_one_branch, "# MARK", at="y)")
    assert "only in one branch" in message


@naiad.jit
def return_in_loop(X, n, BLOCK: tl.constexpr):
    for _ in range(n):
        return  # MARK


def test_return_inside_a_loop_is_refused():
    with pytest.raises(naiad.UnsupportedLanguageConstruct) as info:
        _compile(return_in_loop)
    assert_located(info.value, return_in_loop, "# MARK", at="return")


NOT_CONSTEXPR = 3


@naiad.jit
def reads_a_plain_global(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(X + offs, offs * NOT_CONSTEXPR)  # MARK


def test_globals_must_be_constexpr():
    with pytest.raises(NameError) as info:
        _compile(reads_a_plain_global)
    message = assert_located(info.value, reads_a_plain_global, "# MARK", at="NOT_CONSTEXPR")
    assert "tl.constexpr" in message


@naiad.jit
def static_assert_fails(X, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK > 64, "BLOCK too small")  # MARK


def test_static_assert_is_located():
    with pytest.raises(naiad.CompileTimeAssertionFailure) as info:
        _compile(static_assert_fails)
    message = assert_located(info.value, static_assert_fails, "# MARK", at="tl.static_assert")
    assert "BLOCK too small" in message
