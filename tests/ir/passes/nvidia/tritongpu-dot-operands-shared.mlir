// RUN: naiad-opt %s -p tritongpu-dot-operands-shared --no-locations | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // Both operands go through buffers, and the dot (K = 32) becomes two dots of one mma.sync
  // instruction's depth (16 for f16), each reading its slice of the buffers.
  // CHECK-LABEL: tt.func @dot
  // CHECK-NOT: ttg.convert_layout
  // CHECK: %[[A:[0-9]+]] = ttg.local_alloc %arg0 : (tensor<64x32xf16, #blocked>) -> !ttg.memdesc<64x32xf16, #[[SA:shared[0-9]*]], #smem>
  // CHECK: %[[B:[0-9]+]] = ttg.local_alloc %arg1 : (tensor<32x64xf16, #blocked>) -> !ttg.memdesc<32x64xf16, #[[SB:shared[0-9]*]], #smem>
  // CHECK: %[[A0:[0-9]+]] = ttg.memdesc_subslice %[[A]][0, 0] : !ttg.memdesc<64x32xf16, #[[SA]], #smem> -> !ttg.memdesc<64x16xf16, #[[SA]], #smem, 64x32>
  // CHECK: %[[L0:[0-9]+]] = ttg.local_load %[[A0]]
  // CHECK: %[[B0:[0-9]+]] = ttg.memdesc_subslice %[[B]][0, 0]
  // CHECK: %[[R0:[0-9]+]] = ttg.local_load %[[B0]]
  // CHECK: %[[D0:[0-9]+]] = tt.dot %[[L0]], %[[R0]], %arg2
  // CHECK: ttg.memdesc_subslice %[[A]][0, 16]
  // CHECK: ttg.memdesc_subslice %[[B]][16, 0]
  // CHECK: %[[D1:[0-9]+]] = tt.dot %{{.*}}, %{{.*}}, %[[D0]]
  // CHECK: tt.return %[[D1]]
  tt.func @dot(%a: tensor<64x32xf16, #blocked>, %b: tensor<32x64xf16, #blocked>, %c: tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma> {
    %x = ttg.convert_layout %a : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    %y = ttg.convert_layout %b : tensor<32x64xf16, #blocked> -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>
    %d = tt.dot %x, %y, %c : tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>> * tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>> -> tensor<64x64xf32, #mma>
    tt.return %d : tensor<64x64xf32, #mma>
  }

  // A transposed operand (attention's K^T) is stored as it was loaded and read through a
  // transposed view of its buffer.
  // CHECK-LABEL: tt.func @transposed
  // CHECK-NOT: tt.trans
  // CHECK: %[[K:[0-9]+]] = ttg.local_alloc %arg1 : (tensor<16x64xf16, #blocked>) -> !ttg.memdesc<16x64xf16
  // CHECK: %[[KT:[0-9]+]] = ttg.memdesc_trans %[[K]] {order = array<i32: 1, 0>} : !ttg.memdesc<16x64xf16, {{.*}}> -> !ttg.memdesc<64x16xf16
  // CHECK: ttg.local_load %[[KT]]
  tt.func @transposed(%q: tensor<64x64xf16, #blocked>, %k: tensor<16x64xf16, #blocked>, %c: tensor<64x16xf32, #mma>) -> tensor<64x16xf32, #mma> {
    %kt = tt.trans %k {order = array<i32: 1, 0>} : tensor<16x64xf16, #blocked> -> tensor<64x16xf16, #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>>
    %x = ttg.convert_layout %q : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    %y = ttg.convert_layout %kt : tensor<64x16xf16, #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>> -> tensor<64x16xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>
    %d = tt.dot %x, %y, %c : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>> * tensor<64x16xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>> -> tensor<64x16xf32, #mma>
    tt.return %d : tensor<64x16xf32, #mma>
  }
}
