"""Python a kernel may not be written in, refused as Triton's code generator refuses it
(language/constructs.py): each construct is an `UnsupportedLanguageConstruct` at its own
file:line:col, in every mode — a compiled launch (without falling back to the interpreter, which
used to run these kernels after a warning), `warmup()` for the CPU and for a GPU, and the
interpreter, which checks the same before running anything."""

import warnings

import numpy as np
import pytest
from diagnostic_checks import assert_located

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.errors import UnsupportedLanguageConstruct

COUNTER = 0


@naiad.jit
def uses_try(out_ptr):
    offs = tl.arange(0, 16)
    try:  # MARK  # noqa: SIM105
        tl.store(out_ptr + offs, offs)
    except ValueError:
        pass


@naiad.jit
def uses_break(out_ptr):
    offs = tl.arange(0, 16)
    for _ in range(4):
        break  # MARK
    tl.store(out_ptr + offs, offs)


@naiad.jit
def uses_continue(out_ptr):
    offs = tl.arange(0, 16)
    for _ in range(4):
        continue  # MARK
    tl.store(out_ptr + offs, offs)


@naiad.jit
def uses_lambda(out_ptr):
    offs = tl.arange(0, 16)
    twice = lambda v: v * 2  # MARK
    tl.store(out_ptr + offs, twice(offs))


@naiad.jit
def uses_nested_def(out_ptr):
    offs = tl.arange(0, 16)

    def twice(v):  # MARK
        return v * 2

    tl.store(out_ptr + offs, twice(offs))


@naiad.jit
def uses_with(out_ptr):
    offs = tl.arange(0, 16)
    with warnings.catch_warnings():  # MARK
        tl.store(out_ptr + offs, offs)


@naiad.jit
def uses_yield(out_ptr):
    offs = tl.arange(0, 16)
    yield offs  # MARK
    tl.store(out_ptr + offs, offs)


@naiad.jit
def uses_yield_from(out_ptr):
    offs = tl.arange(0, 16)
    yield from (offs,)  # MARK
    tl.store(out_ptr + offs, offs)


@naiad.jit
def uses_global(out_ptr):
    global COUNTER  # MARK
    offs = tl.arange(0, 16)
    tl.store(out_ptr + offs, offs)


def _make_uses_nonlocal():
    count = 0

    @naiad.jit
    def uses_nonlocal(out_ptr):
        nonlocal count  # MARK
        offs = tl.arange(0, 16)
        tl.store(out_ptr + offs, offs)

    return uses_nonlocal


uses_nonlocal = _make_uses_nonlocal()


@naiad.jit
def uses_import(out_ptr):
    import math  # MARK

    offs = tl.arange(0, 16)
    tl.store(out_ptr + offs, offs + math.floor(1.5))


@naiad.jit
def uses_match(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, 16)
    match BLOCK:  # MARK
        case 16:
            tl.store(out_ptr + offs, offs)


@naiad.jit
def uses_del(out_ptr):
    offs = tl.arange(0, 16)
    tl.store(out_ptr + offs, offs)
    del offs  # MARK


@naiad.jit
def uses_async_def(out_ptr):
    offs = tl.arange(0, 16)

    async def later(v):  # MARK
        return await v

    tl.store(out_ptr + offs, offs)


@naiad.jit
def uses_starred_target(out_ptr):
    offs = tl.arange(0, 16)
    first, *rest = (offs, offs, offs)  # MARK
    tl.store(out_ptr + first, rest[0])


@naiad.jit
def uses_class(out_ptr):
    offs = tl.arange(0, 16)

    class Pair:  # MARK
        pass

    tl.store(out_ptr + offs, offs)


@naiad.jit
def uses_for_else(out_ptr):
    offs = tl.arange(0, 16)
    for _ in range(4):  # MARK
        offs += 1
    else:
        offs += 2
    tl.store(out_ptr + offs, offs)


@naiad.jit
def uses_while_else(out_ptr):
    offs = tl.arange(0, 16)
    i = 0
    while i < 4:  # MARK
        i += 1
    else:
        i += 2
    tl.store(out_ptr + offs, offs + i)


@naiad.jit
def returns_in_loop(out_ptr):
    offs = tl.arange(0, 16)
    tl.store(out_ptr + offs, offs)
    for _ in range(4):
        return  # MARK


