"""The elementwise kernel the CPU launch tests share (test_compiled_launch.py: stages, cache and
launch path; test_streaming_stores.py: the streaming choice): `out = x * 2 + y` over masked
blocks, on any dtype (the integer literal keeps an integer kernel integer)."""

import naiad
import naiad.language as tl


@naiad.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * 2 + y, mask=mask)
