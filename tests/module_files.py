"""Importing a Python file that is not in a package (an example, a bench script) by its path.

Test modules import this by bare name, as they do `host_code` and `fixture_kernels`: pytest puts
tests/ on sys.path for the conftest there.
"""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def module_from_file(name: str, path: Path) -> ModuleType:
    """The module at `path`, imported once under `name` (sys.modules keeps it for later calls)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
