// RUN: naiad-opt %s -p loop-unroll | filecheck %s

// A factor of 2: a main loop twice as long a step with two copies of the body, then the
// original loop (the epilogue) from where the main loop stopped.
// CHECK-LABEL: tt.func public @unroll2
// CHECK: %[[BIG:.+]] = arith.muli %arg2, %{{.+}} : i32
// CHECK: %[[UB:.+]] = arith.addi %arg0, %{{.+}} : i32
// CHECK: %[[MAIN:.+]] = scf.for %[[I:.+]] = %arg0 to %[[UB]] step %[[BIG]] iter_args(%[[A:.+]] = %{{.+}})
// CHECK: %[[X0:.+]] = arith.addi %[[A]], %[[I]] : i32
// CHECK: %[[I1:.+]] = arith.addi %[[I]], %{{.+}} : i32
// CHECK: %[[X1:.+]] = arith.addi %[[X0]], %[[I1]] : i32
// CHECK: scf.yield %[[X1]] : i32
// CHECK: scf.for %{{.+}} = %[[UB]] to %arg1 step %arg2 iter_args(%{{.+}} = %[[MAIN]])
// CHECK-NOT: tt.loop_unroll_factor
tt.func public @unroll2(%lb: i32, %ub: i32, %s: i32) -> i32 {
  %zero = arith.constant 0 : i32
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %zero) -> (i32) : i32 {
    %x = arith.addi %acc, %i : i32
    scf.yield %x : i32
  } {tt.loop_unroll_factor = 2 : i32}
  tt.return %r : i32
}

// Without the attribute a loop is left alone.
// CHECK-LABEL: tt.func public @untouched
// CHECK-COUNT-1: scf.for
tt.func public @untouched(%lb: i32, %ub: i32, %s: i32) -> i32 {
  %zero = arith.constant 0 : i32
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %zero) -> (i32) : i32 {
    %x = arith.addi %acc, %i : i32
    scf.yield %x : i32
  }
  tt.return %r : i32
}
