"""`naiad-opt --split-input-file --verify-diagnostics`: tests of the errors Naiad reports, as
MLIR's `invalid.mlir` files are written.

    // expected-error @+1 {{requires the same type for all operands}}
    %a = "arith.addi"(%x, %y) : (i32, i64) -> i32
    // -----
    ...

Each part between `// -----` lines is processed on its own (with its lines numbered as in the
whole file); each `expected-error` names the line of the error (`@+N`: N lines below, `@-N`:
above, none: its own line) and a piece of its message. The check passes when every part's error
was expected and every expectation was met.
"""

from __future__ import annotations

import re

SEPARATOR = re.compile(r"^// -----\s*$", re.MULTILINE)
_EXPECTED = re.compile(r"//\s*expected-error\s*(?:@([+-]\d+))?\s*\{\{(.*?)\}\}")
_LOCATED = re.compile(r"^[^:]*:(\d+):(\d+): error: (.*)$", re.DOTALL)


def split_input(text: str) -> list[str]:
    """The parts of `text` between separator lines, each padded with the blank lines that keep
    its line numbers those of the whole file."""
    parts, start = [], 0
    for match in SEPARATOR.finditer(text):
        parts.append("\n" * text.count("\n", 0, start) + text[start : match.start()])
        start = match.end()
    parts.append("\n" * text.count("\n", 0, start) + text[start:])
    return parts


def _expectations(text: str) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPECTED.search(line)
        if match:
            found.append((number + int(match.group(1) or 0), match.group(2)))
    return found


def unmet_expectations(chunks: list[str], errors: list[str], filename: str) -> list[str]:
    """What differs between the errors reported (one line each) and those expected by the
    comments of `chunks`: unexpected errors, and expectations no error met."""
    expected = [e for chunk in chunks for e in _expectations(chunk)]
    problems = []
    for error in errors:
        located = _LOCATED.match(error)
        hit = None
        if located:
            line, message = int(located.group(1)), located.group(3)
            hit = next((e for e in expected if e[0] == line and e[1] in message), None)
        if hit is None:
            problems.append(f"unexpected error: {error}")
        else:
            expected.remove(hit)
    problems += [
        f"{filename}:{line}: expected error not produced: {{{{{text}}}}}" for line, text in expected
    ]
    return problems
