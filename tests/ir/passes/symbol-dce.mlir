// RUN: naiad-opt %s -p symbol-dce | filecheck %s

// CHECK: tt.func public @kernel
tt.func public @kernel(%x: i32) -> i32 {
  %r = tt.call @used(%x) : (i32) -> i32
  tt.return %r : i32
}
// CHECK: tt.func private @used
tt.func private @used(%a: i32) -> i32 {
  tt.return %a : i32
}
// CHECK-NOT: @unused
tt.func private @unused(%a: i32) -> i32 {
  tt.return %a : i32
}
