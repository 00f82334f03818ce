"""The runtime: jit functions, the compile cache, launching, autotuning and the interpreter."""

from . import driver  # noqa: F401  (`naiad.runtime.driver.active`, as tutorials reach it)
