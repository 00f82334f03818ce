// RUN: naiad-opt %s -p cpu-sequence-partitions --no-locations | filecheck %s

// The default region's ops, then each partition's with the captures for its arguments; the
// barriers go, and the yielded value takes the op's result's place.
// CHECK-LABEL: tt.func public @in_order
// CHECK-NOT: gpu.barrier
// CHECK: %[[SUM:.+]] = arith.addi %arg1, %arg1 : i32
// CHECK-NEXT: tt.store %arg0, %[[SUM]]
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[Q:.+]] = tt.addptr %arg0, %[[ONE]]
// CHECK-NEXT: %[[SQUARE:.+]] = arith.muli %arg1, %arg1 : i32
// CHECK-NEXT: tt.store %[[Q]], %[[SQUARE]]
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[R:.+]] = tt.addptr %arg0, %[[TWO]]
// CHECK-NEXT: tt.store %[[R]], %[[SUM]]
// CHECK-NOT: ttg.
// CHECK: tt.return
tt.func public @in_order(%p: !tt.ptr<i32>, %b: i32) {
  gpu.barrier
  %sum = ttg.warp_specialize(%p, %b)
  default {
    %s = arith.addi %b, %b : i32
    tt.store %p, %s : !tt.ptr<i32>
    gpu.barrier
    ttg.warp_yield %s : i32
  }
  partition0(%x: !tt.ptr<i32>, %y: i32) num_warps(2) {
    %c1 = arith.constant 1 : i32
    %q = tt.addptr %x, %c1 : !tt.ptr<i32>, i32
    %v = arith.muli %y, %y : i32
    gpu.barrier
    tt.store %q, %v : !tt.ptr<i32>
    ttg.warp_return
  } : (!tt.ptr<i32>, i32) -> (i32)
  %c2 = arith.constant 2 : i32
  %r = tt.addptr %p, %c2 : !tt.ptr<i32>, i32
  tt.store %r, %sum : !tt.ptr<i32>
  tt.return
}

// A kernel without partitions is left as it is.
// CHECK-LABEL: tt.func public @plain
// CHECK-NEXT: tt.store %arg0, %arg1
tt.func public @plain(%p: !tt.ptr<i32>, %b: i32) {
  tt.store %p, %b : !tt.ptr<i32>
  tt.return
}
