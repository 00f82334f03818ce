"""The launching thread's side of the worker pool, in LLVM IR (the pool's state: pool_ir.py).

The launching thread runs programs too, then waits for the workers still inside the GATE. It
does both in time slices, and returns to Python between them (`PENDING`): Python runs signal
handlers only between bytecodes, so a launch that stayed in native code until its last program
let a Ctrl-C take effect 44 s late (issue 13, item 7). pool.py calls `naiad_pool_continue`
again until the launch is done, and on a KeyboardInterrupt (raised by the handler in between)
cancels it: `naiad_pool_cancel` claims the status record with `FAULT_INTERRUPT`, so that no
chunk is taken and every thread's entry point returns after its current program (abi.py), and
the next `naiad_pool_continue` waits for the workers inside.

    i32 naiad_pool_launch(state, fn, params, n, chunk, invited, scratch, status, slice_ns)
    i32 naiad_pool_continue(state, scratch, slice_ns)
    void naiad_pool_cancel(status)

Both of the first return the status code once the launch is over, `PENDING` (-1) while it
runs. A slice ends after the group of programs that crosses it: the launching thread runs its
chunk in groups, from one program, each next group as many programs as the last one's pace
fits in `GROUP_NS` (at most `GROUP_GROWTH` times the last), so that its clock is read a few
times per slice, however short or long the programs. (Doubling from one, tutorial 02's 64
programs of 40 us ran in groups of 1, 2, 4, ..., 32, and a kernel whose entry point runs its
programs' iterations in turn, codegen/interleave.py, could only interleave within a group.)
Its place in its chunk (`CALLER_NEXT`, `CALLER_END`) is kept in the state between slices:
programs still start in increasing order, and one that waits for a lower one of the caller's
waits only until the next slice. While it waits for the workers, a futex wait
with the slice's remaining time returns early on a signal (EINTR), so an idle launching thread
answers a Ctrl-C at once. A grid run inline is the same job with no worker invited and one
chunk (`invited` 0, `chunk` n), on a state block of the launching thread's own.
"""

from __future__ import annotations

PENDING = -1
FAULT_INTERRUPT = 0x40000000  # a cancelled launch's status code, far from abi.py's FAULT_*
GROUP_NS = 1_000_000
GROUP_GROWTH = 64  # a group is at most this many times the last one
_CLOCK_MONOTONIC = 1  # Linux, on x86-64 and AArch64

