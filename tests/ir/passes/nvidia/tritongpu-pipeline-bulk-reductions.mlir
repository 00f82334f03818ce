// RUN: naiad-opt %s -p "tritongpu-pipeline-bulk-reductions" --no-locations | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // A block atomic in a loop gets a buffer allocated before the loop: each step waits for the
  // previous reduction's read, stores its block and issues its reduction; one wait after.
  // The one after the loop stays a reduction lowered where it stands.
  // CHECK-LABEL: tt.func @in_a_loop
  // CHECK: %[[BUFFER:[0-9a-z_]+]] = ttg.local_alloc : () -> !ttg.memdesc<64x64xf32, #{{[a-z_0-9]+}}, #smem, mutable>
  // CHECK: scf.for
  // CHECK: ttng.async_tma_store_wait {pendings = 0 : i32}
  // CHECK-NEXT: ttg.local_store %{{.*}}, %[[BUFFER]]
  // CHECK-NEXT: ttng.async_tma_reduce add, %{{.*}}[%{{.*}}, %{{.*}}] %[[BUFFER]]
  // CHECK: ttng.async_tma_store_wait {pendings = 0 : i32}
  // CHECK-NEXT: tt.descriptor_reduce add
  tt.func @in_a_loop(%d: !tt.tensordesc<64x64xf32>, %x: tensor<64x64xf32, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    scf.for %i = %c0 to %n step %c64 : i32 {
      tt.descriptor_reduce add, %d[%i, %c0], %x : !tt.tensordesc<64x64xf32>, tensor<64x64xf32, #blocked>
    }
    tt.descriptor_reduce add, %d[%c0, %c0], %x : !tt.tensordesc<64x64xf32>, tensor<64x64xf32, #blocked>
    tt.return
  }
}
