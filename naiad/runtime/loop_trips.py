"""The trip counts of a kernel's `scf.for` loops, read from its TTIR text and a launch's integer
arguments, for tiering's estimate of a launch's work (cpu_tiering.py).

A loop's bounds mostly come from arguments (`for i in range(tl.cdiv(n, BLOCK))`), so the TTIR
alone does not say how long a launch runs: a grid-stride loop over a 33-million-element tensor on
two programs of two elements looks as small as a loop of four trips, and interpreted it runs for
hours where it compiles in a second. At launch the arguments and the grid are known, and the
scalar arithmetic between them and a loop's bounds (constants, `arith` integer ops, extensions
and truncations, program ids and counts) is evaluated here on the printed TTIR. A bound that
depends on anything else (a loaded value, an enclosing loop's variable) gives no count. The text
is read, not a module: a kernel whose TTIR came from the disk cache has no module in memory.
"""

from __future__ import annotations

import numbers
import re

_NAME = r"%[\w.$-]+"
# A function's signature is printed on its first line, parameters with their locations.
_FUNCTION = re.compile(r"\btt\.func\b(?P<visibility>\s+public)?\s+@[\w.$-]+\((?P<params>.*)")
_PARAMETER = re.compile(rf"({_NAME})\s*:\s*i\d+\b")
_DEFINITION = re.compile(rf"^\s*({_NAME})\s*=\s*arith\.(\w+)\s+([^:]*?)\s*:")
_FOR = re.compile(rf"\bscf\.for\s+{_NAME}\s*=\s*({_NAME})\s+to\s+({_NAME})\s+step\s+({_NAME})")
_INTEGER = re.compile(r"^-?\d+$")
_DEFINED = re.compile(rf"({_NAME})(?::\d+)?\s*=(?!=)")
_NAMES = re.compile(_NAME)
_BLOCK = re.compile(r"^\s*\^bb")
_PROGRAM = re.compile(rf"^\s*({_NAME})\s*=\s*tt\.get_(program_id|num_programs)\s+([xyz])\b")


# The folder's rules for arith's integer ops (dialects/arith/folding.py), at 64 bits: the TTIR's
# i32 wrap-around is not modelled, which an estimate can afford. (Imported where used: there is
# TTIR text to read only once the dialects are loaded, which a launch the interpreter runs
# first does not load.)
_WIDTH = 64
_UNARY = ("extsi", "extui", "trunci", "index_cast", "index_castui")


def _evaluate(op: str, operands: str, known: dict[str, int]) -> int | None:
    if op == "constant":
        return int(operands) if _INTEGER.match(operands) else None
    names = re.findall(_NAME, operands)
    values = [known.get(name) for name in names]
    if None in values:
        return None
    if op in _UNARY and len(values) == 1:
        return values[0]
    from ..dialects.arith.folding import INT_RULES

    if op in INT_RULES and len(values) == 2:
        result = INT_RULES[op](values[0], values[1], _WIDTH)
        return result if isinstance(result, int) else None  # a division by zero: not folded
    return None


def trip_counts(ttir: str, arguments: dict, grid: tuple | None = None) -> list[int | None]:
    """One entry per `scf.for` of `ttir`, in textual order: its trip count (0 or more), or None
    where its bounds are not known from constants, the public function's integer `arguments`
    (a launch's, by the kernel's parameter names, which name the TTIR's) and the launch's
    3-D `grid` (`tl.num_programs`; a program id is taken at each end of the grid, and a loop
    counts the larger of its two trip counts: `range(pid, n, step)` runs longest at 0)."""
    first = _counts(ttir, arguments, grid, last_program=False)
    last = _counts(ttir, arguments, grid, last_program=True)
    return [None if a is None or b is None else max(a, b) for a, b in zip(first, last)]


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def enclosing_loops(ttir: str) -> list[int | None]:
    """One entry per `scf.for` of `ttir`, in the order of `trip_counts`: the index of the
    innermost `scf.for` whose body holds it, or None. Read from the braces of the printed
    regions (strings, which may hold braces, left out): a loop's body opens on its line."""
    parents: list[int | None] = []
    open_loops: list[tuple[int, int]] = []  # (index, the depth inside its body)
    depth = 0
    for line in ttir.splitlines():
        code = _STRING.sub('""', line)
        if _FOR.search(code) is not None:
            parents.append(open_loops[-1][0] if open_loops else None)
            open_loops.append((len(parents) - 1, depth + 1))
        depth += code.count("{") - code.count("}")
        while open_loops and depth < open_loops[-1][1]:
            open_loops.pop()
    return parents


def _counts(ttir: str, arguments: dict, grid: tuple | None, last_program: bool) -> list:
    counts: list[int | None] = []
    known: dict[str, int] = {}
    for line in ttir.splitlines():
        function = _FUNCTION.search(line)
        if function is not None:  # names are the function's own: start again
            known = {}
            if function.group("visibility"):
                for name in _PARAMETER.findall(function.group("params")):
                    value = arguments.get(name[1:])
                    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                        known[name] = int(value)
            continue
        loop = _FOR.search(line)
        if loop is not None:
            start, end, step = (known.get(name) for name in loop.groups())
            if None in (start, end, step) or step <= 0:
                counts.append(None)
            else:
                counts.append(max(0, -((start - end) // step)))  # ceil((end - start) / step)
        # The printer reuses names in sibling regions (two loops' `%arg5`): a name this line
        # defines forgets what an earlier region gave it, and then takes its value if known.
        for name in _DEFINED.findall(line) + (_NAMES.findall(line) if _BLOCK.match(line) else []):
            known.pop(name, None)
        definition = _DEFINITION.match(line)
        if definition is not None:
            value = _evaluate(definition.group(2), definition.group(3), known)
            if value is not None:
                known[definition.group(1)] = value
        program = _PROGRAM.match(line)
        if program is not None and grid is not None:
            size = grid["xyz".index(program.group(3))]
            if program.group(2) == "num_programs":
                known[program.group(1)] = size
            else:
                known[program.group(1)] = size - 1 if last_program else 0
    return counts
