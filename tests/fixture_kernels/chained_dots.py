"""A loop of two chained dots, as attention's: s = a . b_k, then the accumulator takes
s . v_k, rescaled by a half first (RESCALE: the carried value is read in the loop) or replaced
(the carried value is never read there). Shared by the pipeliner's evaluator test
(tests/backends/nvidia/test_pipeline_loads.py) and the GPU's values
(tests/gpu/test_asynchronous_dots_gpu.py)."""

import naiad
import naiad.language as tl


@naiad.jit
def chained_products(a_ptr, b_ptr, v_ptr, out_ptr, K, BLOCK: tl.constexpr, RESCALE: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None] * BLOCK
    cols = tl.arange(0, BLOCK)[None, :]
    a = tl.load(a_ptr + rows + cols)
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for k in range(0, K, BLOCK):
        s = tl.dot(a, tl.load(b_ptr + k * BLOCK + rows + cols)).to(tl.float16)
        v = tl.load(v_ptr + k * BLOCK + rows + cols)
        if RESCALE:
            acc = tl.dot(s, v, acc * 0.5)
        else:
            acc = tl.dot(s, v)
    tl.store(out_ptr + rows + cols, acc)


@naiad.jit
def rotated_products(a_ptr, b_ptr, v_ptr, out_ptr, K, BLOCK: tl.constexpr,
                     OVERLAPPED: tl.constexpr):  # fmt: skip
    """`chained_products` (RESCALE) with its steps rotated as attention's whole-block forward
    rotates them: an iteration takes block j's first product, then adds block j-1's second,
    whose A is the first product the loop carries from the iteration before. OVERLAPPED: block
    j's first product is read (converted) only after block j-1's second is issued, as attention's
    rotated forward reads its scores: the first dot runs on beside the second
    (asynchronous_dots.py's overlapped shape)."""
    rows = tl.arange(0, BLOCK)[:, None] * BLOCK
    cols = tl.arange(0, BLOCK)[None, :]
    a = tl.load(a_ptr + rows + cols)
    s = tl.dot(a, tl.load(b_ptr + rows + cols)).to(tl.float16)
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for k in range(BLOCK, K, BLOCK):
        s_next = tl.dot(a, tl.load(b_ptr + k * BLOCK + rows + cols))
        if not OVERLAPPED:
            s_next = s_next.to(tl.float16)
        v = tl.load(v_ptr + (k - BLOCK) * BLOCK + rows + cols)
        acc = tl.dot(s, v, acc * 0.5)
        if OVERLAPPED:
            s = s_next.to(tl.float16)
        else:
            s = s_next
    acc = tl.dot(s, tl.load(v_ptr + (K - BLOCK) * BLOCK + rows + cols), acc * 0.5)
    tl.store(out_ptr + rows + cols, acc)
