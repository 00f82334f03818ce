// RUN: naiad-opt %s --load %R/examples/passes/my_passes.py -p double-to-add --no-locations | filecheck %s
// RUN: naiad-opt %s --load %R/examples/passes/my_passes.py -p print-addi 2>&1 >/dev/null | filecheck %s --check-prefix=PRINT

// The pass of docs/passes.md: an integer doubled is added to itself, on scalars and tensors.
// CHECK-LABEL: tt.func @doubled
// CHECK: %[[SUM:.*]] = arith.addi %arg0, %arg0 : i32
// CHECK: %[[SPLAT:.*]] = arith.addi %arg1, %arg1 : tensor<16xi32>
// CHECK-NOT: arith.muli
// CHECK: tt.return %[[SUM]], %[[SPLAT]]
// The analysis prints the one addi of the input, at its line and column.
// PRINT: arith.addi at loc("{{.*}}double-to-add.mlir":30:8)
// PRINT-NOT: arith.addi
tt.func @doubled(%x: i32, %y: tensor<16xi32>) -> (i32, tensor<16xi32>) {
  %c2 = arith.constant 2 : i32
  %t2 = arith.constant dense<2> : tensor<16xi32>
  %a = arith.muli %x, %c2 : i32
  %b = arith.muli %t2, %y : tensor<16xi32>
  tt.return %a, %b : i32, tensor<16xi32>
}

// Left alone: times 3 is not doubling, and a float product is not the pass's business.
// CHECK-LABEL: tt.func @not_doubled
// CHECK: arith.muli %arg0, %{{.*}} : i32
// CHECK: arith.mulf %arg1, %{{.*}} : f32
tt.func @not_doubled(%x: i32, %f: f32) -> (i32, f32, i32) {
  %c3 = arith.constant 3 : i32
  %f2 = arith.constant 2.0 : f32
  %a = arith.muli %x, %c3 : i32
  %b = arith.mulf %f, %f2 : f32
  %s = arith.addi %a, %x : i32
  tt.return %a, %b, %s : i32, f32, i32
}
