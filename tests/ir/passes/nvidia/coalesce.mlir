// RUN: naiad-opt %s -p coalesce --no-locations | filecheck %s

// CHECK-DAG: #[[ONE:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[FOUR:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[EIGHT:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // 16-byte aligned f32 pointers, 1024 consecutive elements: 4 per thread (one 16-byte access),
  // the operands converted to that layout and the loaded value back.
  // CHECK-LABEL: tt.func @aligned
  tt.func @aligned(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    // CHECK: %[[P:.*]] = ttg.convert_layout %{{.*}} : tensor<1024x!tt.ptr<f32>, #[[ONE]]> -> tensor<1024x!tt.ptr<f32>, #[[FOUR]]>
    // CHECK: %[[V:.*]] = tt.load %[[P]] : tensor<1024x!tt.ptr<f32>, #[[FOUR]]>
    // CHECK: %[[BACK:.*]] = ttg.convert_layout %[[V]] : tensor<1024xf32, #[[FOUR]]> -> tensor<1024xf32, #[[ONE]]>
    // CHECK: ttg.convert_layout %[[BACK]] : tensor<1024xf32, #[[ONE]]> -> tensor<1024xf32, #[[FOUR]]>
    // CHECK: tt.store {{.*}} : tensor<1024x!tt.ptr<f32>, #[[FOUR]]>
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %xp = tt.addptr %xs, %r : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %v = tt.load %xp : tensor<1024x!tt.ptr<f32>, #blocked>
    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %yp = tt.addptr %ys, %r : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    tt.store %yp, %v : tensor<1024x!tt.ptr<f32>, #blocked>
    tt.return
  }

  // Nothing is known of the pointer's alignment: one element per thread, the layout it has.
  // CHECK-LABEL: tt.func @unaligned
  // CHECK: tt.load %{{.*}} : tensor<1024x!tt.ptr<f32>, #[[ONE]]>
  // CHECK-NOT: #[[FOUR]]
  // CHECK: tt.return
  tt.func @unaligned(%x: !tt.ptr<f32>) -> tensor<1024xf32, #blocked> {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %xp = tt.addptr %xs, %r : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %v = tt.load %xp : tensor<1024x!tt.ptr<f32>, #blocked>
    tt.return %v : tensor<1024xf32, #blocked>
  }

  // A scalar load has no layout to choose.
  // CHECK-LABEL: tt.func @scalar
  // CHECK-NEXT: tt.load %{{.*}} : !tt.ptr<f32>
  // CHECK-NEXT: tt.return
  tt.func @scalar(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}) -> f32 {
    %v = tt.load %x : !tt.ptr<f32>
    tt.return %v : f32
  }

  // A loop-carried f32 pointer keeps its own 4 elements a thread, though the loop's sum is
  // stored as f16 (8 a thread) through pointers built from the same offsets: only a pointer an
  // op computes takes the widest of its connected accesses (16-byte f32 loads, not two halves
  // of 32-byte sectors). The loop's mask, from the same offsets, connects the two.
  // CHECK-LABEL: tt.func @carried_pointer_keeps_its_width
  // CHECK: scf.for
  // CHECK: tt.load %{{.*}} : tensor<1024x!tt.ptr<f32>, #[[FOUR]]>
  // CHECK: scf.yield
  // CHECK: tt.store {{.*}} : tensor<1024x!tt.ptr<f16>, #[[EIGHT]]>
  tt.func @carried_pointer_keeps_its_width(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    %step = arith.constant dense<1024> : tensor<1024xi32, #blocked>
    %zero = arith.constant dense<0.0> : tensor<1024xf32, #blocked>
    %limit = tt.splat %n : i32 -> tensor<1024xi32, #blocked>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %xp = tt.addptr %xs, %r : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %out:2 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %xp, %acc = %zero) -> (tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xf32, #blocked>) : i32 {
      %m = arith.cmpi slt, %r, %limit : tensor<1024xi32, #blocked>
      %v = tt.load %p, %m : tensor<1024x!tt.ptr<f32>, #blocked>
      %sum = arith.addf %acc, %v : tensor<1024xf32, #blocked>
      %next = tt.addptr %p, %step : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
      scf.yield %next, %sum : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xf32, #blocked>
    }
    %h = arith.truncf %out#1 : tensor<1024xf32, #blocked> to tensor<1024xf16, #blocked>
    %ys = tt.splat %y : !tt.ptr<f16> -> tensor<1024x!tt.ptr<f16>, #blocked>
    %yp = tt.addptr %ys, %r : tensor<1024x!tt.ptr<f16>, #blocked>, tensor<1024xi32, #blocked>
    tt.store %yp, %h : tensor<1024x!tt.ptr<f16>, #blocked>
    tt.return
  }
}
