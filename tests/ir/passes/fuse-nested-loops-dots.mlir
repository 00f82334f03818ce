// RUN: naiad-opt %s -p "fuse-nested-loops{except-dots=tensor-maps shared-bytes=232448}" | filecheck %s
// RUN: naiad-opt %s -p "fuse-nested-loops{except-dots=all}" | filecheck %s --check-prefix=ALL
// RUN: naiad-opt %s -p "fuse-nested-loops" | filecheck %s --check-prefix=NONE

// A persistent matmul's nest through pointers, 128x256x64 fp16: two K steps of operands (96 KB)
// and the stored tile (64 KB) fit in 227 KB: fused where only tensor-map nests are kept.
// CHECK-LABEL: tt.func public @small_tiles
// CHECK-NOT: tt.flatten
// CHECK: tt.return
// ALL-LABEL: tt.func public @small_tiles
// ALL: tt.flatten
// NONE-LABEL: tt.func public @small_tiles
// NONE-NOT: tt.flatten
tt.func public @small_tiles(%a: tensor<128x64x!tt.ptr<f16>>, %b: tensor<64x256x!tt.ptr<f16>>, %c: tensor<128x256x!tt.ptr<f16>>, %tiles: i32, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %t = %c0 to %tiles step %c1 : i32 {
    %zero = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%sum = %zero) -> (tensor<128x256xf32>) : i32 {
      %x = tt.load %a : tensor<128x64x!tt.ptr<f16>>
      %y = tt.load %b : tensor<64x256x!tt.ptr<f16>>
      %d = tt.dot %x, %y, %sum : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
      scf.yield %d : tensor<128x256xf32>
    }
    %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
    tt.store %c, %h : tensor<128x256x!tt.ptr<f16>>
  } {tt.flatten}
  tt.return
}

// 128x256x128: two K steps (192 KB) and the tile (64 KB) do not fit: kept.
// CHECK-LABEL: tt.func public @large_tiles
// CHECK: tt.flatten
// NONE-LABEL: tt.func public @large_tiles
// NONE-NOT: tt.flatten
tt.func public @large_tiles(%a: tensor<128x128x!tt.ptr<f16>>, %b: tensor<128x256x!tt.ptr<f16>>, %c: tensor<128x256x!tt.ptr<f16>>, %tiles: i32, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %t = %c0 to %tiles step %c1 : i32 {
    %zero = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%sum = %zero) -> (tensor<128x256xf32>) : i32 {
      %x = tt.load %a : tensor<128x128x!tt.ptr<f16>>
      %y = tt.load %b : tensor<128x256x!tt.ptr<f16>>
      %d = tt.dot %x, %y, %sum : tensor<128x128xf16> * tensor<128x256xf16> -> tensor<128x256xf32>
      scf.yield %d : tensor<128x256xf32>
    }
    %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
    tt.store %c, %h : tensor<128x256x!tt.ptr<f16>>
  } {tt.flatten}
  tt.return
}

// Operands through tensor maps: kept.
// CHECK-LABEL: tt.func public @tensor_maps
// CHECK: tt.flatten
// NONE-LABEL: tt.func public @tensor_maps
// NONE-NOT: tt.flatten
tt.func public @tensor_maps(%a: !tt.tensordesc<64x64xf16>, %b: !tt.tensordesc<64x64xf16>, %c: tensor<64x64x!tt.ptr<f32>>, %tiles: i32, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %t = %c0 to %tiles step %c1 : i32 {
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%sum = %zero) -> (tensor<64x64xf32>) : i32 {
      %x = tt.descriptor_load %a[%t, %i] : !tt.tensordesc<64x64xf16> -> tensor<64x64xf16>
      %y = tt.descriptor_load %b[%i, %t] : !tt.tensordesc<64x64xf16> -> tensor<64x64xf16>
      %d = tt.dot %x, %y, %sum : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    tt.store %c, %acc : tensor<64x64x!tt.ptr<f32>>
  } {tt.flatten}
  tt.return
}
