// RUN: naiad-opt %s -p fuse-nested-loops | filecheck %s

// Inner bounds the same for every outer iteration: whether the inner loop runs is decided
// once; an empty one takes the nest without it, else one loop over max(0, outer trips) *
// inner trips runs the prologue where T == 0, the body always, the epilogue on the last fused
// iteration of each outer one. T counts in i32, the inner loop's type (from 0 by 1: its trip
// count fits); the total stays i64.
// CHECK-LABEL: tt.func public @invariant
// CHECK: arith.divsi
// CHECK: %[[INNER:.+]] = arith.divsi
// CHECK: %[[LEN:.+]] = arith.maxsi %[[INNER]], %{{.+}} : i64
// CHECK: %[[TOTAL:.+]] = arith.muli %{{.+}}, %[[LEN]] : i64
// CHECK: %[[EMPTY:.+]] = arith.cmpi sle, %[[INNER]], %{{.+}} : i64
// CHECK: scf.if %[[EMPTY]]
// CHECK: scf.for %{{.+}} = %arg0 to %arg1 step %arg2
// CHECK-NOT: scf.for
// CHECK: } else {
// CHECK: %[[LEN32:.+]] = arith.trunci %{{.+}} : i64 to i32
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[TOTAL]] step %{{.+}} iter_args(%[[T:arg[0-9]+]] = %{{[^,]+}}, %[[I:arg[0-9]+]] =
// CHECK-SAME: : i64
// CHECK: arith.cmpi eq, %[[T]], %{{.+}} : i32
// CHECK: scf.if
// CHECK: arith.addi %[[I]], %arg2 : i32
// CHECK-NOT: arith.cmpi slt
// CHECK: arith.subi %[[LEN32]], %{{.+}} : i32
// CHECK: scf.if
// CHECK: arith.select
// CHECK-NOT: scf.for
// CHECK: tt.return
tt.func public @invariant(%lb: i32, %ub: i32, %s: i32) -> i32 {
  %zero = arith.constant 0 : i32
  %c0 = arith.constant 0 : i32
  %c3 = arith.constant 3 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %zero) -> (i32) : i32 {
    %p = arith.muli %i, %c3 : i32
    %in = scf.for %j = %c0 to %c3 step %c1 iter_args(%a = %acc) -> (i32) : i32 {
      %x = arith.muli %a, %c3 : i32
      %y = arith.addi %x, %p : i32
      %z = arith.addi %y, %j : i32
      scf.yield %z : i32
    }
    %e = arith.addi %in, %i : i32
    scf.yield %e : i32
  } {tt.flatten}
  tt.return %r : i32
}

// An inner trip count that may be zero or negative (an argument): the nest without its inner
// loop, or the fused loop. Its step an argument, the trip count may not fit the inner loop's
// i32: T counts in i64.
// CHECK-LABEL: tt.func public @inner_may_be_empty
// CHECK: arith.cmpi sle
// CHECK: scf.if
// CHECK-COUNT-2: scf.for
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : i64
// CHECK-NOT: scf.for
tt.func public @inner_may_be_empty(%n: i32, %m: i32, %s: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c7 = arith.constant 7 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c7) -> (i32) : i32 {
    %p = arith.muli %acc, %c7 : i32
    %in = scf.for %j = %c1 to %m step %s iter_args(%a = %p) -> (i32) : i32 {
      %x = arith.xori %a, %j : i32
      %y = arith.muli %x, %c7 : i32
      scf.yield %y : i32
    }
    %e = arith.subi %in, %i : i32
    scf.yield %e : i32
  } {tt.flatten}
  tt.return %r : i32
}

// Inner bounds computed from the outer induction variable: a first loop counts the fused
// iterations (the sum of max(1, inner trips)); the prologue recomputes the inner trip count.
// CHECK-LABEL: tt.func public @dependent
// CHECK: %[[COUNT:.+]] = scf.for %[[K:.+]] = %arg0 to %arg1 step %arg2 iter_args
// CHECK: arith.addi %[[K]], %{{.+}} : i32
// CHECK: arith.divsi
// CHECK: scf.yield
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[COUNT]] step
// CHECK: arith.divsi
// CHECK-NOT: scf.for
// CHECK: tt.return
tt.func public @dependent(%lb: i32, %ub: i32, %s: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c5 = arith.constant 5 : i32
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %c5) -> (i32) : i32 {
    %lo = arith.addi %i, %c1 : i32
    %hi = arith.muli %i, %c2 : i32
    %in = scf.for %j = %lo to %hi step %c1 iter_args(%a = %acc) -> (i32) : i32 {
      %x = arith.muli %a, %c5 : i32
      %y = arith.addi %x, %j : i32
      scf.yield %y : i32
    }
    %e = arith.addi %in, %hi : i32
    scf.yield %e : i32
  } {tt.flatten}
  tt.return %r : i32
}

