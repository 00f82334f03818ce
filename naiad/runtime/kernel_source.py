"""A JIT function's source text, where Python cannot read it back: kernels made by `exec` from
a string, and kernels whose source a program replaces (`_unsafe_update_src`, as Triton's tests
and kernel-generating libraries do).

The frontend and the interpreter read a kernel's source with `inspect`, which finds a function's
lines through `linecache` by its code's file name. A function made by `exec` has the file name
`<string>` and no lines there. So the text is found once, registered in `linecache` under a
pseudo-file name of its own (`<naiad source 3: kernel>`, kept for the process, as IPython and
doctest do), and the function compiled again from it, under that name: the same code, now with
readable source. Where the text comes from:

- `exec`: the frames that ran the `exec` hold the string in a variable (Triton's tests keep it in
  `src`); a candidate is accepted only if it compiles to a code object equal to the function's,
  so a string that merely looks alike is never taken for it;
- `_unsafe_update_src(text)`: the program gives it; the new function sees the old one's globals
  and the current values of its closure.
"""

from __future__ import annotations
import __future__

import functools
import hashlib
import inspect
import itertools
import linecache
import sys
import textwrap
import types

from .. import errors
from ..language.aggregates import jit_methods
from ..source_locations import source_lines
from .pickling import KernelReference

_counter = itertools.count(1)
_FRAMES_SEARCHED = 12  # from the decorator up to the code that called `exec`
# Every `from __future__ import` flag: a function's text is compiled again with the flags its
# code was compiled with (annotations as strings or not), never with this module's own.
_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def _compile(text: str, filename: str, fn) -> types.CodeType:
    """`text` compiled as `fn`'s module was: with its code's `__future__` flags only."""
    flags = fn.__code__.co_flags & _FUTURE_FLAGS
    return compile(text, filename, "exec", flags=flags, dont_inherit=True)


def readable(fn):
    """`fn`, or the same function compiled again from its text where `inspect` cannot read
    its source but the text is found (module doc); else `fn` unchanged (compiling it then says
    that its source cannot be read)."""
    if _has_source(fn):
        return fn
    text = _exec_source(fn)
    if text is None:
        return fn
    code = _function_code(_compile(text, _register(fn, text), fn), fn)
    if code is None or code != fn.__code__ or code.co_freevars != fn.__code__.co_freevars:
        return fn
    return _function_like(fn, code, fn.__closure__)


def with_source(fn, text: str):
    """A function like `fn` (globals, defaults, closure) made from `text`, the source of a
    function of the same name (Triton's `src`: from `def`, without decorators). It shares the
    old function's closure cells, so a variable of the enclosing function assigned after the
    kernel was made (empty at the update) is read when the kernel is compiled."""
    text = _from_def(textwrap.dedent(text))
    free = fn.__code__.co_freevars
    # Nested in a maker whose parameters are the closure's names, the new code reads them as
    # free variables too.
    maker = f"def __naiad_make({', '.join(free)}):\n" + textwrap.indent(text, "    ")
    maker += f"\n    return {fn.__name__}\n"
    filename = _register(fn, maker)
    module = _compile(maker, filename, fn)
    (make,) = (c for c in module.co_consts if isinstance(c, types.CodeType))
    codes = [
        c for c in make.co_consts if isinstance(c, types.CodeType) and c.co_name == fn.__name__
    ]
    if len(codes) != 1:
        raise TypeError(f"the new source of `{fn.__name__}` does not define it with `def`")
    cells = dict(zip(free, fn.__closure__ or ()))
    closure = tuple(cells[name] for name in codes[0].co_freevars) or None
    return _function_like(fn, codes[0], closure)


@functools.lru_cache(maxsize=512)
def source_text(fn) -> str:
    """The function's source from its `def` line, dedented, without decorators (Triton's
    `JITFunction.src`). Read once per function object, as the frontend parses it once
    (frontend/source.py): the cache keys made of it describe the text that compiles, and a
    compile no longer reads and tokenizes every file of the kernel's functions three times
    (`inspect` finds a function's lines by tokenizing its file: 10-15 ms of a tutorial 06
    compile)."""
    return _from_def(textwrap.dedent("".join(source_lines(fn)[0])))


