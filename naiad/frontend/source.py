"""A jit function's source as the code generator reads it: its AST at absolute file positions,
its names (globals, closure cells, parameters), and the facts about its AST it asks repeatedly.

The AST is parsed once per function and cached (a warm compile of another specialization skips
the parse). Line numbers are the file's own (not counted from `def`) and columns are shifted by
the indentation `textwrap.dedent` removed, so locations point at the user's real text.
"""

from __future__ import annotations

import ast
import collections
import functools
import inspect
import linecache
import textwrap
import threading
import types
from dataclasses import dataclass, field

from .. import errors, ir
from ..language import constructs, core, dtypes
from ..source_locations import check_parse, source_lines


@dataclass
class FunctionSource:
    """One Python function (the body of a `@naiad.jit` or of a language `@jit` function)."""

    fn: object
    filename: str
    definition: ast.FunctionDef
    signature: inspect.Signature
    constexpr_params: frozenset
    is_user: bool  # in the user's files (errors are reported here) rather than Naiad's
    _facts: dict = field(default_factory=dict)
    _locations: dict = field(default_factory=dict)

    @property
    def globals(self) -> dict:
        return self.fn.__globals__

    @property
    def closure(self) -> dict:
        """The closure's cells as they hold now (read at each compile, like globals)."""
        fn = self.fn
        return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))

    def line(self, lineno: int) -> str:
        return linecache.getline(self.filename, lineno).rstrip("\r\n")

    def location(self, node: ast.AST) -> errors.SourceLocation:
        """The user-facing location of `node`: file, line, 1-based character column."""
        definition = (self.definition.lineno, self.definition.col_offset)
        return errors.source_location(
            self.filename, node.lineno, node.col_offset, self.fn.__name__, definition
        )

    def ir_location(self, node: ast.AST, name: str | None) -> ir.Location:
        """The IR location of `node` (`NameLoc(name, ...)` inside `name = ...`), made once."""
        key = (id(node), name)
        loc = self._locations.get(key)
        if loc is None:
            loc = ir.FileLineColLoc(self.filename, node.lineno, node.col_offset + 1)
            if name:
                loc = ir.NameLoc(name, loc)
            self._locations[key] = loc
        return loc

    def refusal(self) -> constructs.Refusal | None:
        """The first construct of the function that a kernel may not use (constructs.py)."""
        if "refusal" not in self._facts:
            self._facts["refusal"] = constructs.first_refusal(self.definition)
        return self._facts["refusal"]

    def forbidden_global(self) -> str | None:
        """The first global the function reads that a kernel may not (`readable_global`; a
        name it never binds, nor its closure, nor its parameters), or None. The code generator
        refuses it where met; a launch that builds no IR asks first (cpu_first_launch.py)."""
        if "free" not in self._facts:
            bound = {a.arg for a in ast.walk(self.definition.args) if isinstance(a, ast.arg)}
            bound |= set(self.stored_names(self.definition.body, self.definition))
            bound |= set(self.fn.__code__.co_freevars)
            nodes = (n for statement in self.definition.body for n in _walk_body(statement))
            free = (n.id for n in nodes if isinstance(n, ast.Name) and n.id not in bound)
            self._facts["free"] = tuple(dict.fromkeys(free))
        module_globals = self.globals
        for name in self._facts["free"]:
            if name in module_globals and not readable_global(module_globals[name]):
                return name
        return None

    def contains_return(self, node: ast.AST) -> bool:
        """Whether `node` holds a `return` (nested function definitions aside)."""
        key = ("return", id(node))
        if key not in self._facts:
            self._facts[key] = any(isinstance(n, ast.Return) for n in _walk_body(node))
        return self._facts[key]

    def stored_names(self, body: list, node: ast.AST) -> frozenset:
        """The names the statements `body` (of loop `node`) assign: the candidates to be carried
        through the loop."""
        key = ("stored", id(node))
        if key not in self._facts:
            names = set()
            for stmt in body:
                for n in _walk_body(stmt):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        names.add(n.id)
            self._facts[key] = frozenset(names)
        return self._facts[key]


def readable_global(value) -> bool:
    """Whether a kernel may read a global holding `value`: a compile-time fact, as in Triton (a
    constexpr, a dtype, a jit function, a module, a function or a class)."""
    if isinstance(value, core.constexpr | dtypes.dtype) or getattr(value, "__naiad_jit__", False):
        return True
    return isinstance(value, types.ModuleType) or callable(value)


def _walk_body(node: ast.AST):
    """`ast.walk` that does not enter nested functions, lambdas or classes."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


@functools.lru_cache(maxsize=64)
def function_source(fn) -> FunctionSource:
    """The parsed source of `fn` (a plain Python function), cached per function object, its
    AST per code object (`_definition`)."""
    definition = _definition(fn)
    signature = inspect.signature(fn)
    filename = fn.__code__.co_filename
    return FunctionSource(
        fn=fn,
        filename=filename,
        definition=definition,
        signature=signature,
        constexpr_params=frozenset(
            name for name, p in signature.parameters.items() if _is_constexpr(p.annotation)
        ),
        is_user=errors.is_user_file(filename),
    )


# The ASTs kept, by code object: the functions a `def` makes each time it runs (a kernel defined
# in a parametrized test: 582 kernels of 167 code objects in Triton's test_core subset) share
# their code and so their source, parsed once. The frontend reads an AST and never changes it.
# A parsed function holds a few hundred objects, which every full collection walks and the
# interpreter's exit collects several times: 512 kept were 150,000 of the 495,000 objects of
# that subset at its end, whose exit after the last test took 2.1 s, 1.5 s with 64 kept.
_PARSED: collections.OrderedDict = collections.OrderedDict()
_PARSED_LOCK = threading.Lock()  # (the background compile's frontend reads it too)
PARSED_KEPT = 64


def _definition(fn) -> ast.FunctionDef:
    """The `def` of `fn` at its file's lines and columns, parsed once per code object."""
    code = fn.__code__
    with _PARSED_LOCK:
        definition = _PARSED.get(code)
        if definition is not None:
            _PARSED.move_to_end(code)
            return definition
    check_parse()
    try:
        lines, first_line = source_lines(fn)
    except (OSError, TypeError) as exc:
        raise TypeError(f"cannot read the source of {fn!r}: {exc}") from None
    indent = len(lines[0]) - len(lines[0].lstrip())
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first_line - 1)
    if indent:
        for node in ast.walk(tree):
            if hasattr(node, "col_offset"):
                node.col_offset += indent
    definition = tree.body[0]
    if not isinstance(definition, ast.FunctionDef):
        raise TypeError(
            f"a jit function must be defined with `def`, got {type(definition).__name__}"
        )
    with _PARSED_LOCK:
        _PARSED[code] = definition
        while len(_PARSED) > PARSED_KEPT:
            _PARSED.popitem(last=False)
    return definition


def _is_constexpr(annotation) -> bool:
    """`x: tl.constexpr` (also spelled as a string, as `from __future__ import annotations`
    leaves every annotation)."""
    if annotation is core.constexpr:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"


def names_constexpr(annotation: ast.AST) -> bool:
    """Whether an annotation expression spells `constexpr` (`tl.constexpr`, `constexpr`)."""
    if isinstance(annotation, ast.Attribute):
        return annotation.attr == "constexpr"
    if isinstance(annotation, ast.Name):
        return annotation.id == "constexpr"
    return isinstance(annotation, ast.Constant) and annotation.value == "constexpr"
