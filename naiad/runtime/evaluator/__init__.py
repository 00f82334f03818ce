"""The reference evaluator: executes a TTIR module op by op on NumPy, with the interpreter's
meanings (its elementwise table, conversions, checked memory, reductions and dots), so that a
module can be run before and after a pass, or against a back end, on the same inputs.

    from . import evaluate
    evaluate(module, "add_kernel", [x, y, out, n], grid=(4,))

ARCHITECTURE.md ("The IR") says why it exists; engine.py how it runs; values.py how signless
values are held.
"""

from ..interpreter.builder import DeviceAssertionError
from ..interpreter.memory import OutOfBoundsAccess
from .engine import Evaluator, evaluate
from .errors import HANDLERS, EvaluationError, UnsupportedOpError

__all__ = [
    "HANDLERS",
    "DeviceAssertionError",
    "EvaluationError",
    "Evaluator",
    "OutOfBoundsAccess",
    "UnsupportedOpError",
    "evaluate",
]
