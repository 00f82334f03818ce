"""Op definitions of the dialects, one folder per dialect (its ops by topic, and `syntax.py`,
the hand-written syntax of its ops that have one): TTIR's `tt`, `arith`, `math`, `scf`, `cf`,
`ub`, the one op of `llvm` Triton's TTIR holds, `gpu.barrier` of hand-written IR; `ttg`
(TTGIR; `ttg/barrier.py` is the one of its ops TTIR holds) and `ttng` (its Hopper ops); and
upstream MLIR's `func`, `linalg`, `tensor`, `memref` and `bufferization` for the Linalg
middle layer. Importing this package registers
every op, type and attribute, and then every syntax (`syntax/` holds what the syntaxes share).

    from . import arith, scf, tt
    tt.AddPtrOp(ptrs, offsets); arith.CmpIOp("slt", a, b); scf.ForOp(lb, ub, step, [acc])

base.py states the conventions the printer and parser read: `assembly_format` (upstream ODS
text), `custom_syntax` (upstream C++ printer), enum attributes (`EnumAttr`), `type_inference`
and `TypeClass` / `TypeIs` constraints; and `attribute_defaults` (tt/memory.py).
"""

# Each dialect registers its ops, types and attributes as it is imported; `syntax` last, the
# hand-written syntaxes of the ops that have one (each dialect's `syntax.py`).
from . import (  # noqa: F401
    arith,
    bufferization,
    cf,
    func,
    gpu,
    linalg,
    llvm,
    math,
    memref,
    scf,
    syntax,
    tensor,
    tt,
    ttg,
    ttng,
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
    "ttng",
    "gpu",
    "llvm",
    "func",
    "linalg",
    "memref",
    "bufferization",
    "tensor",
)
