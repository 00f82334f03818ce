"""Lexical pieces of MLIR's spelling shared by types, attributes, locations and (later) the printer.

Each follows MLIR's AsmPrinter exactly, so that what Naiad prints, MLIR and Triton read, and back.
"""

from __future__ import annotations


def is_bare_identifier(name: str) -> bool:
    """True where MLIR prints `name` unquoted: `(letter|_) (letter|digit|_|$|.)*`, ASCII only."""
    if not name or not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        return False
    return all(c.isascii() and (c.isalnum() or c in "_$.") for c in name[1:])


def escape_string(text: str) -> str:
    """MLIR's printEscapedString: printable ASCII as is, `\\` doubled, anything else as `\\XX`.

    It works on UTF-8 bytes, as LLVM does, so a non-ASCII character becomes several `\\XX`.
    """
    if text.isascii() and text.isprintable() and "\\" not in text and '"' not in text:
        return text  # nothing to escape: every location's file name, 500 times a module
    return escape_bytes(text)


def escape_bytes(text: str) -> str:
    """`escape_string`'s rule applied byte by byte, with no shortcut."""
    out = []
    for byte in text.encode("utf-8"):
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and byte != 0x22:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:02X}")
    return "".join(out)


def quote_string(text: str) -> str:
    """`text` as an MLIR string literal, quotes included."""
    return f'"{escape_string(text)}"'


def keyword_or_string(name: str) -> str:
    """A name bare where MLIR allows it (attribute-dictionary keys, symbol names), else quoted."""
    return name if is_bare_identifier(name) else quote_string(name)


def dialect_symbol(prefix: str, dialect: str, body: str) -> str:
    """`!dialect.body` / `#dialect.body` when `body` is `ident<...>`, else `!dialect<body>`.

    This is MLIR's "pretty dialect symbol" rule: `!tt.ptr<f32>`, but `#tt<cache none>`.
    """
    return f"{prefix}{dialect}.{body}" if _is_pretty(body) else f"{prefix}{dialect}<{body}>"


def _is_pretty(body: str) -> bool:
    if not body or not (body[0].isascii() and body[0].isalpha()):
        return False
    i = 0
    while i < len(body) and body[i].isascii() and (body[i].isalnum() or body[i] in "._"):
        i += 1
    rest = body[i:]
    return not rest or (rest[0] == "<" and rest[-1] == ">")
