"""Op definitions of the dialects TTIR uses, one module per dialect: `tt`, `arith`, `math`,
`scf`, `cf`, `ub`, `ttg` (TTGIR; `ttg_min` holds `ttg.barrier`, the one of its ops TTIR holds),
the single op of `llvm` that Triton's TTIR holds (`llvm_min`). Importing this package registers
every op, type and attribute, and then the hand-written syntaxes of the ops that have one
(`syntax/`).

    from . import arith, scf, tt
    tt.AddPtrOp(ptrs, offsets); arith.CmpIOp("slt", a, b); scf.ForOp(lb, ub, step, [acc])

base.py states the conventions the printer and parser read: `assembly_format` (upstream ODS
text), `custom_syntax` (upstream C++ printer), enum attributes (`EnumAttr`), `type_inference`
and `TypeClass` / `TypeIs` constraints; and `attribute_defaults` (tt_memory.py).
"""

from . import (  # noqa: F401
    arith,
    bufferization,
    cf,
    func,
    linalg,
    llvm_min,
    math,
    memref,
    scf,
    syntax,
    tensor,
    tt,
    ttg,
    ttg_min,
    ub,
)

DIALECTS = (
    "tt",
    "arith",
    "math",
    "scf",
    "cf",
    "ub",
    "ttg",
    "llvm",
    "func",
    "linalg",
    "memref",
    "bufferization",
    "tensor",
)
