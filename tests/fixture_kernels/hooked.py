"""A kernel for the tests of launch hooks and of the profiler built on them
(tests/runtime/test_launch_hooks.py, tests/compat/test_profiler.py): each gives it its own
`launch_metadata`, which a hooked launch calls."""

import naiad.language as tl


def doubled(x, y, n, BLOCK: tl.constexpr):
    """y = 2x + 1 over n elements (to be wrapped by `naiad.jit(launch_metadata=...)`)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y + offsets, tl.load(x + offsets, mask=mask) * 2.0 + 1.0, mask=mask)
