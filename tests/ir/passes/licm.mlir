// RUN: naiad-opt %s -p licm | filecheck %s

// A pure op and a load whose operands come from outside the loop move in front of it; the
// hoisted load is masked off when the loop runs zero times (%lb < %ub is false).
// CHECK-LABEL: tt.func public @hoist
tt.func public @hoist(%p: !tt.ptr<f32>, %n: i32) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %zero = arith.constant dense<0.000000e+00> : tensor<128xf32>
  // CHECK: %[[PS:.+]] = tt.splat %arg0
  // CHECK: %[[PP:.+]] = tt.addptr %[[PS]]
  // CHECK: %[[RUNS:.+]] = arith.cmpi slt, %{{.+}}, %arg1 : i32
  // CHECK: %[[MASK:.+]] = tt.splat %[[RUNS]] : i1 -> tensor<128xi1>
  // CHECK: %[[X:.+]] = tt.load %[[PP]], %[[MASK]]
  // CHECK: scf.for
  // CHECK-NOT: tt.load
  // CHECK: arith.addf %{{.+}}, %[[X]]
  %res = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128xf32>) : i32 {
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %pp = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
    %y = arith.addf %acc, %x : tensor<128xf32>
    scf.yield %y : tensor<128xf32>
  }
  tt.return %res : tensor<128xf32>
}

// The loop stores, so the load must stay (it may read what an earlier iteration wrote); the
// invariant address computation still moves.
// CHECK-LABEL: tt.func public @keep_load_when_loop_stores
tt.func public @keep_load_when_loop_stores(%p: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // CHECK: tt.splat %arg0
  // CHECK: scf.for
  // CHECK: tt.load
  // CHECK: tt.store
  scf.for %i = %c0 to %n step %c1 : i32 {
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %x = tt.load %ps : tensor<128x!tt.ptr<f32>>
    tt.store %ps, %x : tensor<128x!tt.ptr<f32>>
  }
  tt.return
}

// A value computed from the induction variable is not invariant and stays.
// CHECK-LABEL: tt.func public @variant_stays
tt.func public @variant_stays(%p: !tt.ptr<i32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // CHECK: scf.for %[[I:.+]] = 
  // CHECK-NEXT: arith.muli %[[I]], %[[I]]
  scf.for %i = %c0 to %n step %c1 : i32 {
    %sq = arith.muli %i, %i : i32
    tt.store %p, %sq : !tt.ptr<i32>
  }
  tt.return
}
