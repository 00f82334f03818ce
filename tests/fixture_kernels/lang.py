"""Kernels of `scripts/ttir_fixture_kernels.py` (Triton's TTIR fixtures), with naiad imports.

The kernel bodies are copied unchanged (only `triton` -> `naiad`), so the frontend compiles the
same code Triton compiled for `tests/ir/fixtures/`. Formatting is kept as in the source.
The examples do not have these kernels, hence this copy: the frontend tests compile them, the
evaluator's differential tests run them (`tests/evaluator/evaluator_fixture_cases.py`).
"""
# fmt: off


import naiad
import naiad.language as tl

SCALE: tl.constexpr = tl.constexpr(3)  # a global constant read by `constexpr_dead_branch`


# ---------------------------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------------------------


@naiad.jit
def if_else_values(X, Y, n, flag, BLOCK: tl.constexpr):
    """A runtime if/else whose branches define a scalar and a tensor used after it."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    if flag > 0:
        scale = 2.0
        y = x * x
    else:
        scale = 0.5
        y = x + 1.0
    if pid == 0:
        y = -y
    tl.store(Y + offs, y * scale, mask=offs < n)


@naiad.jit
def while_loop(X, Y, n, BLOCK: tl.constexpr):
    """A while loop with a scalar and a tensor carried through it."""
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    i = 1
    while i < n:
        acc += tl.load(X + offs + i)
        i = i * 2
    tl.store(Y + offs, acc)


@naiad.jit
def nested_for_tuple(X, Y, M, N, stride, BLOCK: tl.constexpr):
    """Nested for loops carrying a tuple (sum, max) of tensors and a scalar counter."""
    offs = tl.arange(0, BLOCK)
    state = (tl.zeros([BLOCK], dtype=tl.float32), tl.full([BLOCK], float("-inf"), tl.float32))
    count = 0
    for i in range(0, M):
        for j in range(0, N, BLOCK):
            x = tl.load(X + i * stride + j + offs, mask=j + offs < N, other=0.0)
            state = (state[0] + x, tl.maximum(state[1], x))
            count += 1
    total, best = state
    tl.store(Y + offs, total / count + best)


@naiad.jit
def static_range_unroll(X, Y, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    """tl.static_range, unrolled by the frontend, next to a runtime loop with the same body."""
    offs = tl.arange(0, BLOCK)
    acc = tl.load(X + offs)
    for k in tl.static_range(STEPS):
        acc = acc * (k + 1) + k
    for k in range(STEPS):
        acc = acc * 0.5 + k
    tl.store(Y + offs, acc)


@naiad.jit
def _clamp_or_bail(x, limit):
    if limit < 0:
        return x
    return tl.minimum(x, limit)


@naiad.jit
def early_return(X, Y, n, limit, BLOCK: tl.constexpr):
    """An early return from the kernel, and a callee that returns from inside an if."""
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    y = _clamp_or_bail(x, limit)
    tl.store(Y + offs, y, mask=offs < n)


# ---------------------------------------------------------------------------------------------
# Calls
# ---------------------------------------------------------------------------------------------


@naiad.jit
def _axpy(a, x, y):
    return a * x + y


@naiad.jit(noinline=True)
def _square_noinline(x, y):
    return x * x + y


@naiad.jit
def _two_results(x, BLOCK: tl.constexpr):
    return tl.sum(x, axis=0), x * BLOCK


@naiad.jit
def jit_calls(X, Y, Z, a, BLOCK: tl.constexpr):
    """Calls to an inlined helper, a noinline helper (scalar arguments; stays a tt.call) and a
    helper returning two values."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    r = _axpy(a, x, y)
    b = _square_noinline(a, tl.load(Z))
    total, scaled = _two_results(r * b, BLOCK)
    tl.store(Y + offs, scaled)
    tl.store(Z, total)


