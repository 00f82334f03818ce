// RUN: naiad-opt %s -p canonicalize | filecheck %s

// Triton's canonicalizations of tt ops (naiad/passes/tt_canonicalize.py), and the arith
// identities the dialect folds already give.

// ---- arith identities (folds): x * 1, x + 0, integer x * 0, -(-x), selects

// CHECK-LABEL: tt.func public @identities
// CHECK-NOT: arith.muli
// CHECK-NOT: arith.addi
// CHECK-NOT: arith.mulf
// CHECK-NOT: arith.negf
// CHECK-NOT: arith.select
// CHECK: %[[Z:.+]] = arith.constant 0 : i32
// CHECK: tt.return %arg0, %arg0, %[[Z]], %arg1, %arg1, %arg0, %arg0, %arg0
tt.func public @identities(%x: i32, %f: f32, %c: i1, %y: i32) -> (i32, i32, i32, f32, f32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %one = arith.constant 1.0 : f32
  %true = arith.constant true
  %false = arith.constant false
  %a = arith.muli %x, %c1 : i32
  %b = arith.addi %c0, %x : i32
  %z = arith.muli %x, %c0 : i32
  %g = arith.mulf %f, %one : f32
  %n = arith.negf %f : f32
  %nn = arith.negf %n : f32
  %s1 = arith.select %true, %x, %y : i32
  %s2 = arith.select %false, %y, %x : i32
  %s3 = arith.select %c, %x, %x : i32
  tt.return %a, %b, %z, %g, %nn, %s1, %s2, %s3 : i32, i32, i32, f32, f32, i32, i32, i32
}

// Negative: x + 0.0 and x * 0.0 are not x and 0 for floats (-0.0 + 0.0 is +0.0; NaN * 0 is NaN).
// CHECK-LABEL: tt.func public @float_zero_stays
// CHECK: arith.addf
// CHECK: arith.mulf
tt.func public @float_zero_stays(%f: f32) -> (f32, f32) {
  %zero = arith.constant 0.0 : f32
  %a = arith.addf %f, %zero : f32
  %m = arith.mulf %f, %zero : f32
  tt.return %a, %m : f32, f32
}

// ---- -(-x) for integers: subi(c0, subi(c1, x)) -> addi(x, c0 - c1)

// CHECK-LABEL: tt.func public @neg_neg_int
// CHECK-NOT: arith.subi
// CHECK: %[[S:.+]] = arith.addi %arg0, %{{.+}} : i32
// CHECK: tt.return %arg0, %[[S]] : i32, i32
tt.func public @neg_neg_int(%x: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %c5 = arith.constant 5 : i32
  %n = arith.subi %c0, %x : i32
  %nn = arith.subi %c0, %n : i32
  %m = arith.subi %c5, %n : i32
  tt.return %nn, %m : i32, i32
}

// Negative: the outer minuend is not a constant, so nothing cancels.
// CHECK-LABEL: tt.func public @sub_of_neg_stays
// CHECK: arith.subi %{{.+}}, %arg0
// CHECK: arith.subi %arg1,
tt.func public @sub_of_neg_stays(%x: i32, %y: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = arith.subi %c0, %x : i32
  %r = arith.subi %y, %n : i32
  tt.return %r : i32
}

// ---- casts to their own type

// CHECK-LABEL: tt.func public @identity_cast
// CHECK-NOT: arith.bitcast
// CHECK: tt.return %arg0 : i32
tt.func public @identity_cast(%x: i32) -> i32 {
  %y = arith.bitcast %x : i32 to i32
  tt.return %y : i32
}

// Negative: a bitcast to another type of the same width changes the type, so it stays.
// CHECK-LABEL: tt.func public @bitcast_stays
// CHECK: arith.bitcast %arg0 : i32 to f32
tt.func public @bitcast_stays(%x: i32) -> f32 {
  %y = arith.bitcast %x : i32 to f32
  tt.return %y : f32
}

// ---- addptr chains

