// RUN: naiad-opt %s -p "tritongpu-prove-tensor-maps" --no-locations | filecheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // The base is an argument aligned to 16 bytes and the row stride (f16) a multiple of 8
  // elements: the map stays, and its block moves by tensor copies.
  // CHECK-LABEL: tt.func @aligned
  // CHECK: %[[MAP:[0-9a-z_]+]] = tt.make_tensor_descriptor
  // CHECK: tt.descriptor_load %[[MAP]]
  // CHECK: tt.descriptor_store %[[MAP]]
  // CHECK-NOT: tt.load
  tt.func @aligned(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %m: i32, %n: i32 {tt.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %stride = arith.extsi %n : i32 to i64
    %d = tt.make_tensor_descriptor %p, [%m, %n], [%stride, %c1] : !tt.ptr<f16>, !tt.tensordesc<64x64xf16>
    %x = tt.descriptor_load %d[%c0, %c0] : !tt.tensordesc<64x64xf16> -> tensor<64x64xf16, #blocked>
    tt.descriptor_store %d[%c0, %c0], %x : !tt.tensordesc<64x64xf16>, tensor<64x64xf16, #blocked>
    tt.return
  }

  // Four f16 elements past an aligned argument: 8 bytes, not 16. The map goes, and its load
  // and store become the masked pointer accesses of its base, sizes and row stride.
  // CHECK-LABEL: tt.func @eight_bytes_past
  // CHECK-NOT: tt.make_tensor_descriptor
  // CHECK-NOT: tt.descriptor_load
  // CHECK: %[[LOADED:[0-9a-z_]+]] = tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64x!tt.ptr<f16>, #blocked>
  // CHECK: tt.store %{{.*}}, %[[LOADED]], %{{.*}} : tensor<64x64x!tt.ptr<f16>, #blocked>
  tt.func @eight_bytes_past(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %m: i32, %n: i32 {tt.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c1 = arith.constant 1 : i64
    %q = tt.addptr %p, %c4 : !tt.ptr<f16>, i32
    %stride = arith.extsi %n : i32 to i64
    %d = tt.make_tensor_descriptor %q, [%m, %n], [%stride, %c1] : !tt.ptr<f16>, !tt.tensordesc<64x64xf16>
    %x = tt.descriptor_load %d[%c0, %c0] : !tt.tensordesc<64x64xf16> -> tensor<64x64xf16, #blocked>
    tt.descriptor_store %d[%c0, %c0], %x : !tt.tensordesc<64x64xf16>, tensor<64x64xf16, #blocked>
    tt.return
  }

  // A block atomic through an unproven map (its row stride unknown) becomes masked element
  // atomics of its kind, ordered `release` at GPU scope as the frontend's pointer form.
  // CHECK-LABEL: tt.func @reduced_through_an_unproven_map
  // CHECK-NOT: tt.descriptor_reduce
  // CHECK: tt.atomic_rmw fadd, release, gpu, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<64x64x!tt.ptr<f32>, #blocked>
  tt.func @reduced_through_an_unproven_map(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %m: i32, %n: i32, %x: tensor<64x64xf32, #blocked>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %stride = arith.extsi %n : i32 to i64
    %d = tt.make_tensor_descriptor %p, [%m, %n], [%stride, %c1] : !tt.ptr<f32>, !tt.tensordesc<64x64xf32>
    tt.descriptor_reduce add, %d[%c0, %c0], %x : !tt.tensordesc<64x64xf32>, tensor<64x64xf32, #blocked>
    tt.return
  }
}
