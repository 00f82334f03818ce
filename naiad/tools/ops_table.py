"""The table of ops × where they run (docs/ops.md), made from the registries themselves.

    python -m naiad.tools.ops_table > docs/ops.md

For every op the package registers, what each executor has for it:

- interpreter: the interpreter runs the language, not ops: its one table by op is that of the
  elementwise ops (interpreter/elementwise.py); every other op of the language's dialects it
  runs as the language builtin that makes it ("language");
- evaluator: a handler that runs it on NumPy (runtime/evaluator; "refused" where it is declared
  but says why it cannot run);
- CPU: a TTIR op the Linalg conversion converts (an elementwise op through the scalar lowering),
  or a Linalg/memref/tensor op the CPU code generation lowers;
- NVIDIA: a lowering to LLVM IR (backends/nvidia/lowering).

tests/house/test_ops_table.py checks that docs/ops.md is what this prints, so a missing lowering
shows in review.
"""

from __future__ import annotations

from .. import dialects, passes  # noqa: F401  (registers the ops)
from ..backends.cpu.codegen import module as _cpu_codegen  # noqa: F401  (fills OP_LOWERINGS)
from ..backends.cpu.codegen.function import OP_LOWERINGS as CPU_CODEGEN
from ..backends.cpu.lower_scalar import LOWERINGS as CPU_SCALAR
from ..backends.nvidia.lowering.context import LOWERINGS as NVIDIA
from ..ir import Elementwise
from ..ir.opdef import registered_ops
from ..middle.linalg.conversion import load_converters
from ..runtime.evaluator import HANDLERS
from ..runtime.evaluator.errors import UnsupportedOpError
from ..runtime.interpreter.elementwise import BINARY, CONVERSIONS, UNARY

# The dialects of TTIR: what the language's builtins make.
LANGUAGE_DIALECTS = ("tt", "arith", "math", "scf", "cf", "ub")
_INTERPRETED = set(BINARY) | set(UNARY) | set(CONVERSIONS)
CONVERTERS = load_converters()


def _interpreter(cls) -> str:
    if cls.name in _INTERPRETED:
        return "yes"
    return "language" if cls.name.split(".")[0] in LANGUAGE_DIALECTS else ""


def _evaluator(cls) -> str:
    handler = HANDLERS.get(cls.name)
    if handler is None:
        return ""
    return "refused" if _refuses(handler) else "yes"


def _refuses(handler) -> bool:
    """Whether `handler` is one that `evaluator.errors.unsupported` made (it only raises)."""
    try:
        handler(None, None, [])
    except UnsupportedOpError:
        return True
    except Exception:  # a real handler, called without an op: it fails some other way
        return False
    return False


def _cpu(cls) -> str:
    elementwise = Elementwise in getattr(cls, "traits", ())
    if cls.name in CONVERTERS or cls.name in CPU_CODEGEN:
        return "yes"
    if cls.name in CPU_SCALAR and (elementwise or cls.name.split(".")[0] not in ("tt",)):
        return "yes"
    return ""


def _nvidia(cls) -> str:
    return "yes" if cls.name in NVIDIA else ""


def rows() -> list[tuple[str, str, str, str, str]]:
    """(op, interpreter, evaluator, CPU, NVIDIA) for every registered op, sorted by name."""
    ops = sorted({cls.name: cls for cls in registered_ops()}.values(), key=lambda c: c.name)
    return [(c.name, _interpreter(c), _evaluator(c), _cpu(c), _nvidia(c)) for c in ops]


def table() -> str:
    """docs/ops.md's text."""
    lines = [
        "# Ops and where they run",
        "",
        "Made by `python -m naiad.tools.ops_table` from the registries (a test checks that it is",
        "current). *interpreter*: `yes` for the elementwise ops of its table, `language` for the",
        "other ops of TTIR, which it runs as the builtin that makes them; *evaluator*: the",
        "reference evaluator runs it (`refused`: declared, with the reason it cannot); *CPU*: the",
        "Linalg conversion or the CPU code generation handles it; *NVIDIA*: the lowering to LLVM",
        "IR does. An empty cell is an op that executor does not take.",
        "",
        "| op | interpreter | evaluator | CPU | NVIDIA |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| `{name}` | {a} | {b} | {c} | {d} |" for name, a, b, c, d in rows()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(table(), end="")
