// RUN: naiad-opt %s -p canonicalize | filecheck %s

// -- scf.for: carried values that do not change

// %b is yielded unchanged: it is %y on every iteration, and no longer carried.
// CHECK-LABEL: tt.func public @for_pass_through
// CHECK: %[[R:.+]] = scf.for %{{.+}} = %{{.+}} to %arg0 step %{{.+}} iter_args(%[[A:.+]] = %arg1) -> (i32) : i32 {
// CHECK-NEXT: %[[N:.+]] = arith.addi %[[A]], %arg2 : i32
// CHECK-NEXT: scf.yield %[[N]] : i32
// CHECK: tt.return %[[R]], %arg2 : i32, i32
tt.func public @for_pass_through(%n: i32, %x: i32, %y: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %b = %y) -> (i32, i32) : i32 {
    %s = arith.addi %a, %b : i32
    scf.yield %s, %b : i32, i32
  }
  tt.return %r#0, %r#1 : i32, i32
}

// %b is set back to its init %y at the end of every iteration: it is %y throughout.
// CHECK-LABEL: tt.func public @for_yields_init
// CHECK: scf.for %{{.+}} iter_args(%[[A:.+]] = %arg1) -> (i32) : i32 {
// CHECK-NEXT: %[[M:.+]] = arith.muli %[[A]], %arg2 : i32
// CHECK-NEXT: scf.yield %[[M]] : i32
// CHECK: tt.return %{{.+}}, %arg2 : i32, i32
tt.func public @for_yields_init(%n: i32, %x: i32, %y: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %b = %y) -> (i32, i32) : i32 {
    %m = arith.muli %a, %b : i32
    scf.yield %m, %y : i32, i32
  }
  tt.return %r#0, %r#1 : i32, i32
}

// A block of pointers carried unchanged (as the frontend carries a block pointer's fixed
// fields) is no longer carried; the loads read through the value from outside.
// CHECK-LABEL: tt.func public @for_pointers_pass_through
// CHECK: %[[P:.+]] = tt.addptr
// CHECK: scf.for %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (tensor<16xf32>) : i32 {
// CHECK-NEXT: %[[X:.+]] = tt.load %[[P]] : tensor<16x!tt.ptr<f32>>
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[ACC]], %[[X]] : tensor<16xf32>
// CHECK-NEXT: scf.yield %[[S]] : tensor<16xf32>
tt.func public @for_pointers_pass_through(%p: !tt.ptr<f32>, %n: i32) -> tensor<16xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %res:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %q = %pp) -> (tensor<16xf32>, tensor<16x!tt.ptr<f32>>) : i32 {
    %x = tt.load %q : tensor<16x!tt.ptr<f32>>
    %s = arith.addf %acc, %x : tensor<16xf32>
    scf.yield %s, %q : tensor<16xf32>, tensor<16x!tt.ptr<f32>>
  }
  tt.return %res#0 : tensor<16xf32>
}

// Negative: the two values swap places every iteration, so each depends on the trip count's
// parity and both must stay carried.
// CHECK-LABEL: tt.func public @for_swap_stays
// CHECK: scf.for %{{.+}} iter_args(%[[A:.+]] = %arg1, %[[B:.+]] = %arg2) -> (i32, i32) : i32 {
// CHECK-NEXT: scf.yield %[[B]], %[[A]] : i32, i32
tt.func public @for_swap_stays(%n: i32, %x: i32, %y: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %b = %y) -> (i32, i32) : i32 {
    scf.yield %b, %a : i32, i32
  }
  tt.return %r#0, %r#1 : i32, i32
}

// %c only updates itself and its result is unused: it goes, with the ops computing it.
// CHECK-LABEL: tt.func public @for_dead_cycle
// CHECK: scf.for %{{.+}} iter_args(%[[A:.+]] = %arg1) -> (i32) : i32 {
// CHECK-NEXT: %[[S:.+]] = arith.addi %[[A]], %{{.+}} : i32
// CHECK-NEXT: scf.yield %[[S]] : i32
tt.func public @for_dead_cycle(%n: i32, %x: i32, %y: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %c = %y) -> (i32, i32) : i32 {
    %s = arith.addi %a, %i : i32
    %d = arith.muli %c, %c : i32
    %e = arith.addi %d, %a : i32
    scf.yield %s, %e : i32, i32
  }
  tt.return %r#0 : i32
}

