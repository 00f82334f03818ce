"""The kernels, written once as text: `harness.generate_kernels` puts them after each front end's
header (`jit`, `tl`, `emit`). Kernels are named by family (`tt_`, `ts_`, `st_`, `tr_`, `t0_` for
the binary operators, `unary_`, `cast`, `math_`, `ext_`, `sel_`, `red_`, `scan_`, `sort_`, `rng_`,
`lit_`, `const_`, `loop_`, `logic_`); several test modules share some of them.
"""

BINARY_OPS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "and": "&",
    "or": "|",
    "xor": "^",
    "shl": "<<",
    "shr": ">>",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "eq": "==",
    "ne": "!=",
}
COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")

KERNELS = []
for _name, _op in BINARY_OPS.items():
    KERNELS.append(f"""
@jit
def tt_{_name}(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.load(x_ptr + offs) {_op} tl.load(y_ptr + offs))


@jit
def ts_{_name}(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) {_op} S)


@jit
def st_{_name}(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, S {_op} tl.load(x_ptr + tl.arange(0, N)))


@jit
def tr_{_name}(out_ptr, x_ptr, s, N: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) {_op} s)


@jit
def t0_{_name}(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) {_op} tl.load(y_ptr))
""")

KERNELS.append("""
@jit
def unary_neg(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, -tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_invert(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, ~tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_not(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, not tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_plus(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, +tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_abs_builtin(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, abs(tl.load(x_ptr + tl.arange(0, N))))


@jit
def unary_neg_scalar(out_ptr, S: tl.constexpr):
    x = S
    emit(out_ptr, -x)


@jit
def cast(out_ptr, x_ptr, N: tl.constexpr, DST: tl.constexpr, ROUNDING: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)).to(DST, fp_downcast_rounding=ROUNDING))


@jit
def bitcast(out_ptr, x_ptr, N: tl.constexpr, DST: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)).to(DST, bitcast=True))


@jit
def cast_scalar(out_ptr, DST: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.cast(S, DST))
""")

MATH_1 = (
    "exp",
    "exp2",
    "log",
    "log2",
    "sin",
    "cos",
    "sqrt",
    "sqrt_rn",
    "rsqrt",
    "erf",
    "floor",
    "ceil",
    "abs",
)
for _f in MATH_1:
    KERNELS.append(f"""
@jit
def math_{_f}(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.{_f}(tl.load(x_ptr + tl.arange(0, N))))
""")

KERNELS.append("""
@jit
def math_fma(out_ptr, x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.fma(tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)))


@jit
def math_div_rn(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.div_rn(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def math_fdiv(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.fdiv(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def math_umulhi(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.umulhi(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def math_cdiv(out_ptr, x_ptr, N: tl.constexpr, D: tl.constexpr):
    emit(out_ptr, tl.cdiv(tl.load(x_ptr + tl.arange(0, N)), D))


@jit
def ext_minimum(out_ptr, x_ptr, y_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.minimum(tl.load(x_ptr + offs), tl.load(y_ptr + offs), propagate_nan=NAN))


@jit
def ext_maximum(out_ptr, x_ptr, y_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.maximum(tl.load(x_ptr + offs), tl.load(y_ptr + offs), propagate_nan=NAN))


@jit
def ext_minimum_s(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.minimum(tl.load(x_ptr + tl.arange(0, N)), S))


@jit
def ext_maximum_s(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.maximum(S, tl.load(x_ptr + tl.arange(0, N))))


@jit
def ext_clamp(out_ptr, x_ptr, lo_ptr, hi_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.clamp(tl.load(x_ptr + offs), tl.load(lo_ptr + offs), tl.load(hi_ptr + offs),
                           propagate_nan=NAN))


@jit
def ext_clamp_s(out_ptr, x_ptr, N: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr):
    emit(out_ptr, tl.clamp(tl.load(x_ptr + tl.arange(0, N)), LO, HI))


@jit
def sel_where(out_ptr, c_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.where(tl.load(c_ptr + offs), tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def sel_where_s(out_ptr, c_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.where(tl.load(c_ptr + offs), tl.load(x_ptr + offs), S))


@jit
def sel_where_ss(out_ptr, c_ptr, N: tl.constexpr, A: tl.constexpr, B: tl.constexpr):
    emit(out_ptr, tl.where(tl.load(c_ptr + tl.arange(0, N)), A, B))
""")

REDUCTIONS = ("sum", "max", "min", "argmax", "argmin", "xor_sum")
for _f in REDUCTIONS:
    _axis = "0" if _f.startswith("arg") else "None"
    KERNELS.append(f"""
@jit
def red_{_f}(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.{_f}(tl.load(x_ptr + tl.arange(0, N)), {_axis}))


@jit
def red2_{_f}(out_ptr, x_ptr, AXIS: tl.constexpr, KEEP: tl.constexpr):
    offs = tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.{_f}(tl.load(x_ptr + offs), AXIS, keep_dims=KEEP))
""")

