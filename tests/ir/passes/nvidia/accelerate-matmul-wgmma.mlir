// RUN: naiad-opt %s -p accelerate-matmul --no-locations | filecheck %s

// CHECK-DAG: #[[MMA:mma[0-9]*]] = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
// CHECK-DAG: #[[KMAJOR:shared[0-9]*]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
// CHECK-DAG: #[[NARROW:shared[0-9]*]] = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>
#blocked = #ttg.blocked<{sizePerThread = [4, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // sm_90, f16 operands, M a multiple of 64: both operands stored along their contiguous
  // dimension with the widest swizzle a row fills, read by ttng.warp_group_dot.
  // CHECK-LABEL: tt.func @f16
  // CHECK: %[[A:.*]] = ttg.local_alloc %arg0 : (tensor<128x64xf16, #blocked{{[0-9]*}}>) -> !ttg.memdesc<128x64xf16, #[[KMAJOR]], #smem>
  // CHECK: %[[B:.*]] = ttg.local_alloc %arg1 : (tensor<64x128xf16, #blocked{{[0-9]*}}>) -> !ttg.memdesc<64x128xf16, #[[KMAJOR]], #smem>
  // CHECK: %[[C:.*]] = ttg.convert_layout %arg2 : {{.*}} -> tensor<128x128xf32, #[[MMA]]>
  // CHECK: %[[D:.*]] = ttng.warp_group_dot %[[A]], %[[B]], %[[C]]{{.*}} -> tensor<128x128xf32, #[[MMA]]>
  // CHECK: %[[BACK:.*]] = ttg.convert_layout %[[D]] : tensor<128x128xf32, #[[MMA]]> -> tensor<128x128xf32, #blocked{{[0-9]*}}>
  // CHECK: tt.return %[[BACK]]
  tt.func @f16(%arg0: tensor<128x64xf16, #blocked1>, %arg1: tensor<64x128xf16, #blocked1>, %arg2: tensor<128x128xf32, #blocked>) -> tensor<128x128xf32, #blocked> {
    %a = ttg.convert_layout %arg0 : tensor<128x64xf16, #blocked1> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>
    %b = ttg.convert_layout %arg1 : tensor<64x128xf16, #blocked1> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>>
    %d = tt.dot %a, %b, %arg2 : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>> -> tensor<128x128xf32, #blocked>
    tt.return %d : tensor<128x128xf32, #blocked>
  }

  // B = trans(x): x is stored as it is (32 contiguous elements: a 64-byte swizzle) and read
  // through a transposed view, whose K is then the contiguous dimension.
  // CHECK-LABEL: tt.func @transposed_b
  // CHECK: %[[X:.*]] = ttg.local_alloc %arg1 : (tensor<128x32xf16, #blocked{{[0-9]*}}>) -> !ttg.memdesc<128x32xf16, #[[NARROW]], #smem>
  // CHECK: %[[XT:.*]] = ttg.memdesc_trans %[[X]] {order = array<i32: 1, 0>} : {{.*}} -> !ttg.memdesc<32x128xf16, #{{shared[0-9]*}}, #smem>
  // CHECK: ttng.warp_group_dot %{{.*}}, %[[XT]]
  tt.func @transposed_b(%arg0: tensor<128x32xf16, #blocked1>, %arg1: tensor<128x32xf16, #blocked1>, %arg2: tensor<128x128xf32, #blocked>) -> tensor<128x128xf32, #blocked> {
    %a = ttg.convert_layout %arg0 : tensor<128x32xf16, #blocked1> -> tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>
    %t = tt.trans %arg1 {order = array<i32: 1, 0>} : tensor<128x32xf16, #blocked1> -> tensor<32x128xf16, #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>>
    %b = ttg.convert_layout %t : tensor<32x128xf16, #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>> -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>>
    %d = tt.dot %a, %b, %arg2 : tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>> * tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>> -> tensor<128x128xf32, #blocked>
    tt.return %d : tensor<128x128xf32, #blocked>
  }

  // M = 32 is below a warpgroup's 64 rows: mma.sync.
  // CHECK-LABEL: tt.func @short
  // CHECK-NOT: ttng.warp_group_dot
  // CHECK: tt.dot
  tt.func @short(%arg0: tensor<32x64xf16, #blocked1>, %arg1: tensor<64x128xf16, #blocked1>, %arg2: tensor<32x128xf32, #blocked>) -> tensor<32x128xf32, #blocked> {
    %a = ttg.convert_layout %arg0 : tensor<32x64xf16, #blocked1> -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>
    %b = ttg.convert_layout %arg1 : tensor<64x128xf16, #blocked1> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>>
    %d = tt.dot %a, %b, %arg2 : tensor<32x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>> -> tensor<32x128xf32, #blocked>
    tt.return %d : tensor<32x128xf32, #blocked>
  }
}