// 64-bit offsets (as wide as the pointer) combine; the outer op's hints are kept.
// CHECK-LABEL: tt.func public @addptr_chain_i64
// CHECK: %[[S:.+]] = arith.addi %arg1, %arg2 : i64
// CHECK: %[[P:.+]] = tt.addptr %arg0, %[[S]] {tt.divisibility = 16 : i32} : !tt.ptr<f32>, i64
// CHECK-NOT: tt.addptr
// CHECK: tt.load %[[P]]
tt.func public @addptr_chain_i64(%p: !tt.ptr<f32>, %a: i64, %b: i64) -> f32 {
  %q = tt.addptr %p, %a : !tt.ptr<f32>, i64
  %r = tt.addptr %q, %b {tt.divisibility = 16 : i32} : !tt.ptr<f32>, i64
  %v = tt.load %r : !tt.ptr<f32>
  tt.return %v : f32
}

// 32-bit constant offsets whose sum does not overflow combine, and the sum folds.
// CHECK-LABEL: tt.func public @addptr_chain_constants
// CHECK: %[[C:.+]] = arith.constant dense<25> : tensor<8xi32>
// CHECK: tt.addptr %{{.+}}, %[[C]]
// CHECK-NOT: tt.addptr
tt.func public @addptr_chain_constants(%p: !tt.ptr<i32>) -> tensor<8xi32> {
  %c10 = arith.constant dense<10> : tensor<8xi32>
  %c15 = arith.constant dense<15> : tensor<8xi32>
  %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
  %q = tt.addptr %ps, %c10 : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
  %r = tt.addptr %q, %c15 : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
  %v = tt.load %r : tensor<8x!tt.ptr<i32>>
  tt.return %v : tensor<8xi32>
}

// Negative: 32-bit offsets known only at run time may overflow when added in i32 (two pointer
// increments would not), and offsets of different types cannot be added: both chains stay.
// CHECK-LABEL: tt.func public @addptr_chain_stays
// CHECK: tt.addptr %arg0, %arg1
// CHECK: tt.addptr %{{.+}}, %arg2
// CHECK: tt.addptr %arg0, %arg1
// CHECK: tt.addptr %{{.+}}, %arg3
// CHECK-NOT: arith.addi
tt.func public @addptr_chain_stays(%p: !tt.ptr<f32>, %a: i32, %b: i32, %c: i64) -> (f32, f32) {
  %q = tt.addptr %p, %a : !tt.ptr<f32>, i32
  %r = tt.addptr %q, %b : !tt.ptr<f32>, i32
  %v = tt.load %r : !tt.ptr<f32>
  %s = tt.addptr %p, %a : !tt.ptr<f32>, i32
  %t = tt.addptr %s, %c : !tt.ptr<f32>, i64
  %w = tt.load %t : !tt.ptr<f32>
  tt.return %v, %w : f32, f32
}

// addptr(p, 0) is p (fold).
// CHECK-LABEL: tt.func public @addptr_zero
// CHECK-NOT: tt.addptr
// CHECK: tt.load %arg0 : !tt.ptr<f32>
tt.func public @addptr_zero(%p: !tt.ptr<f32>) -> f32 {
  %c0 = arith.constant 0 : i32
  %q = tt.addptr %p, %c0 : !tt.ptr<f32>, i32
  %v = tt.load %q : !tt.ptr<f32>
  tt.return %v : f32
}

// ---- constant masks

// A load or store whose mask is all true loses it (and the load its `other`); a store whose
// mask is all false is erased; a load whose mask is all false is its `other`.
// CHECK-LABEL: tt.func public @constant_masks
// CHECK: %[[O:.+]] = arith.constant dense<2.500000e+00> : tensor<64xf32>
// CHECK: %[[P:.+]] = tt.addptr
// CHECK: %[[V:.+]] = tt.load %[[P]] : tensor<64x!tt.ptr<f32>>
// CHECK-NEXT: tt.store %[[P]], %[[V]] : tensor<64x!tt.ptr<f32>>
// CHECK-NOT: tt.store
// CHECK: tt.return %[[V]], %[[O]]
tt.func public @constant_masks(%p: !tt.ptr<f32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %true = arith.constant dense<true> : tensor<64xi1>
  %false = arith.constant dense<false> : tensor<64xi1>
  %other = arith.constant dense<2.5> : tensor<64xf32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v = tt.load %pp, %true, %other : tensor<64x!tt.ptr<f32>>
  %w = tt.load %pp, %false, %other : tensor<64x!tt.ptr<f32>>
  tt.store %pp, %v, %true : tensor<64x!tt.ptr<f32>>
  tt.store %pp, %w, %false : tensor<64x!tt.ptr<f32>>
  tt.return %v, %w : tensor<64xf32>, tensor<64xf32>
}

