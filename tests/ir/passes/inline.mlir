// RUN: naiad-opt %s -p inline | filecheck %s

// A one-block callee is spliced in place; the callee, now unused, is gone.
// CHECK-LABEL: tt.func public @caller
// CHECK-NOT: tt.call
// CHECK: %[[M:.+]] = arith.muli %arg0, %arg0 : i32
// CHECK: tt.return %[[M]] : i32
tt.func public @caller(%x: i32) -> i32 {
  %r = tt.call @square(%x) : (i32) -> i32
  tt.return %r : i32
}
// CHECK-NOT: @square
tt.func private @square(%a: i32) -> i32 {
  %m = arith.muli %a, %a : i32
  tt.return %m : i32
}

// A callee marked noinline stays a call (and stays defined).
// CHECK-LABEL: tt.func public @keeps_noinline
// CHECK: tt.call @kept
tt.func public @keeps_noinline(%x: i32) -> i32 {
  %r = tt.call @kept(%x) : (i32) -> i32
  tt.return %r : i32
}
// CHECK: tt.func private @kept
tt.func private @kept(%a: i32) -> i32 attributes {noinline = true} {
  tt.return %a : i32
}

// A callee of several blocks is cloned between the call and a continuation block; its returns
// become branches carrying the results.
// CHECK-LABEL: tt.func public @branches
// CHECK: cf.br ^[[ENTRY:.+]](%arg0 : i1)
// CHECK: ^[[ENTRY]](%[[C:[0-9]+]]: i1
// CHECK: cf.cond_br %[[C]]
// CHECK: cf.br ^[[AFTER:bb[0-9]+]](%{{.+}} : i32)
// CHECK: cf.br ^[[AFTER]](%{{.+}} : i32)
// CHECK: ^[[AFTER]](%[[R:[0-9]+]]: i32
// CHECK: tt.return %[[R]] : i32
tt.func public @branches(%c: i1) -> i32 {
  %r = tt.call @pick(%c) : (i1) -> i32
  tt.return %r : i32
}
tt.func private @pick(%c: i1) -> i32 {
  cf.cond_br %c, ^yes, ^no
^yes:
  %one = arith.constant 1 : i32
  tt.return %one : i32
^no:
  %two = arith.constant 2 : i32
  tt.return %two : i32
}