# ---------------------------------------------------------------------------------------------
# Reductions, scans, sort
# ---------------------------------------------------------------------------------------------


@naiad.jit
def _add_combine(a, b):
    return a + b


@naiad.jit
def _argmax_combine(v0, i0, v1, i1):
    pick0 = (v0 > v1) | ((v0 == v1) & (i0 < i1))
    return tl.where(pick0, v0, v1), tl.where(pick0, i0, i1)


@naiad.jit
def reduce_custom(X, S, V, I, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """tl.reduce with a custom combine (one operand, then two), and the built-in max/argmin."""
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(X + rows[:, None] * BLOCK_N + cols[None, :])
    s = tl.reduce(x, 1, _add_combine)
    idx = tl.broadcast_to(cols[None, :], (BLOCK_M, BLOCK_N))
    v, i = tl.reduce((x, idx), 1, _argmax_combine)
    m = tl.max(x, axis=0)
    j = tl.argmin(x, axis=0)
    tl.store(S + rows, s)
    tl.store(V + rows, v)
    tl.store(I + rows, i)
    tl.store(S + BLOCK_M + cols, m)
    tl.store(I + BLOCK_M + cols, j)


@naiad.jit
def _mul_combine(a, b):
    return a * b


@naiad.jit
def scan_ops(X, Y, Z, BLOCK: tl.constexpr):
    """tl.associative_scan with a custom combine (forward and reverse), and tl.cumsum."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    p = tl.associative_scan(x, 0, _mul_combine)
    r = tl.associative_scan(x, 0, _add_combine, reverse=True)
    c = tl.cumsum(x.to(tl.int32), 0)
    tl.store(Y + offs, p + r)
    tl.store(Z + offs, c)


@naiad.jit
def sort_ops(X, Y, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """tl.sort along the last axis, ascending and descending."""
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(X + rows[:, None] * BLOCK_N + cols[None, :])
    a = tl.sort(x)
    d = tl.sort(x, descending=True)
    tl.store(Y + rows[:, None] * BLOCK_N + cols[None, :], a - d)


# ---------------------------------------------------------------------------------------------
# Atomics
# ---------------------------------------------------------------------------------------------


@naiad.jit
def atomics(X, Counter, Lock, Out, n, BLOCK: tl.constexpr):
    """atomic_add (tensor, masked; scalar), atomic_max, atomic_xchg and an atomic_cas spin lock."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    tl.atomic_add(Out + offs % 16, x, mask=mask)
    old = tl.atomic_add(Counter, 1, sem="relaxed", scope="gpu")
    tl.atomic_max(Counter + 1, old)
    while tl.atomic_cas(Lock, 0, 1, sem="acquire") == 1:
        pass
    tl.atomic_xchg(Lock, 0, sem="release")


# ---------------------------------------------------------------------------------------------
# Block pointers and tensor descriptors
# ---------------------------------------------------------------------------------------------


@naiad.jit
def block_ptr_advance(A, B, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """make_block_ptr, a loop that advances it, loads with boundary checks and a store."""
    pid = tl.program_id(0)
    a_ptr = tl.make_block_ptr(
        base=A,
        shape=(M, N),
        strides=(stride_m, stride_n),
        offsets=(pid * BLOCK_M, 0),
        block_shape=(BLOCK_M, BLOCK_N),
        order=(1, 0),
    )
    b_ptr = tl.make_block_ptr(
        base=B,
        shape=(M, N),
        strides=(stride_m, stride_n),
        offsets=(pid * BLOCK_M, 0),
        block_shape=(BLOCK_M, BLOCK_N),
        order=(1, 0),
    )
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for _ in range(0, N, BLOCK_N):
        acc += tl.load(a_ptr, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        a_ptr = tl.advance(a_ptr, (0, BLOCK_N))
    tl.store(b_ptr, acc.to(B.dtype.element_ty), boundary_check=(0,))


@naiad.jit
def tensor_descriptor(A, B, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """make_tensor_descriptor in the kernel, then load and store through it."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(
        A, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    b_desc = tl.make_tensor_descriptor(
        B, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    x = a_desc.load([pid_m * BLOCK_M, pid_n * BLOCK_N])
    b_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], x * 2)


# ---------------------------------------------------------------------------------------------
# Dot
# ---------------------------------------------------------------------------------------------


@naiad.jit
def dot_acc(A, B, C, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """tl.dot with an accumulator, `acc += tl.dot(a, b)` (combined into one dot), an fp32 dot
    with input_precision, and a broadcast-multiply-sum the combiner turns into a dot."""
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * BLOCK_N + rn[None, :])
        acc = tl.dot(a, b, acc)
        acc2 += tl.dot(a, b)
    w = tl.load(C + rn[:, None] * BLOCK_N + rn[None, :])
    c = tl.dot(acc, w, input_precision="tf32x3")
    d = tl.sum(acc2[:, :, None] * w[None, :, :], 1)
    tl.store(C + rm[:, None] * BLOCK_N + rn[None, :], c + d)


# ---------------------------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------------------------


@naiad.jit
def casts(X, Y16, YB, Y8A, Y8B, YI, YU, BLOCK: tl.constexpr):
    """Float widths, bf16, fp8 (e4m3 and e5m2, with rounding), float<->int, bitcast, int widths."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    tl.store(Y16 + offs, x.to(tl.float16))
    tl.store(YB + offs, x.to(tl.bfloat16, fp_downcast_rounding="rtz"))
    tl.store(Y8A + offs, x.to(tl.float8e4nv))
    tl.store(Y8B + offs, x.to(tl.float16).to(tl.float8e5, fp_downcast_rounding="rtne"))
    bits = x.to(tl.int32, bitcast=True)
    i8 = bits.to(tl.int8)
    u = (bits >> 3).to(tl.uint32) + i8.to(tl.uint8)
    wide = u.to(tl.int64) + x.to(tl.int64)
    tl.store(YI + offs, wide)
    tl.store(YU + offs, u.to(tl.float32, bitcast=True).to(tl.float64) + tl.cast(i8, tl.float32))


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------


@naiad.jit
def elementwise(X, Y, I, U, lo, hi, BLOCK: tl.constexpr):
    """where, maximum/minimum (incl. NaN-propagating), clamp, fma, umulhi, math, int division."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    i = tl.load(I + offs)
    u = tl.load(U + offs)
    r = tl.where(x > y, x, y)
    r += tl.maximum(x, y) + tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
    r += tl.clamp(x, lo, hi)
    r += tl.fma(x, y, r)
    r += tl.sqrt(tl.abs(x)) + tl.exp(y) + tl.log(tl.abs(y) + 1) + tl.sin(x) + tl.rsqrt(r * r + 1)
    r += tl.floor(x) + tl.ceil(y) + tl.math.exp2(x) + tl.math.div_rn(x, y) + tl.sigmoid(y)
    hi_bits = tl.umulhi(u, u)
    q = i // 3 + i % 5 + (i << 2) + (i >> 1) + (i & 7) + (i | 1) + (i ^ -1) + tl.cdiv(i, 4)
    t = tl.where(q > 0, q, -q) + (hi_bits >> 2).to(tl.int32)
    tl.store(Y + offs, r)
    tl.store(I + offs, t)
    tl.store(U + offs, hi_bits // u + (~u) % 7)


# ---------------------------------------------------------------------------------------------
# Debug ops and hints
# ---------------------------------------------------------------------------------------------


@naiad.jit
def debug_ops(X, Y, n, BLOCK: tl.constexpr):
    """device_print (scalar and tensor), device_assert, static_assert, debug_barrier."""
    tl.static_assert(BLOCK >= 16, "BLOCK too small")
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=1.0)
    tl.device_print("pid", pid)
    tl.device_print("x: ", x, hex=False)
    tl.device_assert(x > 0, "x must be positive")
    tl.debug_barrier()
    tl.store(Y + offs, x, mask=offs < n)


@naiad.jit
def hints(X, Y, n, stride, BLOCK: tl.constexpr):
    """tl.assume, multiple_of, max_contiguous and max_constancy."""
    tl.assume(n > 0)
    tl.assume(stride % 8 == 0)
    pid = tl.program_id(0)
    start = tl.multiple_of(pid * stride, 8)
    offs = tl.max_contiguous(tl.multiple_of(start + tl.arange(0, BLOCK), BLOCK), BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    c = tl.max_constancy(x * 0 + pid, 4)
    tl.store(Y + offs, x + c, mask=offs < n)


# ---------------------------------------------------------------------------------------------
# Arguments and specialization
# ---------------------------------------------------------------------------------------------


@naiad.jit
def int64_args(P16, P, big, small, d16, one, f, b, BLOCK: tl.constexpr):
    """i64 and i32 arguments (16-divisible or not), a 1 specialized away, a %16 pointer and a
    pointer without alignment, an fp32 and a bool argument."""
    offs = tl.arange(0, BLOCK)
    idx = big + offs.to(tl.int64) * small
    x = tl.load(P16 + offs * d16)
    y = tl.load(P + idx - big)
    r = x * f + y * one
    if b:
        r += 1.0
    tl.store(P16 + offs, r)


@naiad.jit
def constexpr_dead_branch(X, Y, n, MODE: tl.constexpr, USE_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    """Constexpr if/elif chains and a global constexpr: only the live branch reaches the IR."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    if MODE == "square":
        y = x * x
    elif MODE == "double":
        y = x + x
    else:
        y = tl.exp(x)
    if USE_BIAS:
        y += 1.0
    if BLOCK > 4096:
        y = tl.sqrt(y)
    y = y * SCALE
    tl.store(Y + offs, y, mask=offs < n)


# ---------------------------------------------------------------------------------------------
# Shape ops and loop options
# ---------------------------------------------------------------------------------------------


@naiad.jit
def shape_ops(X, Y, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """expand_dims/broadcast, reshape, permute, trans, join/split, gather, histogram, rand."""
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(X + rows[:, None] * BLOCK_N + cols[None, :])
    t = tl.trans(x)
    r = tl.reshape(t, (BLOCK_N, BLOCK_M // 2, 2))
    p = tl.permute(r, (1, 0, 2))
    a, b = tl.split(p)
    j = tl.join(b, a)
    z = tl.reshape(j, (BLOCK_M, BLOCK_N))
    row_ids = tl.broadcast_to(tl.expand_dims(rows, 1), (BLOCK_M, BLOCK_N))
    g = tl.gather(z, (BLOCK_M - 1) - row_ids, 0)
    h = tl.histogram(cols, BLOCK_N)
    noise = tl.rand(7, rows[:, None] * BLOCK_N + cols[None, :])
    tl.store(Y + rows[:, None] * BLOCK_N + cols[None, :], g + h[None, :].to(tl.float32) + noise)


@naiad.jit
def loop_options(X, Y, n, BLOCK: tl.constexpr):
    """tl.range options: num_stages, loop_unroll_factor (unrolled by TTIR's loop-unroll), flatten,
    disallow_acc_multi_buffer, and a tl.range with a negative step."""
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.range(0, n, BLOCK, num_stages=3, disallow_acc_multi_buffer=True):
        acc += tl.load(X + i + offs, mask=i + offs < n, other=0.0)
    for i in tl.range(0, n, loop_unroll_factor=2):
        acc = acc * 0.5 + i
    for i in tl.range(0, 4, flatten=True):
        for j in tl.range(0, n):
            acc += i * j
    for i in tl.range(n, 0, -1):
        acc -= i
    tl.store(Y + offs, acc)
