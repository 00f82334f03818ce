// RUN: naiad-opt %s -p dce | filecheck %s

// Unused pure ops and unused loads go; stores stay.
// CHECK-LABEL: tt.func public @dead
// CHECK-NOT: arith.muli
// CHECK-NOT: tt.load
// CHECK: tt.store
tt.func public @dead(%p: !tt.ptr<i32>, %x: i32) {
  %m = arith.muli %x, %x : i32
  %l = tt.load %p : !tt.ptr<i32>
  tt.store %p, %x : !tt.ptr<i32>
  tt.return
}
