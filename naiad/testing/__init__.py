"""Triton's `triton.testing` surface, plus the tolerance table Naiad's own tests use.

- `do_bench`: time a callable within warmup/repetition time budgets (milliseconds);
  `do_bench_cudagraph`: the same from a replayed CUDA graph (on the host: as `do_bench`).
- `assert_close`: loose elementwise comparison of arrays, tensors and scalars of any dtype.
- `Benchmark` / `perf_report`: tabulate a benchmark over a grid of inputs.
- `Tolerance`, `TOLERANCES`, `check`, `ulp_distance`: how close each back end must come to the
  reference, per operation (see `naiad.testing.tolerance`).
- `run_differential`, `register_executor`: run one kernel through several executors (the
  interpreter, the reference evaluator, each back end) and compare them with that table (see
  `naiad.testing.differential`).
"""

from ..runtime.bench import do_bench, do_bench_cudagraph
from .compare import assert_close, to_numpy
from .differential import register_executor, run_differential
from .report import Benchmark, Mark, perf_report
from .tolerance import BACKENDS, TOLERANCES, Tolerance, check, ulp_distance

__all__ = [
    "BACKENDS",
    "TOLERANCES",
    "Benchmark",
    "Mark",
    "Tolerance",
    "assert_close",
    "check",
    "do_bench",
    "do_bench_cudagraph",
    "perf_report",
    "register_executor",
    "run_differential",
    "to_numpy",
    "ulp_distance",
]
