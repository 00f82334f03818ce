// RUN: naiad-opt %s -p cpu-widen-dot-operands | filecheck %s

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// P rounded to bf16 is widened right after the rounding; Q and V, function arguments, at the
// function's start, Q once although two dots read it; both dots read f32.
// CHECK-LABEL: func.func @rounded_and_shared
// CHECK: %[[VE:.+]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: %[[V:.+]] = linalg.generic
// CHECK-SAME: ins(%arg2 : tensor<8x8xbf16>) outs(%[[VE]] : tensor<8x8xf32>)
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: bf16{{[^,]*}}, %{{[a-z0-9_]+}}: f32
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: linalg.yield %[[W]] : f32
// CHECK: %[[Q:.+]] = linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<8x8xbf16>)
// CHECK: arith.extf
// CHECK: %[[P16:.+]] = linalg.generic
// CHECK: arith.truncf
// CHECK: %[[PE:.+]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: %[[P:.+]] = linalg.generic
// CHECK-SAME: ins(%[[P16]] : tensor<8x8xbf16>) outs(%[[PE]] : tensor<8x8xf32>)
// CHECK: arith.extf
// CHECK: linalg.matmul ins(%[[Q]], %[[V]] : tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%[[P]], %[[Q]] : tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK-NOT: arith.extf
func.func @rounded_and_shared(%q: tensor<8x8xbf16>, %p: tensor<8x8xf32>, %v: tensor<8x8xbf16>, %acc: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x8xbf16>
  %p16 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<8x8xf32>) outs(%e : tensor<8x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %r = arith.truncf %a : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<8x8xbf16>
  %d0 = linalg.matmul ins(%q, %v : tensor<8x8xbf16>, tensor<8x8xbf16>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %d1 = linalg.matmul ins(%p16, %q : tensor<8x8xbf16>, tensor<8x8xbf16>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %d0, %d1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// Left alone: f32 operands are read in place already, and int8 ones accumulate in i32 (an
// exact integer dot, not an f32 one).
// CHECK-LABEL: func.func @not_narrow_floats
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK: linalg.matmul ins(%arg2, %arg3 : tensor<8x8xi8>, tensor<8x8xi8>)
func.func @not_narrow_floats(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %x: tensor<8x8xi8>, %y: tensor<8x8xi8>, %acc: tensor<8x8xf32>, %iacc: tensor<8x8xi32>) -> (tensor<8x8xf32>, tensor<8x8xi32>) {
  %d0 = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %d1 = linalg.matmul ins(%x, %y : tensor<8x8xi8>, tensor<8x8xi8>) outs(%iacc : tensor<8x8xi32>) -> tensor<8x8xi32>
  return %d0, %d1 : tensor<8x8xf32>, tensor<8x8xi32>
}
