// RUN: naiad-opt %s -p drop-layouts --no-locations | filecheck %s

// The tensors lose their layouts, the laid-out constant too; a convert_layout's uses read its
// operand; the module's ttg attributes go.
// CHECK-NOT: ttg.num-warps
// CHECK-LABEL: tt.func public @moved
// CHECK: %[[THREE:.+]] = arith.constant dense<3.000000e+00> : tensor<64xf32>
// CHECK: %[[OFFS:.+]] = tt.make_range {{.*}} : tensor<64xi32>
// CHECK: %[[VALS:.+]] = tt.load {{.*}} : tensor<64x!tt.ptr<f32>>
// CHECK: %[[PROD:.+]] = arith.mulf %[[VALS]], %[[THREE]] : tensor<64xf32>
// CHECK-NOT: ttg.convert_layout
// CHECK: tt.addptr {{.*}}, %[[OFFS]] : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
// CHECK: tt.store {{.*}}, %[[PROD]] : tensor<64x!tt.ptr<f32>>
#a = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>
module attributes {"ttg.num-warps" = 2 : i32} {
  tt.func public @moved(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %three = arith.constant dense<3.0> : tensor<64xf32, #a>
    %offs = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #a>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #a>
    %ptrs = tt.addptr %xs, %offs : tensor<64x!tt.ptr<f32>, #a>, tensor<64xi32, #a>
    %vals = tt.load %ptrs : tensor<64x!tt.ptr<f32>, #a>
    %prod = arith.mulf %vals, %three : tensor<64xf32, #a>
    %moved = ttg.convert_layout %prod : tensor<64xf32, #a> -> tensor<64xf32, #b>
    %offs_b = ttg.convert_layout %offs : tensor<64xi32, #a> -> tensor<64xi32, #b>
    %os = tt.splat %out : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #b>
    %dst = tt.addptr %os, %offs_b : tensor<64x!tt.ptr<f32>, #b>, tensor<64xi32, #b>
    tt.store %dst, %moved : tensor<64x!tt.ptr<f32>, #b>
    tt.return
  }

  // A partition's arguments and the tensors inside it lose their layouts; the op, its
  // regions and the barrier stay (the CPU sequences them).
  // CHECK-LABEL: tt.func public @partitioned
  // CHECK: ttg.warp_specialize
  // CHECK: tt.make_range {{.*}} : tensor<32xi32>
  // CHECK: partition0
  // CHECK: gpu.barrier
  // CHECK: tt.splat {{.*}} -> tensor<32x!tt.ptr<i32>>
  // CHECK: ttg.warp_return
  tt.func public @partitioned(%p: !tt.ptr<i32>) {
    ttg.warp_specialize(%p)
    default {
      %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #b>
      ttg.warp_yield
    }
    partition0(%q: !tt.ptr<i32>) num_warps(1) {
      gpu.barrier
      %s = tt.splat %q : !tt.ptr<i32> -> tensor<32x!tt.ptr<i32>, #a>
      ttg.warp_return
    } : (!tt.ptr<i32>) -> ()
    tt.return
  }
}
