// RUN: naiad-opt %s -p "tritongpu-pipeline{num-stages=3},canonicalize" --no-locations | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // A K loop of mma.sync dots whose operand tile is loaded, stored into a buffer and read by the
  // dot: with three stages, a ring of two buffers (the loop refills the slot it has just read);
  // the prologue copies iterations 0 and 1 (each masked off past the trip count) and commits a
  // group each; each iteration waits until one group is left in flight, reads slot i % 2, and
  // after its dot and a barrier copies iteration i + 2 into that slot; the pointers of the
  // copies run two iterations ahead; the loop ends draining.
  // CHECK-LABEL: tt.func @k_loop
  // CHECK: %[[RING:[0-9]+]] = ttg.local_alloc : () -> !ttg.memdesc<2x64x32xf16, #shared, #smem, mutable>
  // CHECK: ttg.memdesc_index %[[RING]][%{{.*}}]
  // CHECK: ttg.async_copy_global_to_local %{{.*}}, %{{.*}} mask %{{.*}}
  // CHECK: ttg.async_commit_group
  // CHECK: ttg.async_copy_global_to_local
  // CHECK: ttg.async_commit_group
  // CHECK: scf.for {{.*}} iter_args(%{{[a-z0-9_]+}} = %{{[a-z0-9_]+}}, %[[AHEAD:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, %[[WRITE:[a-z0-9_]+]] = %c0_i32{{[_0-9]*}}, %[[READ:[a-z0-9_]+]] = %c0_i32{{[_0-9]*}})
  // CHECK-NEXT: ttg.async_wait {num = 1 : i32}
  // CHECK-NOT: tt.load
  // CHECK: %[[TILE:[0-9]+]] = ttg.memdesc_index %[[RING]][%[[READ]]]
  // CHECK: ttg.local_load %[[TILE]]
  // CHECK: tt.dot
  // CHECK: ttg.barrier all
  // CHECK: %[[SLOT:[0-9]+]] = ttg.memdesc_index %[[RING]][%[[WRITE]]]
  // CHECK: ttg.async_copy_global_to_local %[[AHEAD]], %[[SLOT]] mask
  // CHECK: ttg.async_commit_group
  // CHECK: scf.yield
  // CHECK: ttg.async_wait {num = 0 : i32}
  // CHECK: ttg.local_dealloc %[[RING]]
  tt.func @k_loop(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %step = arith.constant dense<32> : tensor<64x32xi32, #blocked>
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %r2 = tt.expand_dims %r {axis = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x32xi32, #blocked>
    %rb = tt.broadcast %r2 : tensor<1x32xi32, #blocked> -> tensor<64x32xi32, #blocked>
    %s = tt.splat %a : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #blocked>
    %p0 = tt.addptr %s, %rb : tensor<64x32x!tt.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
    %out:2 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %p0, %acc = %zero) -> (tensor<64x32x!tt.ptr<f16>, #blocked>, tensor<64x64xf32, #mma>) : i32 {
      %x = tt.load %p : tensor<64x32x!tt.ptr<f16>, #blocked>
      %buf = ttg.local_alloc %x : (tensor<64x32xf16, #blocked>) -> !ttg.memdesc<64x32xf16, #shared, #smem>
      %ax = ttg.local_load %buf : !ttg.memdesc<64x32xf16, #shared, #smem> -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
      %d = tt.dot %ax, %b, %acc : tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>> * tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>> -> tensor<64x64xf32, #mma>
      %q = tt.addptr %p, %step : tensor<64x32x!tt.ptr<f16>, #blocked>, tensor<64x32xi32, #blocked>
      scf.yield %q, %d : tensor<64x32x!tt.ptr<f16>, #blocked>, tensor<64x64xf32, #mma>
    }
    tt.return %out#1 : tensor<64x64xf32, #mma>
  }
}
