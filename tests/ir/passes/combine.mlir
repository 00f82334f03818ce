// RUN: naiad-opt %s -p combine | filecheck %s

// Triton's triton-combine and triton-reorder-broadcast (naiad/passes/combine.py). Float inputs
// are small integers (i8 loads converted to f32), so every sum is exact and a dot agrees bit
// for bit with the adds and reductions it replaces.

// ---- dot(a, b, 0) + c -> dot(a, b, c)

// CHECK-LABEL: tt.func public @dot_add
// CHECK-NOT: arith.addf
// CHECK: %[[D:.+]] = tt.dot %[[A:[^,]+]], %[[B:[^,]+]], %[[C:[^ ]+]] : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK-NOT: arith.addf
// CHECK: %[[E:.+]] = tt.dot %[[A]], %[[B]], %[[C]] : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK-NOT: arith.addf
// CHECK: tt.return %[[D]], %[[E]]
tt.func public @dot_add(%pa: !tt.ptr<i8>, %pb: !tt.ptr<i8>, %pc: !tt.ptr<i8>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %offs = tt.reshape %r : tensor<256xi32> -> tensor<16x16xi32>
  %pas = tt.splat %pa : !tt.ptr<i8> -> tensor<16x16x!tt.ptr<i8>>
  %pbs = tt.splat %pb : !tt.ptr<i8> -> tensor<16x16x!tt.ptr<i8>>
  %pcs = tt.splat %pc : !tt.ptr<i8> -> tensor<16x16x!tt.ptr<i8>>
  %ap = tt.addptr %pas, %offs : tensor<16x16x!tt.ptr<i8>>, tensor<16x16xi32>
  %bp = tt.addptr %pbs, %offs : tensor<16x16x!tt.ptr<i8>>, tensor<16x16xi32>
  %cp = tt.addptr %pcs, %offs : tensor<16x16x!tt.ptr<i8>>, tensor<16x16xi32>
  %ai = tt.load %ap : tensor<16x16x!tt.ptr<i8>>
  %bi = tt.load %bp : tensor<16x16x!tt.ptr<i8>>
  %ci = tt.load %cp : tensor<16x16x!tt.ptr<i8>>
  %a = arith.sitofp %ai : tensor<16x16xi8> to tensor<16x16xf32>
  %b = arith.sitofp %bi : tensor<16x16xi8> to tensor<16x16xf32>
  %c = arith.sitofp %ci : tensor<16x16xi8> to tensor<16x16xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %d0 = tt.dot %a, %b, %zero : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %d = arith.addf %d0, %c : tensor<16x16xf32>
  %e0 = tt.dot %a, %b, %zero : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %e = arith.addf %c, %e0 : tensor<16x16xf32>
  tt.return %d, %e : tensor<16x16xf32>, tensor<16x16xf32>
}

// Integer dots fuse with addi the same way.
// CHECK-LABEL: tt.func public @dot_addi
// CHECK-NOT: arith.addi
// CHECK: %[[D:.+]] = tt.dot %{{[^,]+}}, %{{[^,]+}}, %{{[^ ]+}} : tensor<16x16xi8> * tensor<16x16xi8> -> tensor<16x16xi32>
// CHECK-NOT: arith.addi
// CHECK: tt.return %[[D]]
tt.func public @dot_addi(%pa: !tt.ptr<i8>, %pc: !tt.ptr<i32>) -> tensor<16x16xi32> {
  %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %offs = tt.reshape %r : tensor<256xi32> -> tensor<16x16xi32>
  %pas = tt.splat %pa : !tt.ptr<i8> -> tensor<16x16x!tt.ptr<i8>>
  %pcs = tt.splat %pc : !tt.ptr<i32> -> tensor<16x16x!tt.ptr<i32>>
  %ap = tt.addptr %pas, %offs : tensor<16x16x!tt.ptr<i8>>, tensor<16x16xi32>
  %cp = tt.addptr %pcs, %offs : tensor<16x16x!tt.ptr<i32>>, tensor<16x16xi32>
  %a = tt.load %ap : tensor<16x16x!tt.ptr<i8>>
  %c = tt.load %cp : tensor<16x16x!tt.ptr<i32>>
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %d0 = tt.dot %a, %a, %zero : tensor<16x16xi8> * tensor<16x16xi8> -> tensor<16x16xi32>
  %d = arith.addi %d0, %c : tensor<16x16xi32>
  tt.return %d : tensor<16x16xi32>
}

