"""Code run by some threads only: `if (predicate) { ... }` as two LLVM blocks.

Calls (`vprintf`, `__assertfail`) and stores to the shared scratch cannot carry a PTX predicate,
so the threads that must not run them branch around them.
"""

from __future__ import annotations

from .context import Context


def predicated(ctx: Context, predicate: str, emit, hint: str = "guard") -> None:
    """Emit `emit()` in a block entered only where `predicate` (an i1 value) holds."""
    em = ctx.em
    then, merge = em.label(f"{hint}.then"), em.label(f"{hint}.end")
    em.emit(f"br i1 {predicate}, label %{then}, label %{merge}")
    em.start_block(then)
    emit()
    em.emit(f"br label %{merge}")
    em.start_block(merge)
