module {
  func.func @tensors(%arg0: index, %arg1: tensor<4x?xf32>) -> (tensor<?x3xindex>, tensor<2xf32>, tensor<4x?xi32>) {
    %generated = tensor.generate %arg0 {
    ^bb0(%arg2: index, %arg3: index):
      %1 = arith.addi %arg2, %arg3 : index
      tensor.yield %1 : index
    } : tensor<?x3xindex>
    %cst = arith.constant 1.500000e+00 : f32
    %generated_0 = tensor.generate  {
    ^bb0(%arg2: index):
      tensor.yield %cst : f32
    } : tensor<2xf32>
    %0 = tensor.bitcast %arg1 : tensor<4x?xf32> to tensor<4x?xi32>
    return %generated, %generated_0, %0 : tensor<?x3xindex>, tensor<2xf32>, tensor<4x?xi32>
  }
}
