"""The text tests read real dialects and Triton's dumps; the toy dialect of the IR core's tests
(tests/ir/unit/ir_toy.py) is importable too."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "unit"))

import naiad.dialects  # noqa: E402, F401  (registers the ops and their syntax)
import naiad.dialects.syntax  # noqa: E402, F401
