"""Round-trip helpers shared by the text tests."""

from naiad.ir.equality import assert_structurally_equal
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module


def round_trip(module, **options):
    """print -> parse; asserts the result is structurally equal to `module` in everything
    the text holds (locations only where they were printed). Returns (text, parsed)."""
    printed = set()
    text = print_module(module, record=printed, **options)
    parsed = parse_module(text, "roundtrip.mlir")
    locations = printed.__contains__ if options.get("locations", True) else False
    assert_structurally_equal(module, parsed, locations=locations)
    return text, parsed
