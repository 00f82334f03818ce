// RUN: naiad-opt %s -p canonicalize | filecheck %s

// Constants fold through arithmetic; x + 0 is x.
// CHECK-LABEL: tt.func public @fold
// CHECK: %[[C:.+]] = arith.constant 10 : i32
// CHECK-NOT: arith.addi
// CHECK: tt.return %[[C]], %arg0 : i32, i32
tt.func public @fold(%x: i32) -> (i32, i32) {
  %c3 = arith.constant 3 : i32
  %c7 = arith.constant 7 : i32
  %c0 = arith.constant 0 : i32
  %s = arith.addi %c3, %c7 : i32
  %y = arith.addi %x, %c0 : i32
  tt.return %s, %y : i32, i32
}

// Integer division by zero is not folded: its meaning is the target's (see docs/architecture.md).
// CHECK-LABEL: tt.func public @no_fold_div_by_zero
// CHECK: arith.divsi
tt.func public @no_fold_div_by_zero(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c5 = arith.constant 5 : i32
  %q = arith.divsi %c5, %c0 : i32
  tt.return %q : i32
}

// A block no branch reaches is erased.
// CHECK-LABEL: tt.func public @unreachable
// CHECK-NOT: ^bb1
tt.func public @unreachable(%x: i32) -> i32 {
  tt.return %x : i32
^bb1:
  %p = ub.poison : i32
  tt.return %p : i32
}
