"""`tt.dot` in a blocked layout: each thread computes its own accumulator elements by
multiply-adds over the whole K extent, which its `#ttg.dot_op` operands hold (rows of A and
columns of B, K broadcast over the threads that share them).

This is the dot of every shape and type that tensor cores do not take (accelerate-matmul
decides): f32 with `inputPrecision = ieee`, f64, tiny tiles, and anything before sm_80. As
Triton's FMA dot, operands are first widened to the accumulator's type (f16 -> f32, int8 ->
int32, fp8 -> f16 -> ...), then for each element `acc = fma(a[m, k], b[k, n], acc)` for k in
order from the accumulator operand `c`: floats by `llvm.fmuladd` (one rounding per step, an
`fma.rn` in PTX), integers by wrapping `mul` and `add`.
"""

from __future__ import annotations

from ....ir import FloatType
from .context import Context
from .dot_operands import check_thread_bases, lookup, register_table, to_accumulator
from .elementwise import intrinsic_suffix
from .emitter import llvm_type
from .indexing import layout_of, register_coords


def lower_fma_dot(ctx: Context, op) -> None:
    """Lower `op` (a `tt.dot` whose result is blocked); see the module doc."""
    em = ctx.em
    a_t, b_t, d_t = op.a.type, op.b.type, op.d.type
    la, lb, lc = layout_of(a_t), layout_of(b_t), layout_of(d_t)
    rank = len(d_t.shape)
    batch = list(range(rank - 2))
    m_dim, n_dim = rank - 2, rank - 1
    check_thread_bases(la, lc, [*batch, m_dim], [*batch, m_dim], "A")
    check_thread_bases(lb, lc, [*batch, n_dim], [*batch, n_dim], "B")
    acc_t = d_t.element_type
    a_regs = [to_accumulator(em, v, a_t.element_type, acc_t) for v in ctx[op.a]]
    b_regs = [to_accumulator(em, v, b_t.element_type, acc_t) for v in ctx[op.b]]
    a_table, b_table = register_table(la), register_table(lb)
    kind = llvm_type(acc_t)
    if isinstance(acc_t, FloatType):
        name = f"llvm.fmuladd.{intrinsic_suffix(acc_t)}"

        def step(x, y, acc):
            return em.call(kind, name, [(kind, x), (kind, y), (kind, acc)])
    else:

        def step(x, y, acc):
            return em.op(f"add {kind} {acc}, {em.op(f'mul {kind} {x}, {y}')}")

    k_extent = a_t.shape[-1]
    c_regs = ctx[op.c]
    done: dict[tuple[int, ...], str] = {}
    out = []
    for r, coords in enumerate(register_coords(lc)):
        if coords not in done:
            acc = c_regs[r]
            head = coords[:m_dim]
            for k in range(k_extent):
                x = a_regs[lookup(a_table, (*head, coords[m_dim], k), "A")]
                y = b_regs[lookup(b_table, (*head, k, coords[n_dim]), "B")]
                acc = step(x, y, acc)
            done[coords] = acc
        out.append(done[coords])
    ctx[op.d] = out
