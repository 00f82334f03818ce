"""Hand-written syntax of the ops whose upstream printer and parser are C++ (`custom_syntax`
in their declarations), one `syntax.py` in each dialect's folder, registered by op name in
`naiad.ir.asm_syntax`. Also the result names MLIR's `getAsmResultNames` gives
(`%c1024_i32`, `%cst`) and the body parsers of dialect types (`!tt.ptr<f32>`).

Importing `naiad.dialects` imports this package, which imports every dialect's syntax and holds
what they share (common.py, function.py, view_like.py); the IR core finds the registrations by
name, so it never imports a dialect.
"""

from ..arith import syntax as arith  # noqa: F401
from ..bufferization import syntax as bufferization  # noqa: F401
from ..func import syntax as func  # noqa: F401
from ..linalg import syntax as linalg  # noqa: F401
from ..llvm import syntax as llvm  # noqa: F401
from ..memref import syntax as memref  # noqa: F401
from ..scf import syntax as scf  # noqa: F401
from ..tensor import syntax as tensor  # noqa: F401
from ..tt import syntax as tt  # noqa: F401
from ..ttg import partitions_syntax as ttg_partitions  # noqa: F401
from ..ttg import syntax as ttg  # noqa: F401