// Negative: a dot with another use must keep its own result; a dot whose accumulator is not
// zero already adds it; an f32 dot accumulating imprecisely (maxNumImpreciseAcc) would round
// the addend differently. All three adds stay.
// CHECK-LABEL: tt.func public @dot_add_stays
// CHECK-COUNT-3: arith.addf
tt.func public @dot_add_stays(%pa: !tt.ptr<i8>, %pc: !tt.ptr<i8>) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %offs = tt.reshape %r : tensor<256xi32> -> tensor<16x16xi32>
  %pas = tt.splat %pa : !tt.ptr<i8> -> tensor<16x16x!tt.ptr<i8>>
  %pcs = tt.splat %pc : !tt.ptr<i8> -> tensor<16x16x!tt.ptr<i8>>
  %ap = tt.addptr %pas, %offs : tensor<16x16x!tt.ptr<i8>>, tensor<16x16xi32>
  %cp = tt.addptr %pcs, %offs : tensor<16x16x!tt.ptr<i8>>, tensor<16x16xi32>
  %ai = tt.load %ap : tensor<16x16x!tt.ptr<i8>>
  %ci = tt.load %cp : tensor<16x16x!tt.ptr<i8>>
  %a = arith.sitofp %ai : tensor<16x16xi8> to tensor<16x16xf32>
  %c = arith.sitofp %ci : tensor<16x16xi8> to tensor<16x16xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %d0 = tt.dot %a, %a, %zero : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %d = arith.addf %d0, %c : tensor<16x16xf32>
  %e0 = tt.dot %a, %a, %c : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %e = arith.addf %e0, %c : tensor<16x16xf32>
  %f0 = tt.dot %a, %a, %zero {maxNumImpreciseAcc = 32 : i32} : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %f = arith.addf %f0, %c : tensor<16x16xf32>
  tt.return %d, %d0, %e, %f : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// ---- sum(x[:, :, None] * y[None, :, :], 1) -> dot(x, y) with inputPrecision = ieee (the
// default, so not printed); the expand_dims and broadcasts are left dead and erased.

