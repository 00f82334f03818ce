"""TTIR passes, one per module, each registered by name (see `naiad.ir.passes`).

Importing this package registers every pass, so `PassManager(["cse", "dce"])` and `naiad-opt -p`
find them by name.
"""

from . import (  # noqa: F401
    analysis,
    canonicalize,
    combine,
    cse,
    dce,
    drop_layouts,
    fuse_nested_loops,
    inline,
    licm,
    loop_unroll,
    symbol_dce,
)
