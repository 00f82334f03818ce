module {
  func.func @tensors(%arg0: tensor<64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64xf32>, %arg3: tensor<2x4x8xf32>, %arg4: tensor<2x8x16xf32>, %arg5: tensor<2x4x16xf32>) -> (tensor<64xf32>, tensor<2x4x16xf32>) {
    %mapped = linalg.map ins(%arg0, %arg1 : tensor<64xf32>, tensor<64xf32>) outs(%arg2 : tensor<64xf32>)
      (%in: f32, %in_0: f32) {
        %1 = arith.addf %in, %in_0 : f32
        %2 = arith.mulf %1, %in : f32
        linalg.yield %2 : f32
      }
    %0 = linalg.batch_matmul ins(%arg3, %arg4 : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%arg5 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
    return %mapped, %0 : tensor<64xf32>, tensor<2x4x16xf32>
  }
  func.func @buffers(%arg0: memref<64xf32>, %arg1: memref<64xf32>, %arg2: memref<2x4x8xf32>, %arg3: memref<2x8x16xf32>, %arg4: memref<2x4x16xf32>) {
    linalg.map ins(%arg0 : memref<64xf32>) outs(%arg1 : memref<64xf32>)
      (%in: f32) {
        %0 = math.exp %in : f32
        %1 = arith.addf %0, %in : f32
        linalg.yield %1 : f32
      }
    linalg.batch_matmul ins(%arg2, %arg3 : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%arg4 : memref<2x4x16xf32>)
    return
  }
  func.func @no_inputs(%arg0: tensor<4xf32>, %arg1: f32) -> tensor<4xf32> {
    %mapped = linalg.map outs(%arg0 : tensor<4xf32>)
      () {
        linalg.yield %arg1 : f32
      }
    return %mapped : tensor<4xf32>
  }
}