// CHECK-LABEL: tt.func public @mul_reduce_as_dot
// CHECK: %[[X:.+]] = arith.sitofp %{{.+}} : tensor<16x8xi8> to tensor<16x8xf32>
// CHECK: %[[Y:.+]] = arith.sitofp %{{.+}} : tensor<8x32xi8> to tensor<8x32xf32>
// CHECK-NOT: "tt.reduce"
// CHECK: %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<16x32xf32>
// CHECK: %[[D:.+]] = tt.dot %[[X]], %[[Y]], %[[Z]] : tensor<16x8xf32> * tensor<8x32xf32> -> tensor<16x32xf32>
// CHECK-NOT: "tt.reduce"
// CHECK: tt.return %[[D]]
tt.func public @mul_reduce_as_dot(%pa: !tt.ptr<i8>, %pb: !tt.ptr<i8>) -> tensor<16x32xf32> {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %r2 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %ao = tt.reshape %r : tensor<128xi32> -> tensor<16x8xi32>
  %bo = tt.reshape %r2 : tensor<256xi32> -> tensor<8x32xi32>
  %pas = tt.splat %pa : !tt.ptr<i8> -> tensor<16x8x!tt.ptr<i8>>
  %pbs = tt.splat %pb : !tt.ptr<i8> -> tensor<8x32x!tt.ptr<i8>>
  %ap = tt.addptr %pas, %ao : tensor<16x8x!tt.ptr<i8>>, tensor<16x8xi32>
  %bp = tt.addptr %pbs, %bo : tensor<8x32x!tt.ptr<i8>>, tensor<8x32xi32>
  %ai = tt.load %ap : tensor<16x8x!tt.ptr<i8>>
  %bi = tt.load %bp : tensor<8x32x!tt.ptr<i8>>
  %a = arith.sitofp %ai : tensor<16x8xi8> to tensor<16x8xf32>
  %b = arith.sitofp %bi : tensor<8x32xi8> to tensor<8x32xf32>
  %ae = tt.expand_dims %a {axis = 2 : i32} : tensor<16x8xf32> -> tensor<16x8x1xf32>
  %ab = tt.broadcast %ae : tensor<16x8x1xf32> -> tensor<16x8x32xf32>
  %be = tt.expand_dims %b {axis = 0 : i32} : tensor<8x32xf32> -> tensor<1x8x32xf32>
  %bb = tt.broadcast %be : tensor<1x8x32xf32> -> tensor<16x8x32xf32>
  %prod = arith.mulf %ab, %bb : tensor<16x8x32xf32>
  %sum = "tt.reduce"(%prod) <{axis = 1 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    tt.reduce.return %s : f32
  }) : (tensor<16x8x32xf32>) -> tensor<16x32xf32>
  tt.return %sum : tensor<16x32xf32>
}

