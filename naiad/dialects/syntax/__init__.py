"""Hand-written syntax of the ops whose upstream printer and parser are C++ (`custom_syntax`
in their declarations), one module per dialect, registered by op name in
`naiad.ir.asm_syntax`. Also the result names MLIR's `getAsmResultNames` gives
(`%c1024_i32`, `%cst`) and the body parsers of dialect types (`!tt.ptr<f32>`).

Importing `naiad.dialects` imports this package; the IR core finds the registrations by
name, so it never imports a dialect.
"""

from . import arith, bufferization, func, linalg, llvm, memref, scf, tensor, tt, ttg  # noqa: F401
