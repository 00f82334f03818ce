// RUN: naiad-opt %s -p allocate-shared-memory --no-locations | filecheck %s

// The module gets the bytes of the highest buffer: a 16 KB scratch and an 8 KB buffer live
// at the same time.
// CHECK: module attributes {{{.*}}ttg.shared = 24576 : i32
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // %a is live across the conversion's scratch (placed first: the largest), so it goes above
  // it; %b starts after both ended and reuses offset 0.
  // CHECK-LABEL: tt.func @straight
  // CHECK: ttg.local_alloc %arg0 {allocation.offset = 16384 : i32}
  // CHECK: ttg.convert_layout %arg1 {allocation.offset = 0 : i32, allocation.size = 16384 : i32}
  // CHECK: %[[L:.*]] = ttg.local_load
  // CHECK: ttg.local_alloc %[[L]] {allocation.offset = 0 : i32}
  // CHECK-NOT: allocation.offset
  // CHECK: tt.return
  tt.func @straight(%x: tensor<64x64xf16, #blocked>, %y: tensor<64x64xf32, #blocked>) -> tensor<64x64xf16, #blocked> {
    %a = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    %c = ttg.convert_layout %y : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    %l = ttg.local_load %a : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #blocked>
    %b = ttg.local_alloc %l : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    %m = ttg.local_load %b : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #blocked>
    tt.return %m : tensor<64x64xf16, #blocked>
  }

  // A buffer read in a loop stays live for the whole loop: the conversion after the read, in
  // the same iteration, still must not overwrite it (the next iteration reads it again).
  // CHECK-LABEL: tt.func @loop
  // CHECK: ttg.local_alloc %arg0 {allocation.offset = 16384 : i32}
  // CHECK: scf.for
  // CHECK: ttg.convert_layout %arg1 {allocation.offset = 0 : i32, allocation.size = 16384 : i32}
  tt.func @loop(%x: tensor<64x64xf16, #blocked>, %y: tensor<64x64xf32, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    scf.for %i = %c0 to %n step %c1  : i32 {
      %l = ttg.local_load %a : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #blocked>
      %c = ttg.convert_layout %y : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    }
    tt.return
  }

  // Scratch users live for their own op only: two reductions across warps and a conversion
  // share offset 0. A conversion that only renumbers registers needs no scratch.
  // CHECK-LABEL: tt.func @scratch_only
  // CHECK: "tt.reduce"(%arg0)
  // CHECK: }) {allocation.offset = 0 : i32, allocation.size = 1024 : i32}
  // CHECK: "tt.reduce"(%arg1)
  // CHECK: }) {allocation.offset = 0 : i32, allocation.size = 1024 : i32}
  // CHECK: ttg.convert_layout %arg1 {allocation.offset = 0 : i32, allocation.size = 16384 : i32}
  // CHECK-NOT: allocation.offset
  // CHECK: tt.return
  tt.func @scratch_only(%x: tensor<64x64xf32, #blocked>, %y: tensor<64x64xf32, #blocked>) -> tensor<64x64xf32, #blocked> {
    %r0 = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%p: f32, %q: f32):
      %s = arith.addf %p, %q : f32
      tt.reduce.return %s : f32
    }) : (tensor<64x64xf32, #blocked>) -> tensor<64xf32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %r1 = "tt.reduce"(%y) <{axis = 0 : i32}> ({
    ^bb0(%p: f32, %q: f32):
      %s = arith.maxnumf %p, %q : f32
      tt.reduce.return %s : f32
    }) : (tensor<64x64xf32, #blocked>) -> tensor<64xf32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %c = ttg.convert_layout %y : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    %same = ttg.convert_layout %x : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked>
    tt.return %same : tensor<64x64xf32, #blocked>
  }

  // The default region and a partition of a `ttg.warp_specialize` run at once: their
  // reductions' scratch never shares bytes (one after the other, they would share offset 0).
  // CHECK-LABEL: tt.func @partitions_apart
  // CHECK: "tt.reduce"(%arg0)
  // CHECK: }) {allocation.offset = [[DEFAULT:[0-9]+]] : i32, allocation.size = 1024 : i32}
  // CHECK: partition0
  // CHECK: "tt.reduce"
  // CHECK-NOT: allocation.offset = [[DEFAULT]] :
  // CHECK: }) {allocation.offset = {{[0-9]+}} : i32, allocation.size = 1024 : i32}
  tt.func @partitions_apart(%x: tensor<64x64xf32, #blocked>) {
    ttg.warp_specialize(%x)
    default {
      %r0 = "tt.reduce"(%x) <{axis = 0 : i32}> ({
      ^bb0(%p: f32, %q: f32):
        %s = arith.addf %p, %q : f32
        tt.reduce.return %s : f32
      }) : (tensor<64x64xf32, #blocked>) -> tensor<64xf32, #ttg.slice<{dim = 0, parent = #blocked}>>
      ttg.warp_yield
    }
    partition0(%y: tensor<64x64xf32, #blocked>) num_warps(4) {
      %r1 = "tt.reduce"(%y) <{axis = 0 : i32}> ({
      ^bb0(%p: f32, %q: f32):
        %s = arith.maxnumf %p, %q : f32
        tt.reduce.return %s : f32
      }) : (tensor<64x64xf32, #blocked>) -> tensor<64xf32, #ttg.slice<{dim = 0, parent = #blocked}>>
      ttg.warp_return
    } : (tensor<64x64xf32, #blocked>) -> ()
    tt.return
  }
}
