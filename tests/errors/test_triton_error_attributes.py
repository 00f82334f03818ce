"""A located error has the attributes of Triton's `CompilationError` (and of its
`CompileTimeAssertionFailure` and `UnsupportedLanguageConstruct`): `error_message` (the message
alone), `message` (the whole text, as `str`), `src` (the source of the function the error is in,
from its `def`), `node` (the AST node of the error in that source: line 1 is the `def`), and
`__cause__`; it pickles as itself, as compile workers send errors back. In the interpreter and
compiled for the CPU alike."""

import ast
import pickle

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.errors import CompileTimeAssertionFailure, UnsupportedLanguageConstruct


@naiad.jit
def bad_axis_kernel(X):
    x = tl.load(X + tl.arange(0, 4))
    tl.store(X + tl.arange(0, 4), tl.expand_dims(x, 3))


@naiad.jit
def failed_static_assert_kernel(X, N: tl.constexpr):
    tl.static_assert(N % 2 == 0, "N must be even")
    tl.store(X, 1.0)


@naiad.jit
def lambda_kernel(X):
    double = lambda y: y * 2
    tl.store(X, double(1.0))


CASES = [
    # kernel, its arguments, the error's class, its message, the text at its node, the node's kind
    (bad_axis_kernel, (), ValueError, "invalid axis 3", "tl.expand_dims(x, 3)", ast.Call),
    (
        failed_static_assert_kernel,
        (3,),
        CompileTimeAssertionFailure,
        "N must be even",
        "tl.static_assert(",
        ast.Call,
    ),
    (lambda_kernel, (), UnsupportedLanguageConstruct, "`lambda`", "lambda y: y * 2", ast.Lambda),
]


def _raised(kernel, args, backend):
    x = np.random.default_rng(5).standard_normal(4).astype(np.float32)
    with knobs.override(NAIAD_BACKEND=backend), pytest.raises(naiad.CompilationError) as info:
        kernel[(1,)](x, *args)
    return info.value


def _text_at(error) -> str:
    """The source text from the error's node on, read the way Triton's errors read it."""
    line = error.src.splitlines()[error.node.lineno - 1]
    return line.encode("utf-8")[error.node.col_offset :].decode("utf-8")


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case[0].__name__)
def test_a_located_error_has_triton_s_attributes(backend, case):
    kernel, args, kind, words, at, node_kind = case
    error = _raised(kernel, args, backend)
    assert isinstance(error, kind)
    assert words in error.error_message and error.error_message in str(error)
    assert error.message == str(error) and str(error).startswith(f"{error.location}: error: ")
    assert error.src.startswith(f"def {kernel.__name__}(")
    assert isinstance(error.node, node_kind) and _text_at(error).startswith(at)
    # The node is where the error says it is (`at L:C:`, counted from the `def`).
    line, column = error.location.in_function
    assert f"at {line}:{column}:" in str(error)
    assert (error.node.lineno, error.node.col_offset) == (line, column)  # ASCII source


def test_the_cause_is_kept_where_another_error_caused_it():
    error = _raised(bad_axis_kernel, (), "interpreter")
    assert "invalid axis 3" in str(error.__cause__)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case[0].__name__)
def test_a_located_error_pickles_as_itself(case):
    kernel, args, kind = case[:3]
    error = _raised(kernel, args, "cpu")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and isinstance(copy, kind)
    assert str(copy) == str(error) and copy.error_message == error.error_message
    assert copy.location == error.location and ast.dump(copy.node) == ast.dump(error.node)


def test_an_error_without_a_location_has_no_node_or_source():
    error = naiad.CompilationError("something is wrong")
    assert error.node is None and error.src is None
    assert error.error_message == "something is wrong" and error.message == str(error)
    assert str(pickle.loads(pickle.dumps(error))) == str(error)
