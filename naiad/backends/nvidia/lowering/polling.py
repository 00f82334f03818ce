"""`tt.atomic_poll`: every thread reads the flag with a relaxed load until it holds the value,
then fences once for `sem="acquire"`.

    start = %globaltimer                                  (with a timeout only)
    poll:  v = ld.relaxed.<scope>.global.b<w> [flag]
           seen = v == expected
           again = !seen && %globaltimer - start < timeout   (!seen without one)
           br again, poll, done
    done:  fence.acquire.<scope>   (fence.acq_rel before sm_90, which lacks fence.acquire)

The read is a load, not an `atom`, so polling never takes the line away from the writer. The
pointer is a scalar, the same for every thread, and control flow is uniform, so each thread
polls on its own: without a timeout all of them leave once the value is there. With one, they
may disagree (a thread can run out of time just before another sees the value), so they vote
with `bar.red.or.pred`, which is also a barrier: a thread that saw the value fenced before it,
so the others are ordered after that read too, and every thread returns the same answer. No
shared memory either way.
"""

from __future__ import annotations

from ....dialects.tt.attributes import MemSemantic, MemSyncScope
from ....passes.diagnostics import unsupported
from .context import Context, lowers
from .emitter import GLOBAL_PTR, element_of

# The register type of each width: (LLVM type, inline-asm constraint).
_WORDS = {16: ("i16", "h"), 32: ("i32", "r"), 64: ("i64", "l")}
_TIMER = "mov.u64 $0, %globaltimer;"
_VOTE = (
    "{ .reg .pred seen, any; setp.ne.b32 seen, $1, 0; bar.red.or.pred any, 0, seen; "
    "selp.b32 $0, 1, 0, any; }"
)


@lowers("tt.atomic_poll")
def _atomic_poll(ctx: Context, op) -> None:
    width = element_of(op.expected.type).width
    if width not in _WORDS:
        unsupported(op, f"no GPU atomic_poll on {element_of(op.expected.type)}")
    if ctx.bounds:
        ctx.bounds.guard(ctx, op, None, 1)  # reports and stops the program if outside
    em = ctx.em
    (ptr,), (expected,) = ctx[op.ptr], ctx[op.expected]
    timeout = None if op.timeout is None else ctx[op.timeout][0]
    start = None if timeout is None else em.asm("i64", _TIMER, "=l", [], hint="start")
    scope = MemSyncScope.keyword(op.scope)
    poll, done = em.label("poll"), em.label("poll.done")
    em.emit(f"br label %{poll}")
    em.start_block(poll)
    word, letter = _WORDS[width]
    load = f"ld.relaxed.{scope}.global.b{width} $0, [$1];"
    value = em.asm(word, load, f"={letter},l", [(GLOBAL_PTR, ptr)], hint="polled")
    seen = em.op(f"icmp eq {word} {value}, {expected}", "seen")
    again = em.op(f"xor i1 {seen}, true")
    if timeout is not None:
        elapsed = em.op(f"sub i64 {em.asm('i64', _TIMER, '=l', [], hint='now')}, {start}")
        in_time = em.op(f"icmp ult i64 {elapsed}, {timeout}")
        again = em.op(f"and i1 {again}, {in_time}")
    em.emit(f"br i1 {again}, label %{poll}, label %{done}")
    em.start_block(done)
    if MemSemantic.keyword(op.sem) == "acquire":
        order = "acquire" if ctx.capability >= 90 else "acq_rel"
        em.asm("void", f"fence.{order}.{scope};", "", [])
    if timeout is not None:
        vote = em.asm("i32", _VOTE, "=r,r", [("i32", em.op(f"zext i1 {seen} to i32"))])
        seen = em.op(f"icmp ne i32 {vote}, 0", "seen")
    ctx[op.result] = [seen]