// Negative: M = 8 is below Triton's 16; a 64-bit addf; a body that is not a sum; a first
// factor that is not x[:, :, None] of an M x K tensor (it is stretched along axis 0 too). The
// four reductions stay (with the one that makes the last factor, five).
// CHECK-LABEL: tt.func public @mul_reduce_stays
// CHECK-NOT: tt.dot
// CHECK-COUNT-5: "tt.reduce"
// CHECK-NOT: tt.dot
tt.func public @mul_reduce_stays(%pa: !tt.ptr<i8>) -> (tensor<8x16xf32>, tensor<16x16xf64>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %o = tt.reshape %r : tensor<256xi32> -> tensor<16x16xi32>
  %pas = tt.splat %pa : !tt.ptr<i8> -> tensor<16x16x!tt.ptr<i8>>
  %ap = tt.addptr %pas, %o : tensor<16x16x!tt.ptr<i8>>, tensor<16x16xi32>
  %ai = tt.load %ap : tensor<16x16x!tt.ptr<i8>>
  %a = arith.sitofp %ai : tensor<16x16xi8> to tensor<16x16xf32>
  %a64 = arith.sitofp %ai : tensor<16x16xi8> to tensor<16x16xf64>
  %be = tt.expand_dims %a {axis = 0 : i32} : tensor<16x16xf32> -> tensor<1x16x16xf32>
  // M = 8
  %r8 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %o8 = tt.reshape %r8 : tensor<128xi32> -> tensor<8x16xi32>
  %pas8 = tt.splat %pa : !tt.ptr<i8> -> tensor<8x16x!tt.ptr<i8>>
  %ap8 = tt.addptr %pas8, %o8 : tensor<8x16x!tt.ptr<i8>>, tensor<8x16xi32>
  %ai8 = tt.load %ap8 : tensor<8x16x!tt.ptr<i8>>
  %a8 = arith.sitofp %ai8 : tensor<8x16xi8> to tensor<8x16xf32>
  %se = tt.expand_dims %a8 {axis = 2 : i32} : tensor<8x16xf32> -> tensor<8x16x1xf32>
  %sb = tt.broadcast %se : tensor<8x16x1xf32> -> tensor<8x16x16xf32>
  %tb = tt.broadcast %be : tensor<1x16x16xf32> -> tensor<8x16x16xf32>
  %sprod = arith.mulf %sb, %tb : tensor<8x16x16xf32>
  %small = "tt.reduce"(%sprod) <{axis = 1 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    tt.reduce.return %s : f32
  }) : (tensor<8x16x16xf32>) -> tensor<8x16xf32>
  // f64
  %de = tt.expand_dims %a64 {axis = 2 : i32} : tensor<16x16xf64> -> tensor<16x16x1xf64>
  %db = tt.broadcast %de : tensor<16x16x1xf64> -> tensor<16x16x16xf64>
  %ee = tt.expand_dims %a64 {axis = 0 : i32} : tensor<16x16xf64> -> tensor<1x16x16xf64>
  %eb = tt.broadcast %ee : tensor<1x16x16xf64> -> tensor<16x16x16xf64>
  %dprod = arith.mulf %db, %eb : tensor<16x16x16xf64>
  %wide = "tt.reduce"(%dprod) <{axis = 1 : i32}> ({
  ^bb0(%x: f64, %y: f64):
    %s = arith.addf %x, %y : f64
    tt.reduce.return %s : f64
  }) : (tensor<16x16x16xf64>) -> tensor<16x16xf64>
  // max, not sum
  %ae = tt.expand_dims %a {axis = 2 : i32} : tensor<16x16xf32> -> tensor<16x16x1xf32>
  %ab = tt.broadcast %ae : tensor<16x16x1xf32> -> tensor<16x16x16xf32>
  %bb = tt.broadcast %be : tensor<1x16x16xf32> -> tensor<16x16x16xf32>
  %prod = arith.mulf %ab, %bb : tensor<16x16x16xf32>
  %max = "tt.reduce"(%prod) <{axis = 1 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %s = arith.maxnumf %x, %y : f32
    tt.reduce.return %s : f32
  }) : (tensor<16x16x16xf32>) -> tensor<16x16xf32>
  // broadcast from 1 x 16 x 1: stretched along axes 0 and 2
  %row = tt.expand_dims %a {axis = 0 : i32} : tensor<16x16xf32> -> tensor<1x16x16xf32>
  %r1 = "tt.reduce"(%row) <{axis = 2 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    tt.reduce.return %s : f32
  }) : (tensor<1x16x16xf32>) -> tensor<1x16xf32>
  %re = tt.expand_dims %r1 {axis = 2 : i32} : tensor<1x16xf32> -> tensor<1x16x1xf32>
  %rb = tt.broadcast %re : tensor<1x16x1xf32> -> tensor<16x16x16xf32>
  %rprod = arith.mulf %rb, %bb : tensor<16x16x16xf32>
  %wrong = "tt.reduce"(%rprod) <{axis = 1 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    tt.reduce.return %s : f32
  }) : (tensor<16x16x16xf32>) -> tensor<16x16xf32>
  tt.return %small, %wide, %max, %wrong : tensor<8x16xf32>, tensor<16x16xf64>, tensor<16x16xf32>, tensor<16x16xf32>
}

// ---- select(c, load(p, splat(c)), o) -> load(p, splat(c), o)

// CHECK-LABEL: tt.func public @select_load
// CHECK: %[[M:.+]] = tt.splat %{{.+}} : i1 -> tensor<64xi1>
// CHECK: %[[V:.+]] = tt.load %{{[^,]+}}, %[[M]], %{{[^ ]+}} : tensor<64x!tt.ptr<f32>>
// CHECK-NOT: arith.select
// CHECK: tt.return %[[V]]
tt.func public @select_load(%p: !tt.ptr<f32>, %n: i32) -> tensor<64xf32> {
  %c10 = arith.constant 10 : i32
  %c = arith.cmpi slt, %n, %c10 : i32
  %m = tt.splat %c : i1 -> tensor<64xi1>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v = tt.load %pp, %m : tensor<64x!tt.ptr<f32>>
  %other = arith.constant dense<2.500000e+00> : tensor<64xf32>
  %s = arith.select %c, %v, %other : tensor<64xf32>
  tt.return %s : tensor<64xf32>
}

