"""Run one kernel through two or more executors and compare what they wrote.

    run_differential(kernel, make_args, grid, executors=("interpreter", "evaluator"),
                     tolerance={"out": "add", "total": ("sum", 128)}, seed=0)

An executor takes a jit kernel, its arguments by name and a grid, and returns every array
argument's contents after the launch, by name. "interpreter" launches in the NumPy interpreter
(the oracle); "evaluator" compiles to TTIR through the runtime compiler (Triton's TTIR pipeline)
and runs that with the reference evaluator; "cpu" compiles for this machine's CPU and runs it.
Other back ends register themselves with `register_executor`, naming the column of the
tolerance table they are held to.

Arguments are host (NumPy) arrays and Python numbers; an executor for a device moves them there
and back itself. Each executor runs on its own copy of the same inputs, with the outputs
poisoned first (NaN for floats, the byte 0x5A repeated for integers, True for booleans), so an
element one side leaves unwritten shows. The first executor is the reference; every other one
is compared with it: outputs with the tolerance row given for them, every other array bit for
bit (an input must come back as it went in).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .compare import is_float_dtype, to_numpy
from .tolerance import BACKENDS, check

__all__ = [
    "EXECUTORS",
    "Executor",
    "register_executor",
    "run_differential",
    "unregister_executor",
]

Runner = Callable[[object, dict, tuple], dict]


@dataclass(frozen=True)
class Executor:
    """A way to run a kernel: `run(kernel, args, grid) -> {array argument: contents}`, held
    to the tolerance table's column `backend` ("interpreter", "cpu" or "gpu")."""

    name: str
    run: Runner
    backend: str


EXECUTORS: dict[str, Executor] = {}


def register_executor(name: str, run: Runner, backend: str = "interpreter") -> Executor:
    """Make `run` available to `run_differential` as `name` (replacing one of that name)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown tolerance column {backend!r}; known: {', '.join(BACKENDS)}")
    executor = Executor(name, run, backend)
    EXECUTORS[name] = executor
    return executor


def unregister_executor(name: str) -> None:
    """Forget the executor `name` (tests that register a temporary one undo it so)."""
    del EXECUTORS[name]


# -- the two executors every checkout has ----------------------------------------------------------
# They import the runtime on first use: `import naiad` loads naiad.testing, and needs neither the
# compiler nor the evaluator until a differential run.
def _bound(kernel, args: Mapping) -> dict:
    """Every parameter's value: from `args`, else the parameter's default."""
    bound = {}
    for param in kernel.params:
        if param.name in args:
            bound[param.name] = args[param.name]
        elif param.has_default:
            bound[param.name] = param.default
        else:
            raise TypeError(f"{kernel.__name__}: no value for argument `{param.name}`")
    return bound


def _arrays(args: Mapping) -> dict:
    return {name: v for name, v in args.items() if isinstance(v, np.ndarray)}


def run_interpreter(kernel, args: dict, grid: tuple) -> dict:
    """Launch in the NumPy interpreter, whatever back end the arguments' device has."""
    from ..runtime.interpreter.launch import run_grid

    run_grid(kernel, _bound(kernel, args), (*grid, 1, 1)[:3], debug=False)
    return _arrays(args)


def run_evaluator(kernel, args: dict, grid: tuple) -> dict:
    """Compile to TTIR (the runtime compiler's pipeline) and run the printed TTIR, parsed
    back, in the reference evaluator: what runs is exactly the text a user would see."""
    from ..ir.parser import parse_module
    from ..runtime.compiler import compile_ttir
    from ..runtime.evaluator import evaluate
    from ..runtime.evaluator.arguments import argument_names

    compiled = compile_ttir(kernel, _bound(kernel, args))
    module = parse_module(compiled.asm["ttir"], f"{compiled.name}.ttir")
    func = module.lookup_symbol(compiled.name)
    # Constexprs (and integers specialized to 1) are not arguments of the TTIR function.
    params = {name: args[name] for name in argument_names(func)}
    evaluate(module, compiled.name, params, grid, out=lambda line: None)
    return _arrays(args)


def run_cpu(kernel, args: dict, grid: tuple) -> dict:
    """Compile for this machine's CPU (the Linalg path) and run natively."""
    from ..backends import registry

    backend, _ = registry.lookup("cpu")
    launcher = kernel.launcher(backend)
    launcher.launch(_bound(kernel, args), (*grid, 1, 1)[:3], None, debug=False)
    return _arrays(args)


register_executor("interpreter", run_interpreter)
register_executor("evaluator", run_evaluator)
register_executor("cpu", run_cpu, backend="cpu")


