module {
  func.func @k(%arg0: memref<*xf32>, %arg1: index, %arg2: index) {
    %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [%arg1], sizes: [%arg2], strides: [1] : memref<*xf32> to memref<?xf32, strided<[1], offset: ?>>
    %alloc = memref.alloc(%arg2) : memref<?xf32>
    memref.copy %reinterpret_cast, %alloc : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32>
    %0 = bufferization.to_tensor %alloc restrict writable : memref<?xf32> to tensor<?xf32>
    bufferization.materialize_in_destination %0 in restrict writable %reinterpret_cast : (tensor<?xf32>, memref<?xf32, strided<[1], offset: ?>>) -> ()
    return
  }
}
