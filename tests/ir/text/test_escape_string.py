"""escape_string (ir/syntax.py) spells a string as MLIR's printEscapedString does: printable ASCII
as is, a backslash doubled, every other UTF-8 byte (the quote, controls, DEL, non-ASCII) as
`\\XX`. Strings with nothing to escape take a shortcut; seeded random strings mixing every kind
of character check it against the byte-by-byte rule (`escape_bytes`), whose own spelling the
fixed cases check."""

import random

from naiad.ir.syntax import escape_bytes, escape_string, quote_string


def test_each_kind_of_character():
    assert escape_string("/work/kernels.py") == "/work/kernels.py"
    assert escape_string("") == ""
    assert escape_string('a"b\\c\n\x7f') == "a\\22b\\\\c\\0A\\7F"
    assert escape_string("é") == "\\C3\\A9"
    assert quote_string("x y") == '"x y"'


def test_random_strings_match_the_byte_rule():
    rng = random.Random(18)
    plain = [chr(c) for c in range(0x20, 0x7F) if chr(c) not in '"\\']
    others = ['"', "\\", "\n", "\t", "\x00", "\x7f", "é", "→"]
    for _ in range(2000):
        pool = plain if rng.random() < 0.5 else plain + others  # half of them: the shortcut
        text = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 40)))
        assert escape_string(text) == escape_bytes(text), repr(text)