def _from_def(text: str) -> str:
    """`text` from its first `def` line on (decorators dropped)."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("def ")]
    return "".join(lines[starts[0] :]) if starts else text


def cache_key(jit_function, seen=None) -> str:
    """A digest of the kernel's source and of the JIT functions its globals name (Triton's
    `JITFunction.cache_key`); a function reached again in a cycle counts by name."""
    seen = set() if seen is None else seen
    seen.add(id(jit_function))
    fn = jit_function.fn
    parts = [fn.__qualname__, source_text(fn)]
    for name in sorted(set(fn.__code__.co_names)):
        value = fn.__globals__.get(name)
        if getattr(value, "__naiad_jit__", False) and hasattr(value, "fn"):
            key = name if id(value) in seen else cache_key(value, seen)
            parts.append(f"{name}={key}")
        elif getattr(value, "__naiad_aggregate__", False):  # an aggregate: its jit methods
            for member, method in jit_methods(value):
                if not hasattr(method, "fn"):
                    continue  # a function of the language's own library
                key = member if id(method) in seen else cache_key(method, seen)
                parts.append(f"{name}.{member}={key}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _has_source(fn) -> bool:
    try:
        source_lines(fn)  # kept: every later reader of the function's lines gets them here
    except (OSError, TypeError):
        return False
    return True


def _exec_source(fn) -> str | None:
    """The string `fn` was made from by `exec`, found in the variables of the frames above."""
    frame = sys._getframe(1)
    marker = f"def {fn.__name__}"
    for _ in range(_FRAMES_SEARCHED):
        if frame is None:
            return None
        for value in list(frame.f_locals.values()):
            if isinstance(value, str) and marker in value and _compiles_to(value, fn):
                return value
        frame = frame.f_back
    return None


def _compiles_to(text: str, fn) -> bool:
    try:
        code = _compile(text, fn.__code__.co_filename, fn)
    except (SyntaxError, ValueError):
        return False
    return _function_code(code, fn) == fn.__code__


def _function_code(code: types.CodeType, fn) -> types.CodeType | None:
    """The code object of `fn`'s function among those `code` defines, at any depth."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == fn.__name__ and const.co_firstlineno == fn.__code__.co_firstlineno:
                return const
            found = _function_code(const, fn)
            if found is not None:
                return found
    return None


def _register(fn, text: str) -> str:
    """A pseudo-file holding `text`, which `inspect` and tracebacks read through linecache;
    its modification time None keeps `linecache.checkcache` from dropping it."""
    filename = f"{errors.USER_SOURCE_PREFIX}{next(_counter)}: {fn.__qualname__}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    return filename


def _function_like(fn, code: types.CodeType, closure):
    made = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    made.__kwdefaults__ = fn.__kwdefaults__
    made.__qualname__ = fn.__qualname__
    made.__module__ = fn.__module__
    made.__doc__ = fn.__doc__
    made.__annotations__ = dict(fn.__annotations__)
    made.__dict__.update(fn.__dict__)
    return made


class JITSource:
    """Mixin for JITFunction: Triton's source surface (`src`, `_unsafe_update_src`,
    `cache_key`)."""

    # A kernel named `test_*` is not a pytest test (pytest would follow `__wrapped__` to it).
    __test__ = False

    @property
    def src(self) -> str:
        return source_text(self.fn)

    @src.setter
    def src(self, value):
        raise AttributeError(
            "Cannot set attribute 'src' directly: use _unsafe_update_src(), as in Triton"
        )

    @property
    def cache_key(self) -> str:
        return cache_key(self)

    def _unsafe_update_src(self, new_src: str) -> None:
        """Replace the kernel's source with `new_src` (from `def`, without decorators): the
        next launch compiles it. Callers that inlined the old source are not told, as in
        Triton."""
        self._replace_function(with_source(self.fn, new_src))

    def _replace_function(self, fn) -> None:
        """Make `fn` the kernel's function: everything made from the old one is dropped."""
        from .params import kernel_params

        free = tuple(p.name for p in self.params if p.do_not_specialize)
        unaligned = tuple(p.name for p in self.params if p.do_not_specialize_on_alignment)
        self.fn = self.__wrapped__ = fn
        self.__globals__ = fn.__globals__
        self._reference = KernelReference.of(fn)
        self.signature = inspect.signature(fn)
        self.params = kernel_params(fn, free, unaligned)
        self.arg_names = [p.name for p in self.params]
        self.params_by_name = {p.name: p for p in self.params}
        self._interpreted = None
        self._binder = self._entry = None
        self.forget_compiled()