// Negative: the same loop with the second result returned; the cycle computes it and stays.
// CHECK-LABEL: tt.func public @for_used_cycle_stays
// CHECK: scf.for %{{.+}} -> (i32, i32) : i32 {
// CHECK: arith.muli
tt.func public @for_used_cycle_stays(%n: i32, %x: i32, %y: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %c = %y) -> (i32, i32) : i32 {
    %s = arith.addi %a, %i : i32
    %d = arith.muli %c, %c : i32
    %e = arith.addi %d, %a : i32
    scf.yield %s, %e : i32, i32
  }
  tt.return %r#0, %r#1 : i32, i32
}

// Negative: the result is unused but the argument also feeds the other carried value, so its
// updates are read.
// CHECK-LABEL: tt.func public @for_cycle_read_elsewhere_stays
// CHECK: scf.for %{{.+}} -> (i32, i32) : i32 {
tt.func public @for_cycle_read_elsewhere_stays(%n: i32, %x: i32, %y: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %c = %y) -> (i32, i32) : i32 {
    %s = arith.addi %a, %c : i32
    %d = arith.addi %c, %i : i32
    scf.yield %s, %d : i32, i32
  }
  tt.return %r#0 : i32
}

// -- scf.for: constant trip counts

// Zero iterations (lb >= ub): the loop is its inits.
// CHECK-LABEL: tt.func public @for_zero_trips
// CHECK-NOT: scf.for
// CHECK: tt.return %arg0, %arg1 : i32, i32
tt.func public @for_zero_trips(%x: i32, %y: i32) -> (i32, i32) {
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %c7 = arith.constant 7 : i32
  %r = scf.for %i = %c7 to %c3 step %c1 iter_args(%a = %x) -> (i32) : i32 {
    %s = arith.addi %a, %i : i32
    scf.yield %s : i32
  }
  %q = scf.for %i = %c3 to %c3 step %c1 iter_args(%a = %y) -> (i32) : i32 {
    %s = arith.addi %a, %i : i32
    scf.yield %s : i32
  }
  tt.return %r, %q : i32, i32
}

// One iteration (3 to 5 step 4): the body at %i = 3.
// CHECK-LABEL: tt.func public @for_one_trip
// CHECK-NOT: scf.for
// CHECK: %[[C3:.+]] = arith.constant 3 : i32
// CHECK: %[[M:.+]] = arith.muli %arg0, %[[C3]] : i32
// CHECK: tt.return %[[M]] : i32
tt.func public @for_one_trip(%x: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %c5 = arith.constant 5 : i32
  %r = scf.for %i = %c3 to %c5 step %c4 iter_args(%a = %x) -> (i32) : i32 {
    %m = arith.muli %a, %i : i32
    scf.yield %m : i32
  }
  tt.return %r : i32
}

// Unsigned bounds: 200 to 100 as i8 is 200 to 100 unsigned (-56 to 100 signed, which would
// run): zero iterations.
// CHECK-LABEL: tt.func public @for_unsigned_zero_trips
// CHECK-NOT: scf.for
tt.func public @for_unsigned_zero_trips(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i8
  %lb = arith.constant -56 : i8
  %ub = arith.constant 100 : i8
  %r = scf.for unsigned %i = %lb to %ub step %c1 iter_args(%a = %x) -> (i32) : i8 {
    %s = arith.addi %a, %x : i32
    scf.yield %s : i32
  }
  tt.return %r : i32
}

// Negative: two iterations (0 to 2 step 1).
// CHECK-LABEL: tt.func public @for_two_trips_stays
// CHECK: scf.for
tt.func public @for_two_trips_stays(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> (i32) : i32 {
    %m = arith.muli %a, %a : i32
    scf.yield %m : i32
  }
  tt.return %r : i32
}