// Scalar masks too (Triton only rewrites splat tensor masks).
// CHECK-LABEL: tt.func public @constant_scalar_masks
// CHECK: %[[V:.+]] = tt.load %arg0 : !tt.ptr<f32>
// CHECK-NEXT: tt.store %arg1, %[[V]] : !tt.ptr<f32>
// CHECK-NEXT: tt.return
tt.func public @constant_scalar_masks(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>) {
  %true = arith.constant true
  %false = arith.constant false
  %v = tt.load %p, %true : !tt.ptr<f32>
  tt.store %q, %v, %true : !tt.ptr<f32>
  tt.store %p, %v, %false : !tt.ptr<f32>
  tt.return
}

// Negative: without `other`, a load whose mask is all false reads undefined lanes and stays;
// masks known only at run time stay.
// CHECK-LABEL: tt.func public @masks_stay
// CHECK: tt.load %{{.+}}, %{{.+}} : tensor<64x!tt.ptr<f32>>
// CHECK: tt.load %{{.+}}, %{{.+}}, %{{.+}} : tensor<64x!tt.ptr<f32>>
// CHECK: tt.store %{{.+}}, %{{.+}}, %{{.+}} : tensor<64x!tt.ptr<f32>>
tt.func public @masks_stay(%p: !tt.ptr<f32>, %n: i32) -> (tensor<64xf32>, tensor<64xf32>) {
  %false = arith.constant dense<false> : tensor<64xi1>
  %other = arith.constant dense<2.5> : tensor<64xf32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ns = tt.splat %n : i32 -> tensor<64xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %u = tt.load %pp, %false : tensor<64x!tt.ptr<f32>>
  %v = tt.load %pp, %m, %other : tensor<64x!tt.ptr<f32>>
  tt.store %pp, %v, %m : tensor<64x!tt.ptr<f32>>
  tt.return %u, %v : tensor<64xf32>, tensor<64xf32>
}

// ---- comparisons decided for every lane

// arange(0, 64) < 64 is true everywhere (also through expand_dims and broadcast, with the
// constant on the left, and unsigned); arange(0, 64) >= 64 is false everywhere. The load
// masked by a true mask then loses it.
// CHECK-LABEL: tt.func public @range_compare
// CHECK: %[[T:.+]] = arith.constant dense<true> : tensor<64xi1>
// CHECK: %[[F:.+]] = arith.constant dense<false> : tensor<64xi1>
// CHECK: %[[T2:.+]] = arith.constant dense<true> : tensor<64x8xi1>
// CHECK: %[[T3:.+]] = arith.constant dense<true> : tensor<64xi1>
// CHECK: %[[T4:.+]] = arith.constant dense<true> : tensor<64xi1>
// CHECK-NOT: arith.cmpi
// CHECK: tt.load %{{.+}} : tensor<64x!tt.ptr<f32>>
// CHECK-NOT: arith.cmpi
// CHECK: tt.return %[[T]], %[[F]], %[[T2]], %[[T3]], %[[T4]]
tt.func public @range_compare(%p: !tt.ptr<f32>) -> (tensor<64xi1>, tensor<64xi1>, tensor<64x8xi1>, tensor<64xi1>, tensor<64xi1>, tensor<64xf32>) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %c64 = arith.constant 64 : i32
  %n = tt.splat %c64 : i32 -> tensor<64xi32>
  %lt = arith.cmpi slt, %r, %n : tensor<64xi32>
  %ge = arith.cmpi sge, %r, %n : tensor<64xi32>
  %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rb = tt.broadcast %r2 : tensor<64x1xi32> -> tensor<64x8xi32>
  %n2 = arith.constant dense<64> : tensor<64x8xi32>
  %lt2 = arith.cmpi slt, %rb, %n2 : tensor<64x8xi32>
  %gt = arith.cmpi sgt, %n, %r : tensor<64xi32>
  %ult = arith.cmpi ult, %r, %n : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v = tt.load %pp, %lt : tensor<64x!tt.ptr<f32>>
  tt.return %lt, %ge, %lt2, %gt, %ult, %v : tensor<64xi1>, tensor<64xi1>, tensor<64x8xi1>, tensor<64xi1>, tensor<64xi1>, tensor<64xf32>
}

