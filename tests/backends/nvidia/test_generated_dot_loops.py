"""Generated kernels with dot loops (naiad.testing.generator_dots) through the NVIDIA TTGIR
pipeline, without a GPU: tensor-core layouts, dot operands through shared buffers sliced along
K (tritongpu-dot-operands-shared) and software pipelining into rings of buffers
(tritongpu-pipeline), run in the reference evaluator, which executes the buffers, their slots
and the masked copies past the loop's end; every output must agree with the interpreter's.

Each kernel is launched a few times on fresh arguments: each launch draws its own trip count
(none, one, a few, many), extents and ragged K tail, and a K divisible by 16 specializes into
loads the pipeliner turns into copies. The default tier runs three kernels (about 4 s); `-m full`
runs the 188 dot loops of seeds 64 to 663 over 2, 4 and 8 warps and sm_80 and sm_90a (about
5 minutes on the loaded 2-core machine).
"""

from types import SimpleNamespace

import numpy as np
import pytest

from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.compiler import ttgir_pipeline
from naiad.dialects import tt
from naiad.ir.printer import print_module
from naiad.passes.pipeline import run_pipeline
from naiad.runtime.compiler import build_ttir
from naiad.runtime.evaluator import evaluate
from naiad.runtime.evaluator.arguments import argument_names
from naiad.testing import register_executor, run_differential
from naiad.testing.differential import unregister_executor
from naiad.testing.generator import load_kernel, random_kernel
from naiad.testing.generator_dots import grows_dot_loop

LAUNCHES = 3
DEFAULT_SEEDS = [seed for seed in range(64) if grows_dot_loop(seed)][:3]
FULL_SEEDS = [seed for seed in range(64, 664) if grows_dot_loop(seed)]


def ttgir(kernel, args: dict, arch: str, num_warps: int):
    """The TTGIR module of `kernel` specialized for `args`: Triton's TTGIR passes for `arch`."""
    bound = {p.name: args[p.name] for p in kernel.params}
    module = build_ttir(kernel, bound, f"cuda:{arch}", num_warps=num_warps).module
    capability = nv_target.cuda_target(f"cuda:{arch}").capability
    run_pipeline(ttgir_pipeline(num_warps, capability, num_stages=3), module)
    return module


@pytest.fixture
def nvidia_ttgir():
    """`use(arch, num_warps)` makes the executor "nvidia-ttgir" compile so, for the test; the
    TTGIR of every launch is kept in `modules`."""
    modules = []

    def run(kernel, args, grid):
        module = ttgir(kernel, args, *target)
        modules.append(print_module(module))
        func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
        params = {name: args[name] for name in argument_names(func)}
        evaluate(module, func.sym_name.value, params, grid, out=lambda line: None)
        return {name: v for name, v in args.items() if isinstance(v, np.ndarray)}

    target = ["sm_80", 4]

    def use(arch: str, num_warps: int):
        target[:] = [arch, num_warps]

    register_executor("nvidia-ttgir", run)
    yield SimpleNamespace(use=use, modules=modules)
    unregister_executor("nvidia-ttgir")


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("generated_dot_loops")


def _agree(seed: int, directory) -> None:
    case = load_kernel(random_kernel(seed), directory)
    for launch in range(LAUNCHES):
        run_differential(
            case.kernel,
            case.make_args,
            case.grid,
            executors=("interpreter", "nvidia-ttgir"),
            tolerance=case.tolerance,
            seed=seed * LAUNCHES + launch,
        )


def test_generated_dot_loops_agree_through_the_nvidia_pipeline(nvidia_ttgir, kernel_dir):
    """A few kernels, each launched a few times; what runs is what the test means to test:
    every dot reads mma.sync operands from shared buffers, and some loop's loads became
    pipelined copies."""
    for seed in DEFAULT_SEEDS:
        _agree(seed, kernel_dir)
    for text in nvidia_ttgir.modules:
        assert "#ttg.nvidia_mma" in text
        assert "ttg.local_load" in text
    assert any("ttg.async_copy_global_to_local" in text for text in nvidia_ttgir.modules)


@pytest.mark.full
@pytest.mark.parametrize("seed", FULL_SEEDS)
def test_generated_dot_loop_agrees_through_the_nvidia_pipeline_full(seed, nvidia_ttgir, kernel_dir):
    nvidia_ttgir.use(("sm_80", "sm_90a")[seed % 2], (2, 4, 8)[seed % 3])
    _agree(seed, kernel_dir)
