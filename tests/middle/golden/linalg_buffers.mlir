module {
  func.func @buffers(%arg0: memref<4x8xf32>, %arg1: f32, %arg2: memref<4xf32>, %arg3: memref<4x8xf32, strided<[?, 1], offset: ?>>, %arg4: memref<8x8xf32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : memref<4x8xf32>) outs(%arg2 : memref<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.addf %in, %out : f32
      linalg.yield %0 : f32
    }
    linalg.reduce ins(%arg0 : memref<4x8xf32>) outs(%arg2 : memref<4xf32>) dimensions = [1] 
      (%in: f32, %init: f32) {
        %0 = arith.addf %in, %init : f32
        linalg.yield %0 : f32
      }
    linalg.transpose ins(%arg4 : memref<8x8xf32>) outs(%arg4 : memref<8x8xf32>) permutation = [1, 0] 
    linalg.broadcast ins(%arg2 : memref<4xf32>) outs(%arg3 : memref<4x8xf32, strided<[?, 1], offset: ?>>) dimensions = [1] 
    linalg.fill ins(%arg1 : f32) outs(%arg2 : memref<4xf32>)
    linalg.copy ins(%arg0 : memref<4x8xf32>) outs(%arg3 : memref<4x8xf32, strided<[?, 1], offset: ?>>)
    linalg.matmul ins(%arg0, %arg4 : memref<4x8xf32>, memref<8x8xf32>) outs(%arg3 : memref<4x8xf32, strided<[?, 1], offset: ?>>)
    return
  }
}