// Negative: arange(0, 64) < 32 holds for some lanes only; against a bound known at run time
// nothing is known.
// CHECK-LABEL: tt.func public @range_compare_stays
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<64xi32>
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<64xi32>
tt.func public @range_compare_stays(%n: i32) -> (tensor<64xi1>, tensor<64xi1>) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %c32 = arith.constant dense<32> : tensor<64xi32>
  %half = arith.cmpi slt, %r, %c32 : tensor<64xi32>
  %ns = tt.splat %n : i32 -> tensor<64xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32>
  tt.return %half, %m : tensor<64xi1>, tensor<64xi1>
}

// ---- splats and constants through shape ops

// A splat of a constant is a dense constant (fold), and so are its broadcasts and expansions;
// expand_dims and reshape of a non-splat constant are constants too.
// CHECK-LABEL: tt.func public @constants_through_shapes
// CHECK-NOT: tt.splat
// CHECK-NOT: tt.broadcast
// CHECK-NOT: tt.expand_dims
// CHECK-NOT: tt.reshape
// CHECK-DAG: %[[A:.+]] = arith.constant dense<3> : tensor<4x8xi32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<3> : tensor<1x8xi32>
// CHECK-DAG: %[[C:.+]] = arith.constant dense<{{\[}}[0, 1, 2, 3]]> : tensor<1x4xi32>
// CHECK-DAG: %[[D:.+]] = arith.constant dense<{{\[}}[0, 1], [2, 3]]> : tensor<2x2xi32>
// CHECK: tt.return %[[A]], %[[B]], %[[C]], %[[D]]
tt.func public @constants_through_shapes() -> (tensor<4x8xi32>, tensor<1x8xi32>, tensor<1x4xi32>, tensor<2x2xi32>) {
  %c3 = arith.constant 3 : i32
  %s = tt.splat %c3 : i32 -> tensor<1x8xi32>
  %b = tt.broadcast %s : tensor<1x8xi32> -> tensor<4x8xi32>
  %s1 = tt.splat %c3 : i32 -> tensor<8xi32>
  %e = tt.expand_dims %s1 {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
  %v = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi32>
  %ve = tt.expand_dims %v {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %vr = tt.reshape %v : tensor<4xi32> -> tensor<2x2xi32>
  tt.return %b, %e, %ve, %vr : tensor<4x8xi32>, tensor<1x8xi32>, tensor<1x4xi32>, tensor<2x2xi32>
}

// Negative: Triton folds only splat constants through a broadcast; a non-splat one stays.
// CHECK-LABEL: tt.func public @broadcast_of_dense_stays
// CHECK: tt.broadcast %{{.+}} : tensor<1x4xi32> -> tensor<2x4xi32>
tt.func public @broadcast_of_dense_stays() -> tensor<2x4xi32> {
  %v = arith.constant dense<[[0, 1, 2, 3]]> : tensor<1x4xi32>
  %b = tt.broadcast %v : tensor<1x4xi32> -> tensor<2x4xi32>
  tt.return %b : tensor<2x4xi32>
}

// broadcast, expand_dims, reshape and trans of splat(x) are splats of x.
// CHECK-LABEL: tt.func public @views_of_splat
// CHECK-NOT: tt.broadcast
// CHECK-NOT: tt.expand_dims
// CHECK-NOT: tt.reshape
// CHECK-NOT: tt.trans
// CHECK-DAG: %[[B:.+]] = tt.splat %arg0 : f32 -> tensor<4x8xf32>
// CHECK-DAG: %[[E:.+]] = tt.splat %arg0 : f32 -> tensor<1x8xf32>
// CHECK-DAG: %[[R:.+]] = tt.splat %arg0 : f32 -> tensor<2x4xf32>
// CHECK-DAG: %[[T:.+]] = tt.splat %arg0 : f32 -> tensor<8x4xf32>
// CHECK: tt.return %[[B]], %[[E]], %[[R]], %[[T]]
tt.func public @views_of_splat(%x: f32) -> (tensor<4x8xf32>, tensor<1x8xf32>, tensor<2x4xf32>, tensor<8x4xf32>) {
  %s = tt.splat %x : f32 -> tensor<1x8xf32>
  %b = tt.broadcast %s : tensor<1x8xf32> -> tensor<4x8xf32>
  %s1 = tt.splat %x : f32 -> tensor<8xf32>
  %e = tt.expand_dims %s1 {axis = 0 : i32} : tensor<8xf32> -> tensor<1x8xf32>
  %r = tt.reshape %s1 : tensor<8xf32> -> tensor<2x4xf32>
  %t = tt.trans %b {order = array<i32: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  tt.return %b, %e, %r, %t : tensor<4x8xf32>, tensor<1x8xf32>, tensor<2x4xf32>, tensor<8x4xf32>
}

// Chains merge: broadcast(broadcast), reshape(reshape), trans(trans); expand_dims of a
// broadcast becomes a broadcast of the expansion; a broadcast to its own type is its operand.
// CHECK-LABEL: tt.func public @view_chains
// CHECK: %[[R:.+]] = tt.make_range
// CHECK: %[[E:.+]] = tt.expand_dims %[[R]] {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
// CHECK: %[[B:.+]] = tt.broadcast %[[E]] : tensor<1x4xi32> -> tensor<8x4xi32>
// CHECK: %[[E2:.+]] = tt.expand_dims %[[E]] {axis = 0 : i32} : tensor<1x4xi32> -> tensor<1x1x4xi32>
// CHECK: %[[B2:.+]] = tt.broadcast %[[E2]] : tensor<1x1x4xi32> -> tensor<1x2x4xi32>
// CHECK: %[[RS:.+]] = tt.reshape %[[B]] : tensor<8x4xi32> -> tensor<32xi32>
// CHECK: %[[T:.+]] = tt.trans %[[B2]] {order = array<i32: 1, 2, 0>} : tensor<1x2x4xi32> -> tensor<2x4x1xi32>
// CHECK: %[[BB:.+]] = tt.broadcast %[[E2]] : tensor<1x1x4xi32> -> tensor<2x2x4xi32>
// CHECK: tt.return %[[B]], %[[B2]], %[[RS]], %[[T]], %[[E]], %[[BB]]
tt.func public @view_chains() -> (tensor<8x4xi32>, tensor<1x2x4xi32>, tensor<32xi32>, tensor<2x4x1xi32>, tensor<1x4xi32>, tensor<2x2x4xi32>) {
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %e = tt.expand_dims %r {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %b1 = tt.broadcast %e : tensor<1x4xi32> -> tensor<2x4xi32>
  %b2 = tt.broadcast %e : tensor<1x4xi32> -> tensor<8x4xi32>
  %e2 = tt.expand_dims %b1 {axis = 0 : i32} : tensor<2x4xi32> -> tensor<1x2x4xi32>
  %r1 = tt.reshape %b2 : tensor<8x4xi32> -> tensor<4x8xi32>
  %r2 = tt.reshape %r1 : tensor<4x8xi32> -> tensor<32xi32>
  %t1 = tt.trans %e2 {order = array<i32: 0, 2, 1>} : tensor<1x2x4xi32> -> tensor<1x4x2xi32>
  %t2 = tt.trans %t1 {order = array<i32: 2, 1, 0>} : tensor<1x4x2xi32> -> tensor<2x4x1xi32>
  %same = tt.broadcast %e : tensor<1x4xi32> -> tensor<1x4xi32>
  %twice = tt.broadcast %e2 : tensor<1x2x4xi32> -> tensor<2x2x4xi32>
  tt.return %b2, %e2, %r2, %t2, %same, %twice : tensor<8x4xi32>, tensor<1x2x4xi32>, tensor<32xi32>, tensor<2x4x1xi32>, tensor<1x4xi32>, tensor<2x2x4xi32>
}

// Negative: a broadcast, reshape or trans of a value that is neither a splat nor the same
// kind of op stays, and a reshape with `efficient_layout` keeps its operand (Triton leaves
// such reshapes alone).
// CHECK-LABEL: tt.func public @views_stay
// CHECK: %[[B:.+]] = tt.broadcast %{{.+}} : tensor<1x4xi32> -> tensor<2x4xi32>
// CHECK: tt.reshape %{{.+}} efficient_layout : tensor<8xf32> -> tensor<2x4xf32>
// CHECK: tt.trans %[[B]] {order = array<i32: 1, 0>} : tensor<2x4xi32> -> tensor<4x2xi32>
// CHECK: tt.reshape %[[B]] : tensor<2x4xi32> -> tensor<8xi32>
tt.func public @views_stay(%x: f32) -> (tensor<2x4xi32>, tensor<2x4xf32>, tensor<4x2xi32>, tensor<8xi32>) {
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %e = tt.expand_dims %r {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %b = tt.broadcast %e : tensor<1x4xi32> -> tensor<2x4xi32>
  %s = tt.splat %x : f32 -> tensor<8xf32>
  %q = tt.reshape %s efficient_layout : tensor<8xf32> -> tensor<2x4xf32>
  %t = tt.trans %b {order = array<i32: 1, 0>} : tensor<2x4xi32> -> tensor<4x2xi32>
  %f = tt.reshape %b : tensor<2x4xi32> -> tensor<8xi32>
  tt.return %b, %q, %t, %f : tensor<2x4xi32>, tensor<2x4xf32>, tensor<4x2xi32>, tensor<8xi32>
}

// ---- ptr_to_int of int_to_ptr: the integer itself, also through a select of two such pointers
// (naiad/passes/address_round_trip.py)

// CHECK-LABEL: tt.func public @address_round_trip
// CHECK-NOT: tt.int_to_ptr
// CHECK-NOT: tt.ptr_to_int
// CHECK: %[[S:.+]] = arith.select %arg2, %arg0, %arg1 : tensor<8xi1>, tensor<8xi64>
// CHECK: tt.return %arg0, %[[S]]
tt.func public @address_round_trip(%a: tensor<8xi64>, %b: tensor<8xi64>, %c: tensor<8xi1>) -> (tensor<8xi64>, tensor<8xi64>) {
  %pa = tt.int_to_ptr %a : tensor<8xi64> -> tensor<8x!tt.ptr<i32>>
  %pb = tt.int_to_ptr %b : tensor<8xi64> -> tensor<8x!tt.ptr<i32>>
  %back = tt.ptr_to_int %pa : tensor<8x!tt.ptr<i32>> -> tensor<8xi64>
  %chosen = arith.select %c, %pa, %pb : tensor<8xi1>, tensor<8x!tt.ptr<i32>>
  %both = tt.ptr_to_int %chosen : tensor<8x!tt.ptr<i32>> -> tensor<8xi64>
  tt.return %back, %both : tensor<8xi64>, tensor<8xi64>
}

// A select between a pointer made from an integer and an argument's pointer stays: the
// argument's address is known only at run time (and is its own).
// CHECK-LABEL: tt.func public @address_round_trip_stays
// CHECK: tt.int_to_ptr
// CHECK: arith.select
// CHECK: tt.ptr_to_int
tt.func public @address_round_trip_stays(%a: tensor<8xi64>, %p: tensor<8x!tt.ptr<i32>>, %c: tensor<8xi1>) -> tensor<8xi64> {
  %pa = tt.int_to_ptr %a : tensor<8xi64> -> tensor<8x!tt.ptr<i32>>
  %chosen = arith.select %c, %pa, %p : tensor<8xi1>, tensor<8x!tt.ptr<i32>>
  %both = tt.ptr_to_int %chosen : tensor<8x!tt.ptr<i32>> -> tensor<8xi64>
  tt.return %both : tensor<8xi64>
}