// `llvm.intr.assume(ub > lb)` on the inner bounds: the body runs without a condition.
// CHECK-LABEL: tt.func public @assumed_to_run
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: scf.yield
// CHECK: }
// CHECK-NOT: arith.cmpi slt
// CHECK: arith.muli
// CHECK: tt.return
tt.func public @assumed_to_run(%lb: i32, %ub: i32, %s: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %c3) -> (i32) : i32 {
    %lo = arith.muli %i, %c3 : i32
    %hi = arith.addi %lo, %c3 : i32
    %ordered = arith.cmpi sgt, %hi, %lo : i32
    llvm.intr.assume %ordered : i1
    %in = scf.for %j = %lo to %hi step %c1 iter_args(%a = %acc) -> (i32) : i32 {
      %x = arith.muli %a, %c3 : i32
      %y = arith.subi %x, %j : i32
      scf.yield %y : i32
    }
    scf.yield %in : i32
  } {tt.flatten}
  tt.return %r : i32
}

// Without `tt.flatten` a nest is left alone.
// CHECK-LABEL: tt.func public @not_asked
// CHECK-COUNT-2: scf.for
tt.func public @not_asked(%lb: i32, %ub: i32, %s: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %c0) -> (i32) : i32 {
    %in = scf.for %j = %c0 to %ub step %c1 iter_args(%a = %acc) -> (i32) : i32 {
      %x = arith.addi %a, %j : i32
      scf.yield %x : i32
    }
    scf.yield %in : i32
  }
  tt.return %r : i32
}

// Left alone: the inner bound reads a value carried by the outer loop (the fused trip count
// could not be known before the loop).
// CHECK-LABEL: tt.func public @bound_reads_a_carried_value
// CHECK-COUNT-2: scf.for
// CHECK: tt.flatten
tt.func public @bound_reads_a_carried_value(%lb: i32, %ub: i32, %s: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %c1) -> (i32) : i32 {
    %hi = arith.remsi %acc, %c3 : i32
    %in = scf.for %j = %c0 to %hi step %c1 iter_args(%a = %acc) -> (i32) : i32 {
      %x = arith.addi %a, %j : i32
      scf.yield %x : i32
    }
    %e = arith.addi %in, %c1 : i32
    scf.yield %e : i32
  } {tt.flatten}
  tt.return %r : i32
}

// Left alone: two inner loops, or an inner loop holding a loop (Triton fuses a nest of
// exactly two loops).
// CHECK-LABEL: tt.func public @two_inner_loops
// CHECK-COUNT-3: scf.for
tt.func public @two_inner_loops(%lb: i32, %ub: i32, %s: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %c0) -> (i32) : i32 {
    %x = scf.for %j = %c0 to %c2 step %c1 iter_args(%a = %acc) -> (i32) : i32 {
      %y = arith.addi %a, %j : i32
      scf.yield %y : i32
    }
    %z = scf.for %k = %c0 to %c2 step %c1 iter_args(%a = %x) -> (i32) : i32 {
      %y = arith.addi %a, %i : i32
      scf.yield %y : i32
    }
    scf.yield %z : i32
  } {tt.flatten}
  tt.return %r : i32
}

// Stores in the prologue, the body and the epilogue, a loaded block carried to the epilogue
// (undefined before the loop: the prologue fills it first), and pointer blocks the prologue
// makes from the outer variable: made again after the prologue from the current one, not
// carried (the epilogue stores through them, so their row offset is computed again too).
// CHECK-LABEL: tt.func public @pointers
// CHECK: ub.poison : tensor<8xi32>
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (i32, i32, i32, tensor<8xi32>) : i64
// CHECK: scf.if
// CHECK: tt.store
// CHECK: scf.yield
// CHECK: tt.splat %{{.+}} : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
// CHECK: tt.store
// CHECK: scf.if
// CHECK: tt.store
// CHECK-NOT: scf.for
// CHECK: tt.return
tt.func public @pointers(%out: !tt.ptr<i32>, %n: i32, %m: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %row = arith.muli %i, %c16 : i32
    %at = tt.addptr %out, %row : !tt.ptr<i32>, i32
    %ats = tt.splat %at : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %ptrs = tt.addptr %ats, %range : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %old = tt.load %ptrs : tensor<8x!tt.ptr<i32>>
    %is = tt.splat %i : i32 -> tensor<8xi32>
    tt.store %ptrs, %is : tensor<8x!tt.ptr<i32>>
    scf.for %j = %c1 to %m step %c1 : i32 {
      %step = arith.muli %j, %c16 : i32
      %steps = tt.splat %step : i32 -> tensor<8xi32>
      %q = tt.addptr %ptrs, %steps : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
      %x = tt.load %q : tensor<8x!tt.ptr<i32>>
      %js = tt.splat %j : i32 -> tensor<8xi32>
      %y = arith.addi %x, %js : tensor<8xi32>
      tt.store %q, %y : tensor<8x!tt.ptr<i32>>
    }
    %sum = arith.addi %old, %is : tensor<8xi32>
    tt.store %ptrs, %sum : tensor<8x!tt.ptr<i32>>
  } {tt.flatten}
  tt.return
}

