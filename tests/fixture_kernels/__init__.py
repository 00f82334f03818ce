"""The kernels of Triton's TTIR fixtures (`tests/ir/fixtures/`), one copy for every test.

- `lang`: the `lang_*` kernels of `scripts/ttir_fixture_kernels.py` (a Naiad copy: the examples
  do not have them).
- `tutorials`, `tutorial_06b`: the tutorial kernels, taken from the `examples/` modules, whose
  kernels are the fixtures' own source.

`example(stem)` loads an example module as tests/examples does, under the same name;
`fixture(name)` reads a fixture's JSON record and `compile_fixture(record)` compiles its kernel
with Naiad's frontend, for the same specialization.
"""

import importlib
import importlib.util
import json
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIXTURES = Path(__file__).resolve().parents[1] / "ir" / "fixtures"
FIXTURE_NAMES = sorted(p.stem for p in FIXTURES.glob("*.json"))
KERNEL_MODULES = {  # the script that made a fixture -> Naiad's copy of its kernels
    "scripts/ttir_fixture_tutorials.py": "fixture_kernels.tutorials",
    "scripts/ttir_fixture_tutorial_06b.py": "fixture_kernels.tutorial_06b",
    "scripts/ttir_fixture_kernels.py": "fixture_kernels.lang",
}


def fixture(name):
    """The JSON record of fixture `name` (kernel, signature, constexprs, attrs, debug, ...)."""
    return json.loads((FIXTURES / f"{name}.json").read_text())


def compile_fixture(record):
    """The TTIR Naiad's frontend makes of a fixture's kernel (before any pass)."""
    from naiad.frontend import compile_to_ttir
    from naiad.language.target import CUDA_HOPPER

    module = importlib.import_module(KERNEL_MODULES[record["kernel_file"]])
    target = CUDA_HOPPER.with_options(debug=record["debug"])
    return compile_to_ttir(
        getattr(module, record["kernel"]),
        record["signature"],
        record["constexprs"],
        record["attrs"],
        target,
    )


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
