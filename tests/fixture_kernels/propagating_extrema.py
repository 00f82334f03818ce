"""The NaN-propagating maximum and minimum as `tl.reduce` combine functions, shared by the CPU
back end's tests of the reductions that fold them (tests/backends/cpu/test_row_reductions.py,
test_carried_reductions.py)."""

import naiad
import naiad.language as tl


@naiad.jit
def maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@naiad.jit
def minimum(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)
