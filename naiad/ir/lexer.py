"""The lexical layer of the MLIR text parser: a cursor over the source with one regex per token.

Every token pattern ends by swallowing the whitespace and `//` comments after it, so the cursor
always rests on the next token and one `match` call reads one token. The parser asks for the
token it expects at each point (a type, an SSA name, a punctuation mark) rather than reading a
token stream, which lets context-dependent spellings (`128x64xf32`, `0x7F800000`) lex directly.
"""

from __future__ import annotations

import bisect
import re

from .errors import IRError

_TAIL = r"(?:\s+|//[^\n]*)*"

BARE_ID = re.compile(r"([A-Za-z_][A-Za-z0-9_$.]*)" + _TAIL)
KEYWORD = re.compile(r"([A-Za-z_][A-Za-z0-9_$.\-]*)" + _TAIL)
SSA_USE = re.compile(r"%([A-Za-z0-9_$.\-]+)(?:#(\d+))?" + _TAIL)
SSA_DEF = re.compile(r"%([A-Za-z0-9_$.\-]+)(?::(\d+))?" + _TAIL)
BLOCK_ID = re.compile(r"\^([A-Za-z0-9_$.\-]+)" + _TAIL)
SYMBOL = re.compile(r'@(?:([A-Za-z_][A-Za-z0-9_$.]*)|"((?:[^"\\\n]|\\.)*)")' + _TAIL)
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"' + _TAIL)
INTEGER = re.compile(r"(-?(?:0x[0-9a-fA-F]+|[0-9]+))(?![.0-9a-zA-Z_])" + _TAIL)
FLOAT = re.compile(r"([-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?)" + _TAIL)
NUMBER = re.compile(r"(-?(?:0x[0-9a-fA-F]+|[0-9]+(\.[0-9]*(?:[eE][-+]?[0-9]+)?)?))" + _TAIL)
HASH_ID = re.compile(r"#([A-Za-z_][A-Za-z0-9_$.\-]*|[0-9]+)" + _TAIL)
BANG_ID = re.compile(r"!([A-Za-z_][A-Za-z0-9_$.\-]*|[0-9]+)" + _TAIL)
SPACE = re.compile(_TAIL)
_NEWLINE = re.compile(r"\n")
_NEXT_TOKEN = re.compile(r"\s*([A-Za-z0-9_$.%#^@!\-]+|\S)")

_PUNCT: dict[str, re.Pattern] = {}
_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{2})|(.))", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def punct_pattern(text: str) -> re.Pattern:
    """The pattern of a literal token (`,`, `->`, `to`, ...) followed by trailing space. A
    keyword-like literal must not run on into an identifier (`to` does not match `total`)."""
    pattern = _PUNCT.get(text)
    if pattern is None:
        guard = r"(?![A-Za-z0-9_$.])" if text[-1].isalnum() or text[-1] == "_" else ""
        pattern = _PUNCT[text] = re.compile(re.escape(text) + guard + _TAIL)
    return pattern


def integer_value(text: str) -> int:
    """The value of an integer literal: decimal (leading zeros allowed, as MLIR reads them) or
    `0x` hexadecimal, optionally negative."""
    body = text.lstrip("-")
    value = int(body, 16) if body.startswith("0x") else int(body, 10)
    return -value if text.startswith("-") else value


def unescape(body: str) -> str:
    """The value of a string literal's body: MLIR's escapes (`\\"`, `\\\\`, `\\n`, `\\t`, `\\XX`
    as a byte) decoded; bytes are read as UTF-8, as they were written."""
    if "\\" not in body:
        return body
    out = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(body):
        out += body[pos : m.start()].encode("utf-8")
        if m.group(1) is not None:
            out.append(int(m.group(1), 16))
        else:
            out += _SIMPLE_ESCAPES.get(m.group(2), "\\" + m.group(2)).encode("utf-8")
        pos = m.end()
    out += body[pos:].encode("utf-8")
    return out.decode("utf-8", errors="surrogateescape")


class ParseError(IRError):
    """A syntax error, reported as MLIR reports them: `FILE:line:col: error: message`."""

    def __init__(self, message: str, filename: str, line: int, col: int):
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        super().__init__(f"{filename}:{line}:{col}: error: {message}")


class Lexer:
    """A cursor over `text`; `pos` always rests on the start of the next token (or the end)."""

    __slots__ = ("_line_starts", "filename", "pos", "text")

    def __init__(self, text: str, filename: str = "-"):
        self.text = text
        self.filename = filename
        self._line_starts: list[int] | None = None
        self.pos = SPACE.match(text).end()

    # -- positions and errors

    def line_col(self, pos: int | None = None) -> tuple[int, int]:
        """1-based line and column of `pos` (default: the cursor); O(log n) after the first."""
        pos = self.pos if pos is None else pos
        starts = self._line_starts
        if starts is None:
            starts = self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(self.text)]
        line = bisect.bisect_right(starts, pos)
        return line, pos - starts[line - 1] + 1

    def error(self, message: str, pos: int | None = None) -> ParseError:
        """A ParseError at `pos` (default: the cursor), to be raised by the caller."""
        line, col = self.line_col(pos)
        return ParseError(message, self.filename, line, col)

    def describe_next(self) -> str:
        """The next token, quoted, for messages: `'foo'`, or `end of file`."""
        m = _NEXT_TOKEN.match(self.text, self.pos)
        return "end of file" if m is None else f"'{m.group(1)}'"

    # -- reading tokens

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self, text: str) -> bool:
        """Whether the source continues with `text` at the cursor (nothing consumed)."""
        return self.text.startswith(text, self.pos)

    def next_char(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def take(self, pattern: re.Pattern) -> re.Match | None:
        """Match `pattern` at the cursor and move past it (and the space after it)."""
        m = pattern.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
        return m

    def accept(self, text: str) -> bool:
        """Consume the literal token `text` if it comes next."""
        if not self.text.startswith(text, self.pos):
            return False
        pattern = _PUNCT.get(text) or punct_pattern(text)
        m = pattern.match(self.text, self.pos)
        if m is None:
            return False
        self.pos = m.end()
        return True

    def expect(self, text: str, context: str = "") -> None:
        """Consume the literal token `text`, or raise `expected 'text'`."""
        if self.text.startswith(text, self.pos):
            m = (_PUNCT.get(text) or punct_pattern(text)).match(self.text, self.pos)
            if m is not None:
                self.pos = m.end()
                return
        where = f" {context}" if context else ""
        raise self.error(f"expected '{text}'{where}, found {self.describe_next()}")

    def skip_space(self) -> None:
        self.pos = SPACE.match(self.text, self.pos).end()