// Negative: 126 to 127 step 11 in i8 looks like one iteration, but 126 + 11 wraps to -119,
// which is below 127, so the loop runs again (163 times in all).
// CHECK-LABEL: tt.func public @for_wrapping_step_stays
// CHECK: scf.for
tt.func public @for_wrapping_step_stays(%x: i32) -> i32 {
  %lb = arith.constant 126 : i8
  %ub = arith.constant 127 : i8
  %step = arith.constant 11 : i8
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %lb to %ub step %step iter_args(%a = %x) -> (i32) : i8 {
    %s = arith.addi %a, %c1 : i32
    scf.yield %s : i32
  }
  tt.return %r : i32
}

// -- scf.if

// A constant condition: the branch taken, inlined.
// CHECK-LABEL: tt.func public @if_constant
// CHECK-NOT: scf.if
// CHECK: %[[S:.+]] = arith.subi %arg0, %arg1 : i32
// CHECK: tt.return %[[S]] : i32
tt.func public @if_constant(%x: i32, %y: i32) -> i32 {
  %false = arith.constant false
  %r = scf.if %false -> (i32) {
    %a = arith.addi %x, %y : i32
    scf.yield %a : i32
  } else {
    %s = arith.subi %x, %y : i32
    scf.yield %s : i32
  }
  tt.return %r : i32
}

// A constant false condition without `else`: nothing runs.
// CHECK-LABEL: tt.func public @if_false_without_else
// CHECK-NOT: scf.if
// CHECK-NOT: tt.store
// CHECK: tt.return
tt.func public @if_false_without_else(%p: !tt.ptr<i32>, %x: i32) {
  %false = arith.constant false
  scf.if %false {
    tt.store %p, %x : !tt.ptr<i32>
  }
  tt.return
}

// Both branches yield values from outside: an arith.select, or the value itself when it is
// the same.
// CHECK-LABEL: tt.func public @if_to_select
// CHECK-NOT: scf.if
// CHECK: %[[C:.+]] = arith.cmpi slt, %arg0, %arg1 : i32
// CHECK: %[[S:.+]] = arith.select %[[C]], %arg0, %arg1 : i32
// CHECK: tt.return %[[S]], %arg2 : i32, i32
tt.func public @if_to_select(%x: i32, %y: i32, %z: i32) -> (i32, i32) {
  %c = arith.cmpi slt, %x, %y : i32
  %r:2 = scf.if %c -> (i32, i32) {
    scf.yield %x, %z : i32, i32
  } else {
    scf.yield %y, %z : i32, i32
  }
  tt.return %r#0, %r#1 : i32, i32
}

// One result computed inside a branch stays with the scf.if; the other becomes a select.
// CHECK-LABEL: tt.func public @if_partly_to_select
// CHECK: %[[C:.+]] = arith.cmpi
// CHECK: %[[R:.+]] = scf.if %[[C]] -> (i32) {
// CHECK-NEXT: %[[M:.+]] = arith.muli %arg0, %arg1 : i32
// CHECK-NEXT: scf.yield %[[M]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %arg2 : i32
// CHECK-NEXT: }
// CHECK: %[[S:.+]] = arith.select %[[C]], %arg1, %arg0 : i32
// CHECK: tt.return %[[R]], %[[S]] : i32, i32
tt.func public @if_partly_to_select(%x: i32, %y: i32, %z: i32) -> (i32, i32) {
  %c = arith.cmpi slt, %x, %y : i32
  %r:2 = scf.if %c -> (i32, i32) {
    %m = arith.muli %x, %y : i32
    scf.yield %m, %y : i32, i32
  } else {
    scf.yield %z, %x : i32, i32
  }
  tt.return %r#0, %r#1 : i32, i32
}

// Negative: each branch computes its result, which exists only inside it; no select can be
// made without running both branches.
// CHECK-LABEL: tt.func public @if_computed_stays
// CHECK: scf.if %{{.+}} -> (i32) {
tt.func public @if_computed_stays(%x: i32, %y: i32) -> i32 {
  %c = arith.cmpi slt, %x, %y : i32
  %r = scf.if %c -> (i32) {
    %a = arith.addi %x, %y : i32
    scf.yield %a : i32
  } else {
    %s = arith.subi %x, %y : i32
    scf.yield %s : i32
  }
  tt.return %r : i32
}

