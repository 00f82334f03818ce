// RUN: naiad-opt %s -p accelerate-matmul --no-locations | filecheck %s

// CHECK-DAG: #[[MMA:mma[0-9]*]] = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#blocked = #ttg.blocked<{sizePerThread = [4, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // f16 operands: mma v2 with kWidth 2, converted from the operands' own layouts (the
  // conversions to the FMA operand layouts are bypassed) and the result converted back.
  // CHECK-LABEL: tt.func @f16
  // CHECK-NOT: parent = #blocked
  // CHECK: %[[A:.*]] = ttg.convert_layout %arg0 : {{.*}} -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 2}>>
  // CHECK: %[[B:.*]] = ttg.convert_layout %arg1 : {{.*}} -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #[[MMA]], kWidth = 2}>>
  // CHECK: %[[C:.*]] = ttg.convert_layout %arg2 : {{.*}} -> tensor<64x64xf32, #[[MMA]]>
  // CHECK: %[[D:.*]] = tt.dot %[[A]], %[[B]], %[[C]]{{.*}} -> tensor<64x64xf32, #[[MMA]]>
  // CHECK: %[[BACK:.*]] = ttg.convert_layout %[[D]] : tensor<64x64xf32, #[[MMA]]> -> tensor<64x64xf32, #blocked{{[0-9]*}}>
  // CHECK: tt.return %[[BACK]]
  tt.func @f16(%arg0: tensor<64x32xf16, #blocked1>, %arg1: tensor<32x64xf16, #blocked1>, %arg2: tensor<64x64xf32, #blocked>) -> tensor<64x64xf32, #blocked> {
    %a = ttg.convert_layout %arg0 : tensor<64x32xf16, #blocked1> -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>
    %b = ttg.convert_layout %arg1 : tensor<32x64xf16, #blocked1> -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>>
    %d = tt.dot %a, %b, %arg2 : tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>> * tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>> -> tensor<64x64xf32, #blocked>
    tt.return %d : tensor<64x64xf32, #blocked>
  }

  // f32 with inputPrecision = tf32: kWidth 1 (m16n8k8).
  // CHECK-LABEL: tt.func @tf32
  // CHECK: tt.dot {{.*}} : tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 1}>>
  tt.func @tf32(%arg0: tensor<64x32xf32, #blocked1>, %arg1: tensor<32x64xf32, #blocked1>, %arg2: tensor<64x64xf32, #blocked>) -> tensor<64x64xf32, #blocked> {
    %a = ttg.convert_layout %arg0 : tensor<64x32xf32, #blocked1> -> tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>
    %b = ttg.convert_layout %arg1 : tensor<32x64xf32, #blocked1> -> tensor<32x64xf32, #ttg.dot_op<{opIdx = 1, parent = #blocked}>>
    %d = tt.dot %a, %b, %arg2, inputPrecision = tf32 : tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = #blocked}>> * tensor<32x64xf32, #ttg.dot_op<{opIdx = 1, parent = #blocked}>> -> tensor<64x64xf32, #blocked>
    tt.return %d : tensor<64x64xf32, #blocked>
  }

  // inputPrecision = ieee is the FMA dot: left alone.
  // CHECK-LABEL: tt.func @ieee
  // CHECK-NOT: #[[MMA]]
  // CHECK: tt.return
  tt.func @ieee(%arg0: tensor<64x32xf32, #blocked1>, %arg1: tensor<32x64xf32, #blocked1>, %arg2: tensor<64x64xf32, #blocked>) -> tensor<64x64xf32, #blocked> {
    %a = ttg.convert_layout %arg0 : tensor<64x32xf32, #blocked1> -> tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>
    %b = ttg.convert_layout %arg1 : tensor<32x64xf32, #blocked1> -> tensor<32x64xf32, #ttg.dot_op<{opIdx = 1, parent = #blocked}>>
    %d = tt.dot %a, %b, %arg2, inputPrecision = ieee : tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = #blocked}>> * tensor<32x64xf32, #ttg.dot_op<{opIdx = 1, parent = #blocked}>> -> tensor<64x64xf32, #blocked>
    tt.return %d : tensor<64x64xf32, #blocked>
  }

  // M = 8 is below one 16 x 8 instruction tile: left to the FMA dot.
  // CHECK-LABEL: tt.func @tiny
  // CHECK-NOT: #[[MMA]]
  // CHECK: tt.return
  tt.func @tiny(%arg0: tensor<8x32xf16, #blocked1>, %arg1: tensor<32x64xf16, #blocked1>, %arg2: tensor<8x64xf32, #blocked>) -> tensor<8x64xf32, #blocked> {
    %a = ttg.convert_layout %arg0 : tensor<8x32xf16, #blocked1> -> tensor<8x32xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>>
    %b = ttg.convert_layout %arg1 : tensor<32x64xf16, #blocked1> -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>>
    %d = tt.dot %a, %b, %arg2 : tensor<8x32xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>> * tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked}>> -> tensor<8x64xf32, #blocked>
    tt.return %d : tensor<8x64xf32, #blocked>
  }
}
