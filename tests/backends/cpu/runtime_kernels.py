"""Entry points written by hand in LLVM IR, following abi.py, to test the runtime without the
compiler: each is a program body wrapped in the ABI's loop over [pid_begin, pid_end), which
stops after a failed program."""

from __future__ import annotations

import functools

from naiad.backends.cpu import llvm_tools, loader
from naiad.backends.cpu.abi import GRID_SLOTS
from naiad.backends.cpu.target import host_target

BLOCK = 64


def _slots(*names: str) -> str:
    """Load the kernel arguments `names` (8-byte slots after the grid) as i64 values `%name`."""
    lines = []
    for i, name in enumerate(names):
        lines.append(f"  %{name}.slot = getelementptr i64, ptr %params, i64 {GRID_SLOTS + i}")
        lines.append(f"  %{name} = load i64, ptr %{name}.slot")
        lines.append(f"  %{name}.ptr = inttoptr i64 %{name} to ptr")
    return "\n".join(lines)


def entry_point(name: str, arguments: tuple[str, ...], body: str) -> str:
    """An entry point whose program `%pid` runs `body` (blocks ending in `br label %next`)."""
    return f"""
define void @{name}(ptr %params, i64 %begin, i64 %end, ptr %scratch, ptr %status) {{
entry:
{_slots(*arguments)}
  %empty = icmp sge i64 %begin, %end
  br i1 %empty, label %exit, label %program

program:
  %pid = phi i64 [ %begin, %entry ], [ %pid.next, %next ]
{body}

next:
  %pid.next = add i64 %pid, 1
  %status.code = load atomic i32, ptr %status monotonic, align 4
  %ok = icmp eq i32 %status.code, 0
  %more = icmp slt i64 %pid.next, %end
  %go = and i1 %ok, %more
  br i1 %go, label %program, label %exit

exit:
  ret void
}}
"""


# out[k] = x[k] + y[k] for k in [pid * BLOCK, (pid + 1) * BLOCK), k < n (fp32).
VECTOR_ADD = entry_point(
    "vector_add",
    ("x", "y", "out", "n"),
    f"""
  %base = mul i64 %pid, {BLOCK}
  br label %loop
loop:
  %i = phi i64 [ 0, %program ], [ %i.next, %latch ]
  %k = add i64 %base, %i
  %inside = icmp slt i64 %k, %n
  br i1 %inside, label %body, label %latch
body:
  %xa = getelementptr float, ptr %x.ptr, i64 %k
  %ya = getelementptr float, ptr %y.ptr, i64 %k
  %oa = getelementptr float, ptr %out.ptr, i64 %k
  %xv = load float, ptr %xa
  %yv = load float, ptr %ya
  %sum = fadd float %xv, %yv
  store float %sum, ptr %oa
  br label %latch
latch:
  %i.next = add i64 %i, 1
  %again = icmp slt i64 %i.next, {BLOCK}
  br i1 %again, label %loop, label %next""",
)

# tickets[pid] = an atomic counter's value when the program starts.
PROGRAM_ORDER = entry_point(
    "program_order",
    ("tickets", "counter"),
    """
  %ticket = atomicrmw add ptr %counter.ptr, i64 1 seq_cst
  %slot = getelementptr i64, ptr %tickets.ptr, i64 %pid
  store i64 %ticket, ptr %slot
  br label %next""",
)

# Program p waits until program p - 1 has set flags[p - 1], then sets flags[p]: it completes only
# if every program starts after (or while) the programs of lower id run. A wait longer than
# `limit` polls fails the program (code 1, site 0) instead of hanging the test.
CHAIN = entry_point(
    "chain",
    ("flags", "limit"),
    """
  %first = icmp eq i64 %pid, 0
  br i1 %first, label %mark, label %wait
wait:
  %polls = phi i64 [ 0, %program ], [ %polls.next, %poll ]
  %before = sub i64 %pid, 1
  %flag.before = getelementptr i32, ptr %flags.ptr, i64 %before
  %seen = load atomic i32, ptr %flag.before acquire, align 4
  %set = icmp ne i32 %seen, 0
  br i1 %set, label %mark, label %poll
poll:
  %polls.next = add i64 %polls, 1
  %patient = icmp slt i64 %polls.next, %limit
  br i1 %patient, label %wait, label %give.up
give.up:
  %claim = cmpxchg ptr %status, i32 0, i32 1 seq_cst seq_cst
  br label %next
mark:
  %flag = getelementptr i32, ptr %flags.ptr, i64 %pid
  store atomic i32 1, ptr %flag release, align 4
  br label %next""",
)

