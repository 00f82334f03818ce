// RUN: naiad-opt %s -p tritongpu-optimize-accumulator-init --no-locations | filecheck %s

#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // A fused persistent loop's fresh accumulator on a tile's first K step: the dot takes the
  // carried value, and the negated condition as its useC; the select goes.
  // CHECK-LABEL: tt.func @zero_when_first
  // CHECK: %[[TRUE:.+]] = arith.constant true
  // CHECK: %[[USE:.+]] = arith.xori %arg3, %[[TRUE]] : i1
  // CHECK: ttng.warp_group_dot %arg0, %arg1, %arg2, %[[USE]]
  // CHECK-NOT: arith.select
  tt.func @zero_when_first(%a: !ttg.memdesc<64x64xf16, #shared, #smem>, %b: !ttg.memdesc<64x64xf16, #shared, #smem>, %acc: tensor<64x64xf32, #mma>, %first: i1) -> tensor<64x64xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %c = arith.select %first, %zero, %acc : tensor<64x64xf32, #mma>
    %d = ttng.warp_group_dot %a, %b, %c : !ttg.memdesc<64x64xf16, #shared, #smem> * !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf32, #mma>
    tt.return %d : tensor<64x64xf32, #mma>
  }

  // The zero on the false side: the condition itself is useC.
  // CHECK-LABEL: tt.func @zero_unless_going_on
  // CHECK-NOT: arith.xori
  // CHECK: ttng.warp_group_dot %arg0, %arg1, %arg2, %arg3
  tt.func @zero_unless_going_on(%a: !ttg.memdesc<64x64xf16, #shared, #smem>, %b: !ttg.memdesc<64x64xf16, #shared, #smem>, %acc: tensor<64x64xf32, #mma>, %going_on: i1) -> tensor<64x64xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %c = arith.select %going_on, %acc, %zero : tensor<64x64xf32, #mma>
    %d = ttng.warp_group_dot %a, %b, %c : !ttg.memdesc<64x64xf16, #shared, #smem> * !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf32, #mma>
    tt.return %d : tensor<64x64xf32, #mma>
  }

  // Left alone: a choice per element, and a choice between two values (neither is zero).
  // CHECK-LABEL: tt.func @left_alone
  // CHECK: arith.select %arg3
  // CHECK: ttng.warp_group_dot %arg0, %arg1, %{{[0-9]+}} :
  // CHECK: arith.select %arg4
  // CHECK: ttng.warp_group_dot %arg0, %arg1, %{{[0-9]+}} :
  tt.func @left_alone(%a: !ttg.memdesc<64x64xf16, #shared, #smem>, %b: !ttg.memdesc<64x64xf16, #shared, #smem>, %acc: tensor<64x64xf32, #mma>, %each: tensor<64x64xi1, #mma>, %first: i1) -> tensor<64x64xf32, #mma> {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %ones = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #mma>
    %c = arith.select %each, %zero, %acc : tensor<64x64xi1, #mma>, tensor<64x64xf32, #mma>
    %d = ttng.warp_group_dot %a, %b, %c : !ttg.memdesc<64x64xf16, #shared, #smem> * !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf32, #mma>
    %e = arith.select %first, %ones, %d : tensor<64x64xf32, #mma>
    %f = ttng.warp_group_dot %a, %b, %e : !ttg.memdesc<64x64xf16, #shared, #smem> * !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf32, #mma>
    tt.return %f : tensor<64x64xf32, #mma>
  }
}