// Negative: Triton fuses only a mask that is a splat of the select's condition; a tensor
// condition used as the mask itself, or a mask from another condition, leaves both selects.
// CHECK-LABEL: tt.func public @select_load_stays
// CHECK-COUNT-2: arith.select
tt.func public @select_load_stays(%p: !tt.ptr<f32>, %n: i32, %k: i32) -> (tensor<64xf32>, tensor<64xf32>) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ns = tt.splat %n : i32 -> tensor<64xi32>
  %mask = arith.cmpi slt, %r, %ns : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %other = arith.constant dense<2.500000e+00> : tensor<64xf32>
  %v = tt.load %pp, %mask : tensor<64x!tt.ptr<f32>>
  %s = arith.select %mask, %v, %other : tensor<64xi1>, tensor<64xf32>
  %c10 = arith.constant 10 : i32
  %c = arith.cmpi slt, %n, %c10 : i32
  %d = arith.cmpi slt, %k, %c10 : i32
  %dm = tt.splat %d : i1 -> tensor<64xi1>
  %w = tt.load %pp, %dm : tensor<64x!tt.ptr<f32>>
  %t = arith.select %c, %w, %other : tensor<64xf32>
  tt.return %s, %t : tensor<64xf32>, tensor<64xf32>
}

// ---- addptr chains (shared with canonicalize)

// CHECK-LABEL: tt.func public @addptr_chain
// CHECK: %[[S:.+]] = arith.addi %arg1, %arg2 : i64
// CHECK: tt.addptr %arg0, %[[S]] : !tt.ptr<i32>, i64
// CHECK-NOT: tt.addptr
tt.func public @addptr_chain(%p: !tt.ptr<i32>, %a: i64, %b: i64) -> i32 {
  %q = tt.addptr %p, %a : !tt.ptr<i32>, i64
  %r = tt.addptr %q, %b : !tt.ptr<i32>, i64
  %v = tt.load %r : !tt.ptr<i32>
  tt.return %v : i32
}

// Negative: i32 offsets known only at run time could overflow when added first.
// CHECK-LABEL: tt.func public @addptr_chain_stays
// CHECK-COUNT-2: tt.addptr
// CHECK-NOT: arith.addi
tt.func public @addptr_chain_stays(%p: !tt.ptr<i32>, %a: i32, %b: i32) -> i32 {
  %q = tt.addptr %p, %a : !tt.ptr<i32>, i32
  %r = tt.addptr %q, %b : !tt.ptr<i32>, i32
  %v = tt.load %r : !tt.ptr<i32>
  tt.return %v : i32
}

// ---- a 1-D reshape read only by reductions may reorder

// CHECK-LABEL: tt.func public @reshape_before_reduce
// CHECK: tt.reshape %{{.+}} allow_reorder : tensor<8x8xi32> -> tensor<64xi32>
// CHECK: tt.reshape %{{.+}} : tensor<8x8xi32> -> tensor<64xi32>
tt.func public @reshape_before_reduce(%p: !tt.ptr<i32>) -> (i32, tensor<64xi32>) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %o = tt.reshape %r : tensor<64xi32> -> tensor<8x8xi32>
  %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x8x!tt.ptr<i32>>
  %pp = tt.addptr %ps, %o : tensor<8x8x!tt.ptr<i32>>, tensor<8x8xi32>
  %v = tt.load %pp : tensor<8x8x!tt.ptr<i32>>
  %flat = tt.reshape %v : tensor<8x8xi32> -> tensor<64xi32>
  %sum = "tt.reduce"(%flat) <{axis = 0 : i32}> ({
  ^bb0(%x: i32, %y: i32):
    %s = arith.addi %x, %y : i32
    tt.reduce.return %s : i32
  }) : (tensor<64xi32>) -> i32
  // Negative: returned too, so its order is observable; it keeps it.
  %kept = tt.reshape %v : tensor<8x8xi32> -> tensor<64xi32>
  %sum2 = "tt.reduce"(%kept) <{axis = 0 : i32}> ({
  ^bb0(%x: i32, %y: i32):
    %s = arith.addi %x, %y : i32
    tt.reduce.return %s : i32
  }) : (tensor<64xi32>) -> i32
  %total = arith.addi %sum, %sum2 : i32
  tt.return %total, %kept : i32, tensor<64xi32>
}

