// RUN: naiad-opt %s -p cse | filecheck %s

// CHECK-LABEL: tt.func public @merge
// CHECK: %[[A:.+]] = arith.addi %arg0, %arg1 : i32
// CHECK-NOT: arith.addi
// CHECK: arith.muli %[[A]], %[[A]] : i32
tt.func public @merge(%x: i32, %y: i32) -> i32 {
  %a = arith.addi %x, %y : i32
  %b = arith.addi %x, %y : i32
  %c = arith.muli %a, %b : i32
  tt.return %c : i32
}

// Loads are not pure: two loads of one address stay two (a store may come between).
// CHECK-LABEL: tt.func public @loads_stay
// CHECK-COUNT-2: tt.load
tt.func public @loads_stay(%p: !tt.ptr<f32>) -> f32 {
  %a = tt.load %p : !tt.ptr<f32>
  %b = tt.load %p : !tt.ptr<f32>
  %c = arith.addf %a, %b : f32
  tt.return %c : f32
}

// Two reductions of one operand with the same combine region are one.
// CHECK-LABEL: tt.func public @reduce_twice
// CHECK: %[[R:.+]] = "tt.reduce"(%arg0)
// CHECK-NOT: "tt.reduce"
// CHECK: arith.mulf %[[R]], %[[R]] : f32
tt.func public @reduce_twice(%x: tensor<16xf32>) -> f32 {
  %a = "tt.reduce"(%x) <{axis = 0 : i32}> ({
  ^bb0(%l: f32, %r: f32):
    %s = arith.addf %l, %r : f32
    tt.reduce.return %s : f32
  }) : (tensor<16xf32>) -> f32
  %b = "tt.reduce"(%x) <{axis = 0 : i32}> ({
  ^bb0(%l: f32, %r: f32):
    %s = arith.addf %l, %r : f32
    tt.reduce.return %s : f32
  }) : (tensor<16xf32>) -> f32
  %c = arith.mulf %a, %b : f32
  tt.return %c : f32
}

// Negative: the combine regions differ (a sum and a maximum), so both reductions stay.
// CHECK-LABEL: tt.func public @reduce_different_combine_stays
// CHECK-COUNT-2: "tt.reduce"
tt.func public @reduce_different_combine_stays(%x: tensor<16xf32>) -> f32 {
  %a = "tt.reduce"(%x) <{axis = 0 : i32}> ({
  ^bb0(%l: f32, %r: f32):
    %s = arith.addf %l, %r : f32
    tt.reduce.return %s : f32
  }) : (tensor<16xf32>) -> f32
  %b = "tt.reduce"(%x) <{axis = 0 : i32}> ({
  ^bb0(%l: f32, %r: f32):
    %s = arith.maxnumf %l, %r : f32
    tt.reduce.return %s : f32
  }) : (tensor<16xf32>) -> f32
  %c = arith.mulf %a, %b : f32
  tt.return %c : f32
}

// Negative: same combine op, but its operands in the other order (%r - %l against %l - %r):
// the regions are not structurally equal.
// CHECK-LABEL: tt.func public @reduce_swapped_operands_stays
// CHECK-COUNT-2: "tt.reduce"
tt.func public @reduce_swapped_operands_stays(%x: tensor<16xf32>) -> f32 {
  %a = "tt.reduce"(%x) <{axis = 0 : i32}> ({
  ^bb0(%l: f32, %r: f32):
    %s = arith.subf %l, %r : f32
    tt.reduce.return %s : f32
  }) : (tensor<16xf32>) -> f32
  %b = "tt.reduce"(%x) <{axis = 0 : i32}> ({
  ^bb0(%l: f32, %r: f32):
    %s = arith.subf %r, %l : f32
    tt.reduce.return %s : f32
  }) : (tensor<16xf32>) -> f32
  %c = arith.mulf %a, %b : f32
  tt.return %c : f32
}

// Two scf.if computing the same values without effects are one.
// CHECK-LABEL: tt.func public @if_twice
// CHECK: %[[R:.+]] = scf.if
// CHECK-NOT: scf.if
// CHECK: arith.muli %[[R]], %[[R]] : i32
tt.func public @if_twice(%x: i32, %y: i32) -> i32 {
  %c = arith.cmpi slt, %x, %y : i32
  %a = scf.if %c -> (i32) {
    %s = arith.addi %x, %y : i32
    scf.yield %s : i32
  } else {
    %s = arith.subi %x, %y : i32
    scf.yield %s : i32
  }
  %b = scf.if %c -> (i32) {
    %s = arith.addi %x, %y : i32
    scf.yield %s : i32
  } else {
    %s = arith.subi %x, %y : i32
    scf.yield %s : i32
  }
  %m = arith.muli %a, %b : i32
  tt.return %m : i32
}

// Negative: each scf.if stores, and two stores are two effects.
// CHECK-LABEL: tt.func public @if_with_store_stays
// CHECK-COUNT-2: scf.if
tt.func public @if_with_store_stays(%p: !tt.ptr<i32>, %x: i32, %y: i32) -> i32 {
  %c = arith.cmpi slt, %x, %y : i32
  %a = scf.if %c -> (i32) {
    tt.store %p, %x : !tt.ptr<i32>
    scf.yield %x : i32
  } else {
    scf.yield %y : i32
  }
  %b = scf.if %c -> (i32) {
    tt.store %p, %x : !tt.ptr<i32>
    scf.yield %x : i32
  } else {
    scf.yield %y : i32
  }
  %m = arith.muli %a, %b : i32
  tt.return %m : i32
}

// A warp-specialize partition is isolated from above: its constant stays its own (reusing the
// equal one above would read a value the partition does not capture). The default region
// may reuse it.
// CHECK-LABEL: tt.func public @partition_isolated
// CHECK: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK: %[[Q:.+]] = tt.addptr %arg0, %[[ONE]]
// CHECK: default {
// CHECK-NEXT: tt.store %[[Q]], %[[ONE]]
// CHECK: partition0(%[[P:[^:]+]]: !tt.ptr<i32>{{.*}}) num_warps(1) {
// CHECK-NEXT: %[[OWN:.+]] = arith.constant 1 : i32
// CHECK-NEXT: tt.addptr %[[P]], %[[OWN]]
tt.func public @partition_isolated(%p: !tt.ptr<i32>) {
  %one = arith.constant 1 : i32
  %q = tt.addptr %p, %one : !tt.ptr<i32>, i32
  tt.store %q, %one : !tt.ptr<i32>
  ttg.warp_specialize(%p)
  default {
    %one_again = arith.constant 1 : i32
    %r = tt.addptr %p, %one_again : !tt.ptr<i32>, i32
    tt.store %r, %one_again : !tt.ptr<i32>
    ttg.warp_yield
  }
  partition0(%arg: !tt.ptr<i32>) num_warps(1) {
    %own = arith.constant 1 : i32
    %s = tt.addptr %arg, %own : !tt.ptr<i32>, i32
    tt.store %s, %own : !tt.ptr<i32>
    ttg.warp_return
  } : (!tt.ptr<i32>) -> ()
  tt.return
}
