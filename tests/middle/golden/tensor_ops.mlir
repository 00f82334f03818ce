module {
  func.func @tensors(%arg0: tensor<8x16xf32>, %arg1: index, %arg2: index, %arg3: f32, %arg4: tensor<1xi64>) -> tensor<8x16xf32> {
    %c0 = arith.constant 0 : index
    %0 = tensor.empty(%arg1) : tensor<?x4xf32>
    %1 = tensor.empty() : tensor<4xf32>
    %extracted = tensor.extract %arg0[%c0, %arg2] : tensor<8x16xf32>
    %inserted = tensor.insert %arg3 into %arg0[%c0, %arg2] : tensor<8x16xf32>
    %from_elements = tensor.from_elements %arg3, %extracted : tensor<2xf32>
    %splat = tensor.splat %arg3 : tensor<4x4xf32>
    %splat_0 = tensor.splat %arg3[%arg1] : tensor<?x4xf32>
    %dim = tensor.dim %0, %c0 : tensor<?x4xf32>
    %cast = tensor.cast %0 : tensor<?x4xf32> to tensor<3x4xf32>
    %concat = tensor.concat dim(0) %arg0, %inserted : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, %arg2] [4, %arg1] [1, 1] : tensor<8x16xf32> to tensor<4x?xf32>
    %extracted_slice_1 = tensor.extract_slice %concat[0, 0] [1, 16] [2, 1] {naiad.note = "row"} : tensor<16x16xf32> to tensor<16xf32>
    %inserted_slice = tensor.insert_slice %extracted_slice into %arg0[0, %arg2] [4, %arg1] [1, 1] : tensor<4x?xf32> into tensor<8x16xf32>
    %collapsed = tensor.collapse_shape %inserted_slice [[0, 1]] : tensor<8x16xf32> into tensor<128xf32>
    %expanded = tensor.expand_shape %collapsed [[0, 1]] output_shape [8, 16] : tensor<128xf32> into tensor<8x16xf32>
    %expanded_2 = tensor.expand_shape %extracted_slice [[0], [1, 2]] output_shape [4, %arg1, 1] : tensor<4x?xf32> into tensor<4x?x1xf32>
    %reshape = tensor.reshape %collapsed(%arg4) : (tensor<128xf32>, tensor<1xi64>) -> tensor<128xf32>
    return %expanded : tensor<8x16xf32>
  }
}
