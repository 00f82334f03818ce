"""`triton.profiler` (Triton's Proton API) while Naiad stands in for Triton: a small profiler
that records what a program asks it to, without CUPTI.

    import triton.profiler as proton
    session = proton.start("matmul", hook="triton")   # every Naiad launch becomes a node
    with proton.scope("step", {"bytes": n_bytes, "flops16": 2.0 * M * N * K}):
        ...                                            # the scope's device time, its metrics
    proton.deactivate(session)                         # records nothing until activate(session)
    proton.finalize()                                  # writes matmul.hatchet

    import triton.profiler.viewer as proton_viewer
    tree, metrics = proton_viewer.parse(["tflop16/s", "time/ms"], "matmul.hatchet")
    proton_viewer.print_tree(tree, metrics)

A scope's time is the device time of the work it encloses (CUDA events on the current stream
where torch drives a GPU, the host's clock elsewhere: clock.py), read when the session is
deactivated or finalized; its metrics are summed over its entries and counted. Proton reads
every kernel the GPU runs through CUPTI; here a kernel is a node only when Naiad launched it
(launch.py): torch's own kernels inside a scope count in the scope's time and appear as no
node of their own (docs/compat.md).
"""

from .scope import cpu_timed_scope, enter_scope, exit_scope, profile, scope
from .session import activate, deactivate, finalize, start

__all__ = [
    "activate",
    "cpu_timed_scope",
    "deactivate",
    "enter_scope",
    "exit_scope",
    "finalize",
    "profile",
    "scope",
    "start",
]
