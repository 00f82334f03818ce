"""TTIR passes, one per module, each registered by name (see `naiad.ir.passes`).

Importing this package registers every pass, so `PassManager(["cse", "dce"])` and `naiad-opt -p`
find them by name.
"""

from . import analysis, canonicalize, combine, cse, dce, inline, licm, loop_unroll, symbol_dce  # noqa: F401