// ---- elementwise ops before splats and broadcasts

// An op on splats is the scalar op, splat; an op on broadcasts of one shape (and splats) is
// computed on that shape and broadcast.
// CHECK-LABEL: tt.func public @elementwise_before_broadcast
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[S:.+]] = arith.addf %arg1, %[[ONE]] : f32
// CHECK: %[[SS:.+]] = tt.splat %[[S]] : f32 -> tensor<8x16xf32>
// CHECK: %[[Y:.+]] = tt.splat %arg1 : f32 -> tensor<1x16xf32>
// CHECK: %[[M:.+]] = arith.mulf %{{[^,]+}}, %[[Y]] : tensor<1x16xf32>
// CHECK: %[[E:.+]] = math.exp %[[M]] : tensor<1x16xf32>
// CHECK: %[[B:.+]] = tt.broadcast %[[E]] : tensor<1x16xf32> -> tensor<8x16xf32>
// CHECK: tt.return %[[SS]], %[[B]]
tt.func public @elementwise_before_broadcast(%p: !tt.ptr<f32>, %y: f32) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %ys = tt.splat %y : f32 -> tensor<8x16xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<8x16xf32>
  %s = arith.addf %ys, %one : tensor<8x16xf32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %x = tt.load %pp : tensor<16x!tt.ptr<f32>>
  %xe = tt.expand_dims %x {axis = 0 : i32} : tensor<16xf32> -> tensor<1x16xf32>
  %xb = tt.broadcast %xe : tensor<1x16xf32> -> tensor<8x16xf32>
  %m = arith.mulf %xb, %ys : tensor<8x16xf32>
  %e = math.exp %m : tensor<8x16xf32>
  tt.return %s, %e : tensor<8x16xf32>, tensor<8x16xf32>
}

// Negative: broadcasts from different shapes (a row and a column) cannot share one small
// shape, and an op with an operand that is neither a splat nor a broadcast stays wide.
// CHECK-LABEL: tt.func public @elementwise_stays_wide
// CHECK: arith.addf %{{.+}}, %{{.+}} : tensor<8x16xf32>
// CHECK: arith.mulf %{{.+}}, %{{.+}} : tensor<16xf32>
tt.func public @elementwise_stays_wide(%p: !tt.ptr<f32>, %y: f32) -> (tensor<8x16xf32>, tensor<16xf32>) {
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %x = tt.load %pp : tensor<16x!tt.ptr<f32>>
  %row = tt.expand_dims %x {axis = 0 : i32} : tensor<16xf32> -> tensor<1x16xf32>
  %rb = tt.broadcast %row : tensor<1x16xf32> -> tensor<8x16xf32>
  %c8 = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ps8 = tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %pp8 = tt.addptr %ps8, %c8 : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  %z = tt.load %pp8 : tensor<8x!tt.ptr<f32>>
  %col = tt.expand_dims %z {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
  %cb = tt.broadcast %col : tensor<8x1xf32> -> tensor<8x16xf32>
  %sum = arith.addf %rb, %cb : tensor<8x16xf32>
  %ys = tt.splat %y : f32 -> tensor<16xf32>
  %w = arith.mulf %x, %ys : tensor<16xf32>
  tt.return %sum, %w : tensor<8x16xf32>, tensor<16xf32>
}