# kernel, where the caret points, what the message names
CONSTRUCTS = {
    "try": (uses_try, "try:", "`try`"),
    "break": (uses_break, "break", "`break`"),
    "continue": (uses_continue, "continue", "`continue`"),
    "lambda": (uses_lambda, "lambda", "`lambda`"),
    "nested def": (uses_nested_def, "def twice", "nested function"),
    "with": (uses_with, "with", "`with`"),
    "yield": (uses_yield, "yield", "`yield`"),
    "yield from": (uses_yield_from, "yield from", "`yield from`"),
    "global": (uses_global, "global", "`global`"),
    "nonlocal": (uses_nonlocal, "nonlocal", "`nonlocal`"),
    "import": (uses_import, "import", "`import`"),
    "match": (uses_match, "match", "`match`"),
    "del": (uses_del, "del", "`del`"),
    "async def": (uses_async_def, "async def", "`async def`"),
    "starred target": (uses_starred_target, "*rest", "starred assignment"),
    "class": (uses_class, "class", "class definitions"),
    "for else": (uses_for_else, "for", "`for ... else`"),
    "while else": (uses_while_else, "while", "`while ... else`"),
    "return in loop": (returns_in_loop, "return", "`return`"),
}


def _launch(kernel, out):
    kernel[(1,)](out, **({"BLOCK": 16} if kernel is uses_match else {}))


def _warmup(kernel, out, target):
    extra = {"BLOCK": 16} if kernel is uses_match else {}
    kernel.warmup(out, grid=(1,), target=target, **extra)


MODES = {
    # A compiled launch refuses it, without falling back to the interpreter (whose warning
    # would be an error here); the test session's default back end is the interpreter.
    "launch": lambda kernel, out: _compiled(kernel, out),
    "warmup cpu": lambda kernel, out: _warmup(kernel, out, "cpu"),
    "warmup cuda": lambda kernel, out: _warmup(kernel, out, "cuda:sm_90a"),
    "interpreter": lambda kernel, out: _interpret(kernel, out),
}


def _hides(mode: str) -> bool:
    """Whether the mode's traceback hides Naiad's frames. TODO(issue 13): `warmup()` is not a
    user-facing entry yet (runtime/jit.py), so its errors show the compiler's frames."""
    return not mode.startswith("warmup")


def _compiled(kernel, out):
    with knobs.override(NAIAD_BACKEND="auto"):
        _launch(kernel, out)


def _interpret(kernel, out):
    with knobs.override(NAIAD_BACKEND="auto", NAIAD_INTERPRET=1):
        _launch(kernel, out)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("construct", list(CONSTRUCTS))
def test_construct_is_refused_at_its_location(construct, mode):
    kernel, at, named = CONSTRUCTS[construct]
    out = np.full(16, -1, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(UnsupportedLanguageConstruct) as info:
            MODES[mode](kernel, out)
    message = assert_located(info.value, kernel, "# MARK", at=at, frames_hidden=_hides(mode))
    assert named in message
    assert "not supported" in message or "Cannot have" in message
    assert info.value.help
    assert not isinstance(info.value, NotImplementedError)  # never a reason to fall back
    assert (out == -1).all()  # nothing ran


@naiad.jit
def breaks_out(x):
    for _ in range(4):
        break  # CALLEE
    return x


@naiad.jit
def calls_breaks_out(out_ptr):
    offs = tl.arange(0, 16)
    tl.store(out_ptr + offs, breaks_out(offs))  # CALLER


@pytest.mark.parametrize("mode", sorted(MODES))
def test_construct_in_a_called_jit_function_is_refused_there(mode):
    out = np.full(16, -1, np.int32)
    with pytest.raises(UnsupportedLanguageConstruct) as info:
        MODES[mode](calls_breaks_out, out)
    message = assert_located(
        info.value, breaks_out, "# CALLEE", at="break", frames_hidden=_hides(mode)
    )
    assert "`break`" in message
    if mode != "interpreter":
        assert info.value.call_chain[0].function == "calls_breaks_out"
    assert (out == -1).all()


def test_refused_kernels_are_exported_as_a_compilation_error():
    assert issubclass(naiad.UnsupportedLanguageConstruct, naiad.CompilationError)
