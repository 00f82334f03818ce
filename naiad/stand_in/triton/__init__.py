"""A stand-in `triton` for programs one cannot edit: with this file's parent folder first on
PYTHONPATH (`export PYTHONPATH=$(python -m naiad.run --pythonpath)`), `import triton` imports
Naiad, switches it on (naiad.install_as_triton) and hands over Naiad's `triton` module.

This file is not one of Naiad's modules: it is imported as the top-level package `triton`,
never as `naiad.stand_in.triton`, so it reaches Naiad by its absolute name.
"""

import importlib
import sys

__naiad_stand_in__ = True  # as_triton.py lets this module be `triton` while it switches on

importlib.import_module("naiad.as_triton").install_as_triton()
# The import system takes what `sys.modules` holds under this name when this file is done.
sys.modules[__name__] = importlib.import_module("naiad.triton")
