"""Generated kernels through the interpreter, the reference evaluator and the compiled CPU back
end (issues 3 and 4).

Each seed makes one random kernel (naiad.testing.generator): masked loads, elementwise
operations over integer and float dtypes, broadcasting, reductions, a loop with loop-carried
accumulators and a branch on a runtime scalar. It is written to a file under the session's
temporary directory, imported, compiled to TTIR (Triton's TTIR pipeline) for the evaluator, and
launched in the interpreter, on the same seeded inputs; every output must agree within the
tolerance table's row for the operation that made it. A failure names the kernel's file and the
seed: `random_kernel(seed)` rebuilds the same kernel.

The default tier runs a few dozen seeds (a second or two); `-m full` runs a thousand more.
"""

import pytest

from naiad.testing import run_differential
from naiad.testing.generator import load_kernel, random_kernel

DEFAULT_SEEDS = range(64)
FULL_SEEDS = range(64, 1064)


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("generated_kernels")


EXECUTORS = {"evaluator": ("interpreter", "evaluator"), "cpu": ("interpreter", "cpu")}


def _agree(seed, directory, executors):
    case = load_kernel(random_kernel(seed), directory)
    reference = run_differential(
        case.kernel,
        case.make_args,
        case.grid,
        executors=executors,
        tolerance=case.tolerance,
        seed=seed,
    )
    assert set(case.tolerance) <= set(reference)


@pytest.mark.parametrize("against", sorted(EXECUTORS))
@pytest.mark.parametrize("seed", DEFAULT_SEEDS)
def test_generated_kernel_agrees(seed, against, kernel_dir):
    _agree(seed, kernel_dir, EXECUTORS[against])


@pytest.mark.full
@pytest.mark.parametrize("against", sorted(EXECUTORS))
@pytest.mark.parametrize("seed", FULL_SEEDS)
def test_generated_kernel_agrees_full(seed, against, kernel_dir):
    _agree(seed, kernel_dir, EXECUTORS[against])
