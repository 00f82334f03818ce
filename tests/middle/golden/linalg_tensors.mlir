module {
  func.func @tensors(%arg0: tensor<4x8xf32>, %arg1: f32, %arg2: tensor<4xf32>, %arg3: tensor<4x8xf32>, %arg4: tensor<8x8xf32>) -> tensor<4x8xf32> {
    %0 = linalg.generic {doc = "row sums", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"], library_call = "row_sums"} ins(%arg0, %arg1 : tensor<4x8xf32>, f32) outs(%arg2 : tensor<4xf32>) attrs =  {naiad.tag = 3 : i32} {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %4 = linalg.index 1 : index
      %5 = arith.index_cast %4 : index to i32
      %6 = arith.sitofp %5 : i32 to f32
      %7 = arith.mulf %in, %6 : f32
      %8 = arith.addf %out, %7 : f32
      linalg.yield %8 : f32
    } -> tensor<4xf32>
    %reduced = linalg.reduce ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4xf32>) dimensions = [1] 
      (%in: f32, %init: f32) {
        %4 = arith.maximumf %in, %init : f32
        linalg.yield %4 : f32
      }
    %transposed = linalg.transpose ins(%arg4 : tensor<8x8xf32>) outs(%arg4 : tensor<8x8xf32>) permutation = [1, 0] 
    %broadcasted = linalg.broadcast ins(%reduced : tensor<4xf32>) outs(%arg3 : tensor<4x8xf32>) dimensions = [1] 
    %1 = linalg.fill ins(%arg1 : f32) outs(%arg3 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %2 = linalg.copy ins(%broadcasted : tensor<4x8xf32>) outs(%1 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %3 = linalg.matmul {naiad.tile = [4, 4]} ins(%2, %transposed : tensor<4x8xf32>, tensor<8x8xf32>) outs(%arg3 : tensor<4x8xf32>) -> tensor<4x8xf32>
    return %3 : tensor<4x8xf32>
  }
}