// Offsets the prologue computes: those only the inner body reads (%rows) are carried from the
// branch that starts an outer iteration; those the epilogue reads (%cols) are computed again
// after it (carried, they would be needed in the epilogue's layout as well as the body's), from
// the division, carried.
// CHECK-LABEL: tt.func public @offsets
// CHECK: scf.for {{.+}} -> (i32, i32, i32, i32, tensor<8xi32>) : i64
// CHECK: scf.if
// CHECK: arith.divsi
// CHECK: arith.addi %{{.+}}, %{{.+}} : tensor<8xi32>
// CHECK: scf.yield
// CHECK: } else {
// CHECK: arith.muli %{{.+}}, %{{.+}} : tensor<8xi32>
// CHECK-NOT: arith.divsi
// CHECK: tt.return
tt.func public @offsets(%out: !tt.ptr<i32>, %n: i32, %m: i32, %w: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %w1 = arith.addi %w, %c1 : i32  // never 0: the tests draw %w from 0 up
  scf.for %i = %c0 to %n step %c1 : i32 {
    %q = arith.divsi %i, %w1 : i32
    %qs = tt.splat %q : i32 -> tensor<8xi32>
    %rows = arith.addi %qs, %range : tensor<8xi32>
    %cols = arith.muli %qs, %range : tensor<8xi32>
    %base = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    scf.for %j = %c0 to %m step %c1 : i32 {
      %js = tt.splat %j : i32 -> tensor<8xi32>
      %at = arith.addi %rows, %js : tensor<8xi32>
      %p = tt.addptr %base, %at : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
      tt.store %p, %js : tensor<8x!tt.ptr<i32>>
    }
    %pc = tt.addptr %base, %cols : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %pc, %qs : tensor<8x!tt.ptr<i32>>
  } {tt.flatten}
  tt.return
}

// Before fusing, only what is the same for the whole nest leaves it (%w2 and the branch's
// condition, before the fused loop); what only the inner loop repeats (%row, from the outer
// variable) stays in the fused body, neither hoisted into the prologue nor carried; a division
// under a branch stays under it.
// CHECK-LABEL: tt.func public @nest_invariants
// CHECK: %[[W2:.+]] = arith.muli %arg2, %arg2 : i32
// CHECK: scf.for {{.+}} -> (i32, i32, i32) : i64
// CHECK: scf.if
// CHECK-NOT: arith.muli
// CHECK: } else {
// CHECK: arith.muli %{{.+}}, %[[W2]] : i32
// CHECK: scf.if
// CHECK-NEXT: arith.divsi %arg1, %arg2 : i32
// CHECK: tt.return
tt.func public @nest_invariants(%out: !tt.ptr<i32>, %n: i32, %w: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    scf.for %j = %c0 to %c4 step %c1 : i32 {
      %w2 = arith.muli %w, %w : i32
      %row = arith.muli %i, %w2 : i32
      %nonzero = arith.cmpi ne, %w, %c0 : i32
      %q = scf.if %nonzero -> (i32) {
        %d = arith.divsi %n, %w : i32
        scf.yield %d : i32
      } else {
        scf.yield %c0 : i32
      }
      %at = arith.addi %row, %j : i32
      %v = arith.addi %at, %q : i32
      %p = tt.addptr %out, %at : !tt.ptr<i32>, i32
      tt.store %p, %v : !tt.ptr<i32>
    }
  } {tt.flatten}
  tt.return
}

// Left alone: the inner loop carries a pointer block (`ptrs += 8`), which fused would reach
// each iteration through the prologue's condition (the CPU back end then gathers through it).
// CHECK-LABEL: tt.func public @inner_loop_carries_a_pointer
// CHECK-COUNT-2: scf.for
// CHECK: tt.flatten
tt.func public @inner_loop_carries_a_pointer(%out: !tt.ptr<i32>, %n: i32, %m: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %eights = tt.splat %c16 : i32 -> tensor<8xi32>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %row = arith.muli %i, %c16 : i32
    %at = tt.addptr %out, %row : !tt.ptr<i32>, i32
    %ats = tt.splat %at : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %ptrs = tt.addptr %ats, %range : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %end = scf.for %j = %c1 to %m step %c1 iter_args(%p = %ptrs) -> (tensor<8x!tt.ptr<i32>>) : i32 {
      %q = tt.addptr %p, %eights : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
      %js = tt.splat %j : i32 -> tensor<8xi32>
      tt.store %q, %js : tensor<8x!tt.ptr<i32>>
      scf.yield %q : tensor<8x!tt.ptr<i32>>
    }
    %is = tt.splat %i : i32 -> tensor<8xi32>
    tt.store %end, %is : tensor<8x!tt.ptr<i32>>
  } {tt.flatten}
  tt.return
}