// An unused result is dropped; the scf.if stays for its store.
// CHECK-LABEL: tt.func public @if_unused_result
// CHECK: scf.if %{{.+}} {
// CHECK-NEXT: tt.store
// CHECK-NEXT: }
// CHECK-NOT: else
// CHECK: tt.return
tt.func public @if_unused_result(%p: !tt.ptr<i32>, %x: i32, %y: i32) {
  %c = arith.cmpi slt, %x, %y : i32
  %r = scf.if %c -> (i32) {
    tt.store %p, %x : !tt.ptr<i32>
    %a = arith.addi %x, %y : i32
    scf.yield %a : i32
  } else {
    %s = arith.subi %x, %y : i32
    scf.yield %s : i32
  }
  tt.return
}

// An `else` that only yields is removed.
// CHECK-LABEL: tt.func public @if_empty_else
// CHECK: scf.if %{{.+}} {
// CHECK-NEXT: tt.store
// CHECK-NEXT: }
// CHECK-NEXT: tt.return
tt.func public @if_empty_else(%p: !tt.ptr<i32>, %x: i32, %y: i32) {
  %c = arith.cmpi slt, %x, %y : i32
  scf.if %c {
    tt.store %p, %x : !tt.ptr<i32>
  } else {
  }
  tt.return
}

// Negative: an `else` that stores does something and stays.
// CHECK-LABEL: tt.func public @if_else_stores_stays
// CHECK: } else {
// CHECK-NEXT: tt.store %arg0, %arg2
tt.func public @if_else_stores_stays(%p: !tt.ptr<i32>, %x: i32, %y: i32) {
  %c = arith.cmpi slt, %x, %y : i32
  scf.if %c {
    tt.store %p, %x : !tt.ptr<i32>
  } else {
    tt.store %p, %y : !tt.ptr<i32>
  }
  tt.return
}

// -- scf.while

// %b goes around the loop unchanged (the condition forwards it, `do` yields it back): it is
// %y on every iteration. The result stays: it is what the condition forwards.
// CHECK-LABEL: tt.func public @while_invariant
// CHECK: scf.while (%[[A:.+]] = %arg0) : (i32) -> (i32, i32) {
// CHECK-NEXT: %[[C:.+]] = arith.cmpi slt, %[[A]], %arg1 : i32
// CHECK-NEXT: scf.condition(%[[C]]) %[[A]], %arg1 : i32, i32
// CHECK: ^bb0(%[[A2:[a-z0-9]+]]: i32
// CHECK-NEXT: %[[N:.+]] = arith.addi %[[A2]], %{{.+}} : i32
// CHECK-NEXT: scf.yield %[[N]] : i32
tt.func public @while_invariant(%x: i32, %y: i32) -> (i32, i32) {
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%a = %x, %b = %y) : (i32, i32) -> (i32, i32) {
    %c = arith.cmpi slt, %a, %b : i32
    scf.condition(%c) %a, %b : i32, i32
  } do {
  ^bb0(%a2: i32, %b2: i32):
    %n = arith.addi %a2, %c1 : i32
    scf.yield %n, %b2 : i32, i32
  }
  tt.return %r#0, %r#1 : i32, i32
}

// Negative: `do` yields a new value for %b (here %a2): it changes between iterations.
// CHECK-LABEL: tt.func public @while_variant_stays
// CHECK: scf.while (%{{.+}} = %arg0, %{{.+}} = %arg1) : (i32, i32) -> (i32, i32) {
tt.func public @while_variant_stays(%x: i32, %y: i32) -> (i32, i32) {
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%a = %x, %b = %y) : (i32, i32) -> (i32, i32) {
    %c = arith.cmpi slt, %a, %b : i32
    scf.condition(%c) %a, %b : i32, i32
  } do {
  ^bb0(%a2: i32, %b2: i32):
    %n = arith.addi %a2, %c1 : i32
    scf.yield %n, %a2 : i32, i32
  }
  tt.return %r#0, %r#1 : i32, i32
}
