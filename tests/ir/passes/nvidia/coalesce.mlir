// RUN: naiad-opt %s -p coalesce --no-locations | filecheck %s

// CHECK-DAG: #[[ONE:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[FOUR:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
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
}
