module {
  func.func @two(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>) {
    %0:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>) outs(%arg1, %arg2 : tensor<8xf32>, tensor<8xi32>) {
    ^bb0(%in: f32, %out: f32, %out_0: i32):
      %1 = arith.fptosi %in : f32 to i32
      linalg.yield %in, %1 : f32, i32
    } -> (tensor<8xf32>, tensor<8xi32>)
    return %0#0, %0#1 : tensor<8xf32>, tensor<8xi32>
  }
}
