"""`triton.compiler` while Naiad stands in for Triton: `compile`, `ASTSource`, `CompiledKernel`
and `make_backend` (compiler.py), and `CompilationError` and `errors` (Naiad's own, errors.py)."""

from ... import errors  # noqa: F401  (`triton.compiler.errors` as an attribute, as Triton's)
from ...errors import CompilationError  # noqa: F401
from .compiler import ASTSource, CompiledKernel, IRSource, compile, make_backend  # noqa: F401