# -- comparing -------------------------------------------------------------------------------------
def run_differential(
    kernel,
    make_args: Callable[[np.random.Generator], dict],
    grid,
    executors: Sequence[str] = ("interpreter", "evaluator"),
    tolerance: Mapping | None = None,
    *,
    seed: int = 0,
) -> dict:
    """Run `kernel` through each executor on copies of the same arguments and compare.

    Args:
        kernel: a `@naiad.jit` function.
        make_args: `make_args(rng)` returns every argument by parameter name (constexprs too).
        grid: a tuple, or a function of the arguments returning one.
        executors: registered names; the first is the reference.
        tolerance: output argument name -> tolerance row (`"add"`), or (row, k) for norm-wise
            rows (`("sum", 128)`: k is the reduction length). The named arrays are the
            outputs, poisoned before each run; all other arrays must come back bit-identical.
        seed: seeds the generator `make_args` draws from (reported on a mismatch).

    Returns:
        The reference executor's arrays, by name.

    Raises:
        AssertionError: two executors disagree; the message names the kernel's file, the seed,
            the output and the first mismatching indices.
    """
    if len(executors) < 2:
        raise ValueError("run_differential needs at least two executors")
    runners = [_executor(name) for name in executors]
    args = make_args(np.random.default_rng(seed))
    expected = {name: _normalize(tol) for name, tol in (tolerance or {}).items()}
    unknown = set(expected) - set(_arrays(args))
    if unknown:
        raise ValueError(f"tolerance names outputs that are not array arguments: {sorted(unknown)}")
    grid = tuple(grid(args) if callable(grid) else grid)
    results = [_run(executor, kernel, args, grid, expected, seed) for executor in runners]
    reference = runners[0]
    for executor, result in zip(runners[1:], results[1:]):
        backend = max(executor.backend, reference.backend, key=BACKENDS.index)
        for name, want in results[0].items():
            row, k = expected.get(name, ("load", None))
            try:
                with np.errstate(invalid="ignore"):  # NaN poison cast to float64 to compare
                    check(row, result[name], want, backend, want.dtype, k)
            except AssertionError as exc:
                raise AssertionError(
                    _mismatch(kernel, seed, name, executor, reference, result[name], want, exc)
                ) from None
    return results[0]


def _executor(name: str) -> Executor:
    if name not in EXECUTORS:
        raise KeyError(f"no executor {name!r}; registered: {', '.join(EXECUTORS)}")
    return EXECUTORS[name]


def _normalize(tolerance) -> tuple[str, int | None]:
    return (tolerance, None) if isinstance(tolerance, str) else tuple(tolerance)


def _run(executor: Executor, kernel, args: dict, grid, outputs, seed) -> dict:
    copies = {name: _copy(value, poison=name in outputs) for name, value in args.items()}
    try:
        return executor.run(kernel, copies, grid)
    except Exception as exc:
        exc.add_note(f"(executor {executor.name!r} on {_where(kernel)}, seed {seed})")
        raise


def _copy(value, poison: bool):
    if not isinstance(value, np.ndarray):
        return value
    return _poisoned(value) if poison else value.copy()


def _poisoned(array: np.ndarray) -> np.ndarray:
    if array.dtype == np.bool_:
        return np.ones_like(array)
    if is_float_dtype(array.dtype):
        return np.full_like(array, np.nan)
    return np.full(array.shape, 0x5A, np.uint8).repeat(array.dtype.itemsize).view(array.dtype)


def _where(kernel) -> str:
    fn = getattr(kernel, "fn", kernel)
    try:
        line = inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return f"{fn.__qualname__} ({inspect.getsourcefile(fn)})"
    return f"{fn.__qualname__} at {inspect.getsourcefile(fn)}:{line}"


def _mismatch(kernel, seed, name, executor, reference, actual, expected, error) -> str:
    actual, expected = to_numpy(actual), to_numpy(expected)
    lines = [
        f"{executor.name} disagrees with {reference.name} on output `{name}` of "
        f"{_where(kernel)} (seed {seed})",
        str(error),
    ]
    if actual.shape == expected.shape:
        first = _first_differences(actual, expected)
        lines.append(f"first differing indices: {first}")
    return "\n".join(lines)


def _first_differences(actual: np.ndarray, expected: np.ndarray, count: int = 5) -> list:
    """The first `count` indices where the two differ in bits (NaN matching NaN)."""
    if is_float_dtype(actual.dtype):
        both_nan = np.isnan(actual.astype(np.float64)) & np.isnan(expected.astype(np.float64))
        bits = f"u{actual.dtype.itemsize}"
        differ = (actual.view(bits) != expected.view(bits)) & ~both_nan
    else:
        differ = actual != expected
    return [tuple(int(i) for i in index) for index in np.argwhere(differ)[:count]]
