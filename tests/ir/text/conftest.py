"""The text tests read real dialects and Triton's dumps; the toy dialect of the IR core's tests
(tests/ir/unit/ir_toy.py) is importable too."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "unit"))

import naiad.dialects
import naiad.dialects.syntax  # noqa: F401
