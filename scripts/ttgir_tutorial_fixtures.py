"""Regenerate Triton's TTGIR of the memory-bound tutorial kernels, for the TTGIR pipeline's
comparison tests (tests/backends/nvidia/test_passes_tutorials.py).

    /tmp/tvenv/bin/python scripts/ttgir_tutorial_fixtures.py

Needs the real `triton` (3.8) and no GPU: Triton's own TTIR fixture of each kernel
(tests/ir/fixtures/<name>.ttir, with the num_warps of its JSON record) goes through Triton's
`make_ttgir` for `cuda:90` and `cuda:80`, written as
tests/fixture_kernels/ttgir/tutorial_<name>_sm<cc>.ttgir. Naiad's tests never import triton.
"""

from __future__ import annotations

import json
from pathlib import Path

from triton._C.libtriton import ir, nvidia
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import CUDABackend

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "ir" / "fixtures"
OUT = ROOT / "tests" / "fixture_kernels" / "ttgir"
NAMES = ("01_vector_add", "02_fused_softmax", "05_layer_norm_fwd")


def ttgir(name: str, capability: int) -> str:
    record = json.loads((FIXTURES / f"{name}.json").read_text())
    context = ir.context()
    ir.load_dialects(context)
    nvidia.load_dialects(context)
    module = ir.parse_mlir_module(str(FIXTURES / f"{name}.ttir"), context)
    module.context = context
    backend = CUDABackend(GPUTarget("cuda", capability, 32))
    options = backend.parse_options({"num_warps": record["num_warps"]})
    return str(backend.make_ttgir(module, {}, options, capability))


def main() -> None:
    for name in NAMES:
        for capability in (90, 80):
            path = OUT / f"tutorial_{name}_sm{capability}.ttgir"
            path.write_text(ttgir(name, capability))
            print("wrote", path.relative_to(ROOT))


if __name__ == "__main__":
    main()
