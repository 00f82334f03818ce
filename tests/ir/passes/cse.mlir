// RUN: naiad-opt %s -p cse | filecheck %s

// CHECK-LABEL: tt.func public @merge
// CHECK: %[[A:.+]] = arith.addi %arg0, %arg1 : i32
// CHECK-NOT: arith.addi
// CHECK: arith.muli %[[A]], %[[A]] : i32
tt.func public @merge(%x: i32, %y: i32) -> i32 {
  %a = arith.addi %x, %y : i32
  %b = arith.addi %x, %y : i32
  %c = arith.muli %a, %b : i32
  tt.return %c : i32
}

// Loads are not pure: two loads of one address stay two (a store may come between).
// CHECK-LABEL: tt.func public @loads_stay
// CHECK-COUNT-2: tt.load
tt.func public @loads_stay(%p: !tt.ptr<f32>) -> f32 {
  %a = tt.load %p : !tt.ptr<f32>
  %b = tt.load %p : !tt.ptr<f32>
  %c = arith.addf %a, %b : f32
  tt.return %c : f32
}
