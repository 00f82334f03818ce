"""What the GPU test files share: the repository root (subprocess scripts and examples are found
from it), the fixture that compiles launches for the GPU, and loading a test helper or example
file as a module (tests/gpu is not a package, and the examples are scripts).

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    """Launches on CUDA tensors compile for the GPU (the test-wide default is the
    interpreter). A test file takes it by importing it."""
    monkeypatch.setenv("NAIAD_BACKEND", "auto")


def load_module(name: str, path: Path) -> ModuleType:
    """Import the file `path` as the module `name`; its own folder goes on sys.path first, so
    the helpers it imports by bare name resolve."""
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
