"""The worker pool's native half, in LLVM IR: worker threads that wait in native code, so a
launch wakes them without any Python thread switching.

The pool's state is one block of memory that Python allocates and the native functions share,
each word that threads fight over on its own cache line:

    offset   0  the job: entry point, params, programs, chunk, chunks, status, scratch table;
                STOP (i32, offset 56): set once, to make every worker return
    offset  64  BELL      i32 futex word, raised by one per launch: "a job may be open"
    offset 128  NEXT      i64 the next chunk to take
    offset 192  GATE      i32 futex word: OPEN (bit 31) | workers allowed in (bits 16-30)
                          | workers inside the job (bits 0-15)
    offset 256  WAITING   i32 1 while the launching thread sleeps on GATE
    offset 320  SLEEPERS  i32 workers asleep on BELL
    offset 384  CALLER_NEXT, CALLER_END  i64 each: where the launching thread is in its chunk

A launch (`naiad_pool_launch`, on the calling thread, which ctypes has let go of the GIL) zeroes
the status record, writes the job, opens the GATE for `invited` workers, rings the BELL, and
wakes that many sleepers; then it runs chunks itself. When no chunk is left it closes the GATE
and waits only for the workers inside — a worker that wakes late finds the gate closed and goes
back to waiting, so it costs the launch nothing. The launching thread does all this in time
slices, returning to Python between them, so that a Ctrl-C stops a long launch: its functions
are pool_caller_ir.py's. A worker (`naiad_pool_worker`, started by `pthread_create`) spins a
little on BELL, then sleeps on it; when it rings, the worker enters the GATE if it is open and
has room (one compare-and-swap), takes chunks, and leaves; the last one out of a closed gate
wakes the launching thread if it sleeps. The job is rewritten only
while the gate is closed and empty, so a worker inside always reads the job it entered.

Chunks are taken with an atomic increment of NEXT, so they start in increasing order; no chunk
is taken once the status record's code is set.

Sleeping pairs a counter with a futex word (SLEEPERS with BELL, WAITING with GATE): the waker
writes the word then reads the counter; the sleeper raises the counter then sleeps only while
the word still holds what it saw (the kernel checks that atomically). These accesses are all
sequentially consistent, so one of the two sees the other: no lost wake-up, and no system call
when nobody sleeps.

The IR is written as text: it reads like the algorithm, and only the futex system call number and
the spin-wait hint differ between architectures (tables below).
"""

from __future__ import annotations

import string

from . import pool_caller_ir

JOB_ENTRY = 0
JOB_PARAMS = 8
JOB_PROGRAMS = 16
JOB_CHUNK = 24
JOB_CHUNKS = 32
JOB_STATUS = 40
SCRATCH_TABLE = 48  # address of an array of arena addresses, one per worker (index 0 unused)
STOP = 56
BELL = 64
NEXT = 128
GATE = 192
WAITING = 256
SLEEPERS = 320
CALLER_NEXT = 384  # i64 the next program of the launching thread's chunk (pool_caller_ir.py)
CALLER_END = 392  # i64 the end of that chunk
STATE_BYTES = 448

WORKER_ARG_BYTES = 16  # what `naiad_pool_worker` receives: {ptr state, i64 worker index}
MAX_WORKERS = 0x7FFF  # the GATE's field of workers allowed in

# Spins before sleeping. A worker spins long enough (tens of microseconds) that back-to-back
# launches find it awake, short enough that an idle pool soon leaves the cores to others; the
# launching thread, which waits only for workers already running chunks, spins less.
WORKER_SPINS = 2048
CALLER_SPINS = 256

_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}
# The spin-wait hint (x86 `pause`, Arm `yield`) as an intrinsic: inline assembly would need an
# assembly parser for the target, which llvmlite registers only for the host.
_SPIN_HINT = {
    "x86_64": ("declare void @llvm.x86.sse2.pause()", "call void @llvm.x86.sse2.pause()"),
    "aarch64": ("declare void @llvm.aarch64.hint(i32)", "call void @llvm.aarch64.hint(i32 1)"),
}
_FUTEX_WAIT_PRIVATE = 128  # FUTEX_WAIT | FUTEX_PRIVATE_FLAG: the words are never shared across
_FUTEX_WAKE_PRIVATE = 129  # processes (a forked child rebuilds its pool)