TEMPLATE = r"""
declare i32 @clock_gettime(i32, ptr)

define private i64 @now() {
  %ts = alloca [2 x i64], align 8
  %r = call i32 @clock_gettime(i32 $clock_monotonic, ptr %ts)
  %seconds = load i64, ptr %ts
  %ns.p = getelementptr i8, ptr %ts, i64 8
  %ns = load i64, ptr %ns.p
  %whole = mul i64 %seconds, 1000000000
  %t = add i64 %whole, %ns
  ret i64 %t
}

; Sleep while `word` holds `expected`, at most `ns` nanoseconds; 0 when woken, nonzero on a
; timeout, a signal, or a word that had changed already (the caller then returns to Python).
define private i64 @futex_wait_for(ptr %word, i32 %expected, i64 %ns) {
  %ts = alloca [2 x i64], align 8
  %seconds = udiv i64 %ns, 1000000000
  %rest = urem i64 %ns, 1000000000
  store i64 %seconds, ptr %ts
  %rest.p = getelementptr i8, ptr %ts, i64 8
  store i64 %rest, ptr %rest.p
  %value = zext i32 %expected to i64
  %r = call i64 (i64, ...) @syscall(i64 $sys_futex, ptr %word, i64 $wait_op, i64 %value,
                                    ptr %ts, ptr null, i64 0)
  ret i64 %r
}

; The launching thread's programs: the rest of its chunk, then new chunks, in groups, until no
; chunk is left or the launch failed (0), or a group ended past `deadline` (1).
define private i32 @caller_chunks(ptr %state, ptr %scratch, i64 %deadline) {
entry:
$load_job
  %next.p = getelementptr i8, ptr %state, i64 $next
  %own.p = getelementptr i8, ptr %state, i64 $caller_next
  %own.end.p = getelementptr i8, ptr %state, i64 $caller_end
  %t0 = call i64 @now()
  br label %claim

claim:
  %group = phi i64 [ 1, %entry ], [ %group.next, %ran ]
  %since = phi i64 [ %t0, %entry ], [ %t, %ran ]
  %code = load atomic i32, ptr %status monotonic, align 4
  %failed = icmp ne i32 %code, 0
  br i1 %failed, label %done, label %current

current:
  %own = load i64, ptr %own.p
  %own.end = load i64, ptr %own.end.p
  %inside = icmp ult i64 %own, %own.end
  br i1 %inside, label %group.run, label %take

take:
  %c = atomicrmw add ptr %next.p, i64 1 seq_cst
  %more = icmp ult i64 %c, %chunks
  br i1 %more, label %new.chunk, label %done

new.chunk:
  %begin = mul i64 %c, %chunk
  %end.full = add i64 %begin, %chunk
  %short = icmp ult i64 %n, %end.full
  %end = select i1 %short, i64 %n, i64 %end.full
  store i64 %end, ptr %own.end.p
  br label %group.run

group.run:
  %from = phi i64 [ %own, %current ], [ %begin, %new.chunk ]
  %limit = phi i64 [ %own.end, %current ], [ %end, %new.chunk ]
  %to.full = add i64 %from, %group
  %past = icmp ult i64 %limit, %to.full
  %to = select i1 %past, i64 %limit, i64 %to.full
  call void %fn(ptr %params, i64 %from, i64 %to, ptr %scratch, ptr %status)
  store i64 %to, ptr %own.p
  %t = call i64 @now()
  %late = icmp sge i64 %t, %deadline
  br i1 %late, label %pending, label %ran

ran:
  %took = sub i64 %t, %since
  %took.1 = call i64 @llvm.umax.i64(i64 %took, i64 1)
  %count = sub i64 %to, %from
  %budget = mul i64 %count, $group_ns
  %fit = udiv i64 %budget, %took.1
  %most = mul i64 %group, $group_growth
  %capped = call i64 @llvm.umin.i64(i64 %fit, i64 %most)
  %group.next = call i64 @llvm.umax.i64(i64 %capped, i64 1)
  br label %claim

pending:
  ret i32 1

done:
  ret i32 0
}

declare i64 @llvm.umax.i64(i64, i64)
declare i64 @llvm.umin.i64(i64, i64)

; Start a launch of programs [0, n) in chunks on the calling thread and up to `invited` workers
; (0: the calling thread alone), then run its first slice.
define i32 @naiad_pool_launch(ptr %state, ptr %fn, ptr %params, i64 %n, i64 %chunk,
                              i32 %invited, ptr %scratch, ptr %status, i64 %slice) {
entry:
  call void @llvm.memset.p0.i64(ptr align 8 %status, i8 0, i64 64, i1 false)
  %fn.p = getelementptr i8, ptr %state, i64 $job_entry
  store ptr %fn, ptr %fn.p
  %params.p = getelementptr i8, ptr %state, i64 $job_params
  store ptr %params, ptr %params.p
  %n.p = getelementptr i8, ptr %state, i64 $job_programs
  store i64 %n, ptr %n.p
  %chunk.p = getelementptr i8, ptr %state, i64 $job_chunk
  store i64 %chunk, ptr %chunk.p
  %round.up = add i64 %n, %chunk
  %round.up.1 = sub i64 %round.up, 1
  %chunks = udiv i64 %round.up.1, %chunk
  %chunks.p = getelementptr i8, ptr %state, i64 $job_chunks
  store i64 %chunks, ptr %chunks.p
  %status.p = getelementptr i8, ptr %state, i64 $job_status
  store ptr %status, ptr %status.p
  %own.p = getelementptr i8, ptr %state, i64 $caller_next
  store i64 0, ptr %own.p
  %own.end.p = getelementptr i8, ptr %state, i64 $caller_end
  store i64 0, ptr %own.end.p
  %next.p = getelementptr i8, ptr %state, i64 $next
  store atomic i64 0, ptr %next.p seq_cst, align 8
  ; Open the gate (it is closed and empty between launches), then ring.
  %gate.p = getelementptr i8, ptr %state, i64 $gate
  %allowed = shl i32 %invited, 16
  %opened = or i32 %allowed, -2147483648
  store atomic i32 %opened, ptr %gate.p seq_cst, align 4
  %bell.p = getelementptr i8, ptr %state, i64 $bell
  %rung = atomicrmw add ptr %bell.p, i32 1 seq_cst
  %sleepers.p = getelementptr i8, ptr %state, i64 $sleepers
  %sleepers = load atomic i32, ptr %sleepers.p seq_cst, align 4
  %any.asleep = icmp ne i32 %sleepers, 0
  br i1 %any.asleep, label %wake, label %work

wake:
  %count = zext i32 %invited to i64
  call void @futex_wake(ptr %bell.p, i64 %count)
  br label %work

work:
  %code = call i32 @naiad_pool_continue(ptr %state, ptr %scratch, i64 %slice)
  ret i32 %code
}

; One slice of the launch in progress: the calling thread's programs, then, once no chunk is
; left, closing the gate and waiting for the workers inside. The status code when it is over,
; PENDING when the slice ended first.
define i32 @naiad_pool_continue(ptr %state, ptr %scratch, i64 %slice) {
entry:
  %start = call i64 @now()
  %deadline = add i64 %start, %slice
  %late = call i32 @caller_chunks(ptr %state, ptr %scratch, i64 %deadline)
  %is.late = icmp ne i32 %late, 0
  br i1 %is.late, label %pending, label %close

close:
  %gate.p = getelementptr i8, ptr %state, i64 $gate
  %closing = atomicrmw and ptr %gate.p, i32 2147483647 seq_cst
  %waiting.p = getelementptr i8, ptr %state, i64 $waiting
  br label %poll

poll:
  %spins = phi i32 [ 0, %close ], [ %spins.1, %pause ], [ %spins, %awake ]
  %gate = load atomic i32, ptr %gate.p seq_cst, align 4
  %inside = and i32 %gate, 65535
  %done = icmp eq i32 %inside, 0
  br i1 %done, label %finish, label %idle

idle:
  %patient = icmp ult i32 %spins, $caller_spins
  br i1 %patient, label %pause, label %sleep

pause:
  $spin_hint
  %spins.1 = add i32 %spins, 1
  br label %poll

sleep:
  %now = call i64 @now()
  %left = sub i64 %deadline, %now
  %over = icmp sle i64 %left, 0
  br i1 %over, label %pending, label %announce

announce:
  store atomic i32 1, ptr %waiting.p seq_cst, align 4
  %still = load atomic i32, ptr %gate.p seq_cst, align 4
  %still.inside = and i32 %still, 65535
  %busy = icmp ne i32 %still.inside, 0
  br i1 %busy, label %block, label %awake

block:
  %woken = call i64 @futex_wait_for(ptr %gate.p, i32 %still, i64 %left)
  %interrupted = icmp ne i64 %woken, 0
  br i1 %interrupted, label %give.up, label %awake

give.up:
  store atomic i32 0, ptr %waiting.p seq_cst, align 4
  br label %pending

awake:
  store atomic i32 0, ptr %waiting.p seq_cst, align 4
  br label %poll

finish:
  %status.p = getelementptr i8, ptr %state, i64 $job_status
  %status = load ptr, ptr %status.p
  %code = load atomic i32, ptr %status monotonic, align 4
  ret i32 %code

pending:
  ret i32 $pending
}

; Cancel the launch whose status record is `status`, unless a program failed first.
define void @naiad_pool_cancel(ptr %status) {
  %swap = cmpxchg ptr %status, i32 0, i32 $fault_interrupt seq_cst seq_cst
  ret void
}
"""


def substitutions() -> dict:
    """What the template needs besides the state's layout (pool_ir.py gives that)."""
    return {
        "clock_monotonic": _CLOCK_MONOTONIC,
        "group_ns": GROUP_NS,
        "group_growth": GROUP_GROWTH,
        "pending": PENDING,
        "fault_interrupt": FAULT_INTERRUPT,
    }
