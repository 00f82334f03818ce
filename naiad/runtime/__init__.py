"""The runtime: jit functions, the compile cache, launching, autotuning and the interpreter."""