EXPORTS = (
    "naiad_pool_worker",
    "naiad_pool_launch",
    "naiad_pool_continue",
    "naiad_pool_cancel",
    "naiad_pool_stop",
)

_TEMPLATE = r"""
declare i64 @syscall(i64, ...)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
$spin_hint_declaration

define private void @futex_wait(ptr %word, i32 %expected) {
  %value = zext i32 %expected to i64
  %r = call i64 (i64, ...) @syscall(i64 $sys_futex, ptr %word, i64 $wait_op, i64 %value,
                                    ptr null, ptr null, i64 0)
  ret void
}

define private void @futex_wake(ptr %word, i64 %count) {
  %r = call i64 (i64, ...) @syscall(i64 $sys_futex, ptr %word, i64 $wake_op, i64 %count,
                                    ptr null, ptr null, i64 0)
  ret void
}

; Take chunks of the current job until none is left or a program has failed.
define private void @run_chunks(ptr %state, ptr %scratch) {
entry:
$load_job
  %next.p = getelementptr i8, ptr %state, i64 $next
  br label %claim

claim:
  %code = load atomic i32, ptr %status monotonic, align 4
  %failed = icmp ne i32 %code, 0
  br i1 %failed, label %done, label %take

take:
  %c = atomicrmw add ptr %next.p, i64 1 seq_cst
  %more = icmp ult i64 %c, %chunks
  br i1 %more, label %run, label %done

run:
  %begin = mul i64 %c, %chunk
  %end.full = add i64 %begin, %chunk
  %short = icmp ult i64 %n, %end.full
  %end = select i1 %short, i64 %n, i64 %end.full
  call void %fn(ptr %params, i64 %begin, i64 %end, ptr %scratch, ptr %status)
  br label %claim

done:
  ret void
}

; A worker thread: wait for the bell, enter the gate if it is open with room, run chunks, leave.
define ptr @naiad_pool_worker(ptr %arg) {
entry:
  %state = load ptr, ptr %arg
  %index.p = getelementptr i8, ptr %arg, i64 8
  %index = load i64, ptr %index.p
  %table.p = getelementptr i8, ptr %state, i64 $scratch_table
  %stop.p = getelementptr i8, ptr %state, i64 $stop
  %bell.p = getelementptr i8, ptr %state, i64 $bell
  %gate.p = getelementptr i8, ptr %state, i64 $gate
  %waiting.p = getelementptr i8, ptr %state, i64 $waiting
  %sleepers.p = getelementptr i8, ptr %state, i64 $sleepers
  br label %wait

wait:
  ; The bell starts at 0 and every launch raises it, so a thread that starts after a launch
  ; still sees that bell as new.
  %seen = phi i32 [ 0, %entry ], [ %rung, %next ]
  br label %poll

poll:
  %spins = phi i32 [ 0, %wait ], [ %spins.1, %pause ], [ %spins, %sleep ]
  %rung = load atomic i32, ptr %bell.p seq_cst, align 4
  %quiet = icmp eq i32 %rung, %seen
  br i1 %quiet, label %idle, label %woken

idle:
  %patient = icmp ult i32 %spins, $worker_spins
  br i1 %patient, label %pause, label %sleep

pause:
  $spin_hint
  %spins.1 = add i32 %spins, 1
  br label %poll

sleep:
  %s0 = atomicrmw add ptr %sleepers.p, i32 1 seq_cst
  call void @futex_wait(ptr %bell.p, i32 %seen)
  %s1 = atomicrmw sub ptr %sleepers.p, i32 1 seq_cst
  br label %poll

woken:
  %stop = load atomic i32, ptr %stop.p seq_cst, align 4
  %stopping = icmp ne i32 %stop, 0
  br i1 %stopping, label %quit, label %try.enter

try.enter:
  %gate = load atomic i32, ptr %gate.p seq_cst, align 4
  %open = icmp slt i32 %gate, 0
  %inside = and i32 %gate, 65535
  %allowed.bits = lshr i32 %gate, 16
  %allowed = and i32 %allowed.bits, 32767
  %room = icmp ult i32 %inside, %allowed
  %may.enter = and i1 %open, %room
  br i1 %may.enter, label %enter, label %next

enter:
  %gate.1 = add i32 %gate, 1
  %swap = cmpxchg ptr %gate.p, i32 %gate, i32 %gate.1 seq_cst seq_cst
  %entered = extractvalue { i32, i1 } %swap, 1
  br i1 %entered, label %work, label %try.enter

work:
  %table = load ptr, ptr %table.p
  %slot = getelementptr ptr, ptr %table, i64 %index
  %scratch = load ptr, ptr %slot
  call void @run_chunks(ptr %state, ptr %scratch)
  %before = atomicrmw sub ptr %gate.p, i32 1 seq_cst
  %after = sub i32 %before, 1
  %closed = icmp sge i32 %after, 0
  %left = and i32 %after, 65535
  %empty = icmp eq i32 %left, 0
  %last = and i1 %closed, %empty
  br i1 %last, label %tell, label %next

tell:
  %asleep = load atomic i32, ptr %waiting.p seq_cst, align 4
  %is.asleep = icmp ne i32 %asleep, 0
  br i1 %is.asleep, label %wake.caller, label %next

wake.caller:
  call void @futex_wake(ptr %gate.p, i64 1)
  br label %next

next:
  br label %wait

quit:
  ret ptr null
}

; Make every worker return (their threads are then joined).
define void @naiad_pool_stop(ptr %state) {
  %stop.p = getelementptr i8, ptr %state, i64 $stop
  store atomic i32 1, ptr %stop.p seq_cst, align 4
  %bell.p = getelementptr i8, ptr %state, i64 $bell
  %rung = atomicrmw add ptr %bell.p, i32 1 seq_cst
  call void @futex_wake(ptr %bell.p, i64 2147483647)
  ret void
}
"""


