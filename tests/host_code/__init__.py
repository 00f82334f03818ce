"""Running LLVM IR written by tests on the host, and reading what an object leaves undefined.

Tests that JIT their own LLVM IR (the math library's loops, scalar lowerings, the NVIDIA back
end's element conversions) load it through the CPU back end's own loader, never through MCJIT:
the loader resolves the compiler-rt helpers LLVM may call on this CPU (runtime_library.py), and a
symbol found nowhere is an InternalError rather than a jump to address 0 that kills pytest. The
host is `host_target()`, so NAIAD_HOST_CPU makes these tests run as on another CPU model.
"""

from .elf import undefined_symbols
from .load import host_machine, load_ir, load_module

__all__ = ["host_machine", "load_ir", "load_module", "undefined_symbols"]