# total += values[pid], `reps` times, with an atomic add on one shared word.
CONTENDED_ADD = entry_point(
    "contended_add",
    ("values", "total", "reps"),
    """
  %va = getelementptr i64, ptr %values.ptr, i64 %pid
  %value = load i64, ptr %va
  br label %rep
rep:
  %r = phi i64 [ 0, %program ], [ %r.next, %rep ]
  %old = atomicrmw add ptr %total.ptr, i64 %value monotonic
  %r.next = add i64 %r, 1
  %again = icmp slt i64 %r.next, %reps
  br i1 %again, label %rep, label %next""",
)

# Counts the programs run; program `bad` fails with status code `code` at site `site`, info
# (pid * 7, programs counted before it), and returns.
FAIL_AT = entry_point(
    "fail_at",
    ("bad", "ran", "code", "site"),
    """
  %count = atomicrmw add ptr %ran.ptr, i64 1 seq_cst
  %is.bad = icmp eq i64 %pid, %bad
  br i1 %is.bad, label %fail, label %next
fail:
  %code32 = trunc i64 %code to i32
  %claim = cmpxchg ptr %status, i32 0, i32 %code32 seq_cst seq_cst
  %won = extractvalue { i32, i1 } %claim, 1
  br i1 %won, label %record, label %exit
record:
  %site.p = getelementptr i8, ptr %status, i64 4
  %site32 = trunc i64 %site to i32
  store i32 %site32, ptr %site.p
  %pid.p = getelementptr i8, ptr %status, i64 8
  store i64 %pid, ptr %pid.p
  %info0.p = getelementptr i8, ptr %status, i64 16
  %info0 = mul i64 %pid, 7
  store i64 %info0, ptr %info0.p
  %info1.p = getelementptr i8, ptr %status, i64 24
  store i64 %count, ptr %info1.p
  br label %exit""",
)

# Fills `words` i64 words of the scratch arena with the pid, sums them back, and stores
# out[2 * pid] = the sum, out[2 * pid + 1] = the arena's address.
SCRATCH = entry_point(
    "scratch_user",
    ("out", "words"),
    """
  br label %fill
fill:
  %i = phi i64 [ 0, %program ], [ %i.next, %fill ]
  %wa = getelementptr i64, ptr %scratch, i64 %i
  store volatile i64 %pid, ptr %wa
  %i.next = add i64 %i, 1
  %filling = icmp slt i64 %i.next, %words
  br i1 %filling, label %fill, label %sum
sum:
  %j = phi i64 [ 0, %fill ], [ %j.next, %sum ]
  %acc = phi i64 [ 0, %fill ], [ %acc.next, %sum ]
  %ra = getelementptr i64, ptr %scratch, i64 %j
  %word = load volatile i64, ptr %ra
  %acc.next = add i64 %acc, %word
  %j.next = add i64 %j, 1
  %again = icmp slt i64 %j.next, %words
  br i1 %again, label %sum, label %store
store:
  %two.pid = mul i64 %pid, 2
  %oa = getelementptr i64, ptr %out.ptr, i64 %two.pid
  store i64 %acc.next, ptr %oa
  %ob = getelementptr i64, ptr %oa, i64 1
  %address = ptrtoint ptr %scratch to i64
  store i64 %address, ptr %ob
  br label %next""",
)

KERNELS = {
    "vector_add": VECTOR_ADD,
    "program_order": PROGRAM_ORDER,
    "chain": CHAIN,
    "contended_add": CONTENDED_ADD,
    "fail_at": FAIL_AT,
    "scratch_user": SCRATCH,
}


@functools.cache
def compiled(name: str) -> bytes:
    """The object code of kernel `name` for the host."""
    return llvm_tools.compile_ir(KERNELS[name], host_target().machine, name)


@functools.cache
def entry(name: str) -> int:
    """The entry point address of kernel `name`, loaded once (kept alive by the cache)."""
    return _loaded(name).address(name)


@functools.cache
def _loaded(name: str) -> loader.LoadedObject:
    return loader.load_object(compiled(name), [name], name)