def _load_job() -> str:
    """The job's fields loaded at a function's entry (`run_chunks`, `caller_chunks`): `%fn`,
    `%params`, `%n`, `%chunk`, `%chunks` and `%status`, each beside its address `%<name>.p`."""
    fields = (
        ("fn", "ptr", JOB_ENTRY),
        ("params", "ptr", JOB_PARAMS),
        ("n", "i64", JOB_PROGRAMS),
        ("chunk", "i64", JOB_CHUNK),
        ("chunks", "i64", JOB_CHUNKS),
        ("status", "ptr", JOB_STATUS),
    )
    lines = []
    for name, kind, offset in fields:
        lines.append(f"  %{name}.p = getelementptr i8, ptr %state, i64 {offset}")
        lines.append(f"  %{name} = load {kind}, ptr %{name}.p")
    return "\n".join(lines)


def pool_module(arch: str) -> str:
    """The pool's LLVM IR for a Linux machine of architecture `arch` (`x86_64`, `aarch64`)."""
    if arch not in _SYS_FUTEX:
        raise NotImplementedError(f"the native worker pool has no futex table for {arch}")
    template = string.Template(_TEMPLATE + pool_caller_ir.TEMPLATE)
    return template.substitute(
        pool_caller_ir.substitutions(),
        sys_futex=_SYS_FUTEX[arch],
        spin_hint_declaration=_SPIN_HINT[arch][0],
        spin_hint=_SPIN_HINT[arch][1],
        wait_op=_FUTEX_WAIT_PRIVATE,
        wake_op=_FUTEX_WAKE_PRIVATE,
        job_entry=JOB_ENTRY,
        job_params=JOB_PARAMS,
        job_programs=JOB_PROGRAMS,
        job_chunk=JOB_CHUNK,
        job_chunks=JOB_CHUNKS,
        job_status=JOB_STATUS,
        load_job=_load_job(),
        scratch_table=SCRATCH_TABLE,
        stop=STOP,
        bell=BELL,
        next=NEXT,
        gate=GATE,
        waiting=WAITING,
        sleepers=SLEEPERS,
        caller_next=CALLER_NEXT,
        caller_end=CALLER_END,
        worker_spins=WORKER_SPINS,
        caller_spins=CALLER_SPINS,
    )
