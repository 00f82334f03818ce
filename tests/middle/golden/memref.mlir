module {
  func.func @k(%arg0: memref<*xf32>, %arg1: i32, %arg2: f32) {
    %0 = arith.index_cast %arg1 : i32 to index
    %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [%0], sizes: [4, %0], strides: [%0, 1] : memref<*xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
    %1 = memref.atomic_rmw maxnumf %arg2, %reinterpret_cast[%0, %0] : (f32, memref<4x?xf32, strided<[?, 1], offset: ?>>) -> f32
    %2 = memref.generic_atomic_rmw %reinterpret_cast[%0, %0] : memref<4x?xf32, strided<[?, 1], offset: ?>> {
    ^bb0(%arg3: f32):
      %3 = arith.maximumf %arg3, %arg2 : f32
      memref.atomic_yield %3 : f32
    }
    %cast = memref.cast %reinterpret_cast : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<*xf32>
    %cast_0 = memref.cast %cast : memref<*xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
    %alloca = memref.alloca(%0) : memref<4x?xf32>
    memref.copy %cast_0, %alloca : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32>
    return
  }
}
