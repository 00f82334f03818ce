"""The CPU back end: Linalg (memref form) to loops to LLVM IR, compiled to object code for the
host (or an ahead-of-time target such as `cpu:aarch64`), loaded into the process and run over the
grid on native worker threads."""