KERNELS.append("""
@jit
def red_max_idx(out_ptr, x_ptr, N: tl.constexpr):
    v, i = tl.max(tl.load(x_ptr + tl.arange(0, N)), 0, return_indices=True)
    emit(out_ptr, v, 0)
    emit(out_ptr, i, 1)


@jit
def red_min_idx(out_ptr, x_ptr, N: tl.constexpr):
    v, i = tl.min(tl.load(x_ptr + tl.arange(0, N)), 0, return_indices=True)
    emit(out_ptr, v, 0)
    emit(out_ptr, i, 1)


@jit
def red_sum_dtype(out_ptr, x_ptr, N: tl.constexpr, DTYPE: tl.constexpr):
    emit(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, N)), 0, dtype=DTYPE))


@jit
def scan_cumsum(out_ptr, x_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    emit(out_ptr, tl.cumsum(tl.load(x_ptr + tl.arange(0, N)), 0, reverse=REVERSE))


@jit
def scan_cumprod(out_ptr, x_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    emit(out_ptr, tl.cumprod(tl.load(x_ptr + tl.arange(0, N)), 0, reverse=REVERSE))


@jit
def scan_cumsum2(out_ptr, x_ptr, AXIS: tl.constexpr):
    offs = tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.cumsum(tl.load(x_ptr + offs), AXIS))


@jit
def sort_sort(out_ptr, x_ptr, N: tl.constexpr, DESCENDING: tl.constexpr):
    emit(out_ptr, tl.sort(tl.load(x_ptr + tl.arange(0, N)), descending=DESCENDING))


@jit
def sort_sort2(out_ptr, x_ptr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.sort(tl.load(x_ptr + offs), descending=DESCENDING))


@jit
def sort_topk(out_ptr, x_ptr, N: tl.constexpr, K: tl.constexpr):
    emit(out_ptr, tl.topk(tl.load(x_ptr + tl.arange(0, N)), K))


@jit
def sort_flip(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.flip(tl.load(x_ptr + tl.arange(0, N))))


@jit
def sort_flip2(out_ptr, x_ptr, DIM: tl.constexpr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.flip(tl.load(x_ptr + offs), DIM))


@jit
def rng_randint(out_ptr, seed, off_ptr, N: tl.constexpr):
    emit(out_ptr, tl.randint(seed, tl.load(off_ptr + tl.arange(0, N))))


@jit
def rng_rand(out_ptr, seed, off_ptr, N: tl.constexpr):
    emit(out_ptr, tl.rand(seed, tl.load(off_ptr + tl.arange(0, N))))


@jit
def rng_randn(out_ptr, seed, off_ptr, N: tl.constexpr):
    emit(out_ptr, tl.randn(seed, tl.load(off_ptr + tl.arange(0, N))))


@jit
def rng_randint4x(out_ptr, seed, off_ptr, N: tl.constexpr):
    a, b, c, d = tl.randint4x(seed, tl.load(off_ptr + tl.arange(0, N)))
    emit(out_ptr, a, 0)
    emit(out_ptr, b, 1)
    emit(out_ptr, c, 2)
    emit(out_ptr, d, 3)


@jit
def rng_randint_scalar(out_ptr, seed, offset):
    emit(out_ptr, tl.randint(seed, offset))


@jit
def rng_rand_arange(out_ptr, seed, N: tl.constexpr):
    emit(out_ptr, tl.rand(seed, tl.arange(0, N)))
""")

LITERALS = (
    "0",
    "1",
    "-1",
    "2**31 - 1",
    "2**31",
    "-2**31",
    "-2**31 - 1",
    "2**32 - 1",
    "2**32",
    "2**63 - 1",
    "2**63",
    "-2**63",
    "2**64 - 1",
    "2**64",
    "True",
    "False",
    "1.5",
    "-0.0",
    "1e50",
    "1e-50",
    "3.4e38",
    "3.5e38",
    "1e-45",
    "2.0**-126",
    "2.0**-127",
)
for _i, _lit in enumerate(LITERALS):
    KERNELS.append(f"""
@jit
def lit_{_i}(out_ptr):
    x = {_lit}
    emit(out_ptr, x)


@jit
def litop_{_i}(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + {_lit})
""")

KERNELS.append("""
@jit
def const_assign(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    c = C
    emit(out_ptr, c, 0)
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + c, 1)


@jit
def const_annotated(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    c: tl.constexpr = C
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + c)


@jit
def const_direct(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + C)


@jit
def const_to_tensor(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + tl.to_tensor(C))


@jit
def const_full(out_ptr, N: tl.constexpr, C: tl.constexpr, DTYPE: tl.constexpr):
    emit(out_ptr, tl.full((N,), C, DTYPE))


@jit
def loop_wrap_add(out_ptr, n, STEP: tl.constexpr):
    acc = 0
    for i in range(n):
        acc += STEP
    emit(out_ptr, acc)


@jit
def loop_wrap_mul(out_ptr, n):
    acc = 1
    for i in range(n):
        acc = acc * 3 + 1
    emit(out_ptr, acc)


@jit
def loop_wrap_block(out_ptr, n, N: tl.constexpr):
    acc = tl.full((N,), 2**31 - 40, tl.int32)
    for i in range(n):
        acc += tl.arange(0, N)
    emit(out_ptr, acc)


@jit
def loop_while(out_ptr, n):
    acc = 1
    i = 0
    while i < n:
        acc = acc * 5
        i += 1
    emit(out_ptr, acc, 0)
    emit(out_ptr, i, 1)


@jit
def loop_index_sum(out_ptr, lo, hi, STEP: tl.constexpr):
    acc = 0
    for i in range(lo, hi, STEP):
        acc += i
    emit(out_ptr, acc)


@jit
def loop_index_type(out_ptr, x_ptr, n, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    for i in range(n, n + 1):
        emit(out_ptr, x + i)


@jit
def loop_carried_type_change(out_ptr, x_ptr, n, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    for i in range(n, n + 1):
        x = x + i
    emit(out_ptr, x)


@jit
def logic_and(out_ptr, x_ptr):
    emit(out_ptr, tl.load(x_ptr) and tl.load(x_ptr + 1))


@jit
def logic_or_block(out_ptr, x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    emit(out_ptr, x or x)
""")
