"""The kernels of Triton's TTIR fixtures (`tests/ir/fixtures/`), one copy for every test.

- `lang`: the `lang_*` kernels of `scripts/ttir_fixture_kernels.py` (a Naiad copy: the examples
  do not have them).
- `tutorials`, `tutorial_06b`: the tutorial kernels, taken from the `examples/` modules, whose
  kernels are the fixtures' own source.

`example(stem)` loads an example module as tests/examples does, under the same name.
"""

import importlib.util
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(stem):
    """A tutorial module (loaded as tests/examples does, under the same name)."""
    name = f"naiad_example_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{stem}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def jit_function(kernel):
    """The @naiad.jit function under a kernel (an example's autotuner is unwrapped)."""
    from naiad.runtime.jit import JITFunction

    while not isinstance(kernel, JITFunction):
        kernel = kernel.fn
    return kernel
