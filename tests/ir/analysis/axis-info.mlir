// RUN: naiad-opt %s -p test-print-axis-info --no-locations | filecheck %s

// Every integer or pointer result gets axis_info.{constancy,contiguity,divisibility} (one
// number per dimension; 4611686018427387904 = 2^62 is what divides 0), a known constant
// axis_info.constant_value; block arguments are listed on the op that holds them
// (axis_info.args.*). Pointer divisibility counts bytes.

// Tutorial 01: pid * 1024 + arange(0, 1024) is one run of 1024 starting at a multiple of 1024;
// through a 16-byte aligned f32 pointer, 16-byte aligned runs of 1024 (ld.global.v4); the
// mask `offs < n` (n % 16 == 0) flips at most every 16 lanes.
// CHECK-LABEL: tt.func public @vector_add
// CHECK-SAME: axis_info.args.divisibility = [array<i64: 16>, array<i64: 16>]
// CHECK: tt.get_program_id x {axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 1>}
// CHECK: arith.muli {{.*}}axis_info.divisibility = array<i64: 1024>}
// CHECK: tt.make_range {axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1024>, axis_info.divisibility = array<i64: 4611686018427387904>
// CHECK: tt.splat {{.*}}{axis_info.constancy = array<i64: 1024>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 1024>}
// CHECK: arith.addi {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1024>, axis_info.divisibility = array<i64: 1024>}
// CHECK: arith.cmpi slt, {{.*}}{axis_info.constancy = array<i64: 16>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 1>}
// CHECK: %[[PTRS:.+]] = tt.addptr {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1024>, axis_info.divisibility = array<i64: 16>}
// CHECK: tt.load %[[PTRS]]
tt.func public @vector_add(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
  %c1024 = arith.constant 1024 : i32
  %pid = tt.get_program_id x : i32
  %start = arith.muli %pid, %c1024 : i32
  %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %starts = tt.splat %start : i32 -> tensor<1024xi32>
  %offs = arith.addi %starts, %range : tensor<1024xi32>
  %ns = tt.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %ptrs = tt.addptr %xs, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %v = tt.load %ptrs, %mask : tensor<1024x!tt.ptr<f32>>
  tt.store %ptrs, %v, %mask : tensor<1024x!tt.ptr<f32>>
  tt.return
}

// Negative cases: without the %16 specialization nothing is aligned (divisibility 1), and the
// sum or difference of two runs is no run (x + x climbs by 2, x - x is constant).
// CHECK-LABEL: tt.func public @unaligned
// CHECK-SAME: axis_info.args.divisibility = [array<i64: 1>, array<i64: 1>, array<i64: 1>]
// CHECK: arith.muli {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 1>}
// CHECK: tt.addptr {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 128>, axis_info.divisibility = array<i64: 1>}
// CHECK: arith.addi {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 2>}
// CHECK: arith.subi {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 4611686018427387904>}
tt.func public @unaligned(%x: !tt.ptr<f16>, %n: i32, %stride: i32) {
  %range = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %row = arith.muli %n, %stride : i32
  %xs = tt.splat %x : !tt.ptr<f16> -> tensor<128x!tt.ptr<f16>>
  %base = tt.addptr %xs, %range : tensor<128x!tt.ptr<f16>>, tensor<128xi32>
  %twice = arith.addi %range, %range : tensor<128xi32>
  %diff = arith.subi %range, %range : tensor<128xi32>
  tt.return
}

// tl.multiple_of / tl.max_contiguous become tt.divisibility / tt.contiguity on the op: they
// replace what the rule found (8 from the sum below becomes 64).
// CHECK-LABEL: tt.func public @hints
// CHECK: arith.muli {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 8>, tt.divisibility = dense<8>
// CHECK: arith.addi {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 64>, axis_info.divisibility = array<i64: 8>} :
// CHECK: arith.addi {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 64>, axis_info.divisibility = array<i64: 64>, tt.contiguity
// CHECK: tt.addptr {{.*}}axis_info.contiguity = array<i64: 64>, axis_info.divisibility = array<i64: 16>}
tt.func public @hints(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %stride: i32) {
  %pid = tt.get_program_id x : i32
  %start = arith.muli %pid, %stride {tt.divisibility = dense<8> : tensor<1xi32>} : i32
  %range = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %starts = tt.splat %start : i32 -> tensor<64xi32>
  %offs = arith.addi %starts, %range : tensor<64xi32>
  %hinted = arith.addi %starts, %range {tt.contiguity = dense<64> : tensor<1xi32>, tt.divisibility = dense<64> : tensor<1xi32>} : tensor<64xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %p = tt.addptr %xs, %hinted : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  tt.return
}

// offs_m[:, None] * stride + offs_n[None, :], stride % 16 == 0: rows are runs of 32 starting
// at multiples of 16 elements; a new size-1 dimension of a run has divisibility 1; broadcast
// makes stretched dimensions constant. tt.trans permutes the facts.
// CHECK-LABEL: tt.func public @tile_2d
// CHECK: tt.expand_dims {{.*}}{axis = 1 : i32, axis_info.constancy = array<i64: 1, 1>, axis_info.contiguity = array<i64: 64, 1>, axis_info.divisibility = array<i64: 4611686018427387904, 1>}
// CHECK: arith.muli {{.*}}{axis_info.constancy = array<i64: 1, 1>, axis_info.contiguity = array<i64: 1, 1>, axis_info.divisibility = array<i64: 16, 16>}
// CHECK: tt.broadcast {{.*}}{axis_info.constancy = array<i64: 1, 32>, axis_info.contiguity = array<i64: 1, 1>, axis_info.divisibility = array<i64: 16, 16>}
// CHECK: tt.broadcast {{.*}}{axis_info.constancy = array<i64: 64, 1>, axis_info.contiguity = array<i64: 1, 32>, axis_info.divisibility = array<i64: 1, 4611686018427387904>}
// CHECK: arith.addi {{.*}}{axis_info.constancy = array<i64: 1, 1>, axis_info.contiguity = array<i64: 1, 32>, axis_info.divisibility = array<i64: 1, 16>}
// CHECK: tt.addptr {{.*}}{axis_info.constancy = array<i64: 1, 1>, axis_info.contiguity = array<i64: 1, 32>, axis_info.divisibility = array<i64: 2, 16>}
// CHECK: tt.trans {{.*}}{axis_info.constancy = array<i64: 1, 1>, axis_info.contiguity = array<i64: 32, 1>, axis_info.divisibility = array<i64: 16, 2>, order
tt.func public @tile_2d(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %stride: i32 {tt.divisibility = 16 : i32}) {
  %rm = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rn = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %m = tt.expand_dims %rm {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %strides = tt.splat %stride : i32 -> tensor<64x1xi32>
  %rows = arith.muli %m, %strides : tensor<64x1xi32>
  %n = tt.expand_dims %rn {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %rowsb = tt.broadcast %rows : tensor<64x1xi32> -> tensor<64x32xi32>
  %nb = tt.broadcast %n : tensor<1x32xi32> -> tensor<64x32xi32>
  %offs = arith.addi %rowsb, %nb : tensor<64x32xi32>
  %as = tt.splat %a : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>>
  %ptrs = tt.addptr %as, %offs : tensor<64x32x!tt.ptr<f16>>, tensor<64x32xi32>
  %t = tt.trans %ptrs {order = array<i32: 1, 0>} : tensor<64x32x!tt.ptr<f16>> -> tensor<32x64x!tt.ptr<f16>>
  tt.return
}

// Loop-carried pointers join their initial value with every yielded one, to a fixed point: a
// step of 64 f16 (128 bytes) keeps 16-byte alignment, a step of 1 (2 bytes) does not. The
// induction variable 0, 32, 64, ... is divisible by 32.
// CHECK-LABEL: tt.func public @loop
// CHECK: tt.addptr {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 64>, axis_info.divisibility = array<i64: 16>}
// CHECK: scf.for
// CHECK: tt.addptr {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 64>, axis_info.divisibility = array<i64: 16>}
// CHECK: tt.addptr {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 64>, axis_info.divisibility = array<i64: 2>}
// CHECK: } {axis_info.args.constancy = [array<i64: 1>, array<i64: 1>, array<i64: 1>], axis_info.args.contiguity = [array<i64: 1>, array<i64: 64>, array<i64: 64>], axis_info.args.divisibility = [array<i64: 32>, array<i64: 16>, array<i64: 2>], axis_info.constancy = [array<i64: 1>, array<i64: 1>], axis_info.contiguity = [array<i64: 64>, array<i64: 64>], axis_info.divisibility = [array<i64: 16>, array<i64: 2>]}
tt.func public @loop(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant dense<64> : tensor<64xi32>
  %ones = arith.constant dense<1> : tensor<64xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %as = tt.splat %a : !tt.ptr<f16> -> tensor<64x!tt.ptr<f16>>
  %p0 = tt.addptr %as, %r : tensor<64x!tt.ptr<f16>>, tensor<64xi32>
  %res:2 = scf.for %i = %c0 to %k step %c32 iter_args(%p = %p0, %q = %p0) -> (tensor<64x!tt.ptr<f16>>, tensor<64x!tt.ptr<f16>>) : i32 {
    %next = tt.addptr %p, %c64 : tensor<64x!tt.ptr<f16>>, tensor<64xi32>
    %odd = tt.addptr %q, %ones : tensor<64x!tt.ptr<f16>>, tensor<64xi32>
    scf.yield %next, %odd : tensor<64x!tt.ptr<f16>>, tensor<64x!tt.ptr<f16>>
  }
  tt.return
}

// Division and remainder of a whole run by a constant: arange(128) // 4 is constant over 4,
// arange(128) % 16 runs over 16, % 3 keeps nothing (negative case), % 1 is the constant 0.
// A scalar x (x % 16 == 0): x / 4 and x >> 4 shift the divisibility, x << 4 multiplies it.
// CHECK-LABEL: tt.func public @div_rem
// CHECK: arith.divsi {{.*}}{axis_info.constancy = array<i64: 4>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 1>}
// CHECK: arith.remsi {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 16>, axis_info.divisibility = array<i64: 16>}
// CHECK: arith.remsi {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 1>}
// CHECK: arith.remsi {{.*}}{axis_info.constancy = array<i64: 128>, axis_info.constant_value = 0 : i64,
// CHECK: arith.divsi {{.*}}axis_info.divisibility = array<i64: 4>} : i32
// CHECK: arith.shli {{.*}}axis_info.divisibility = array<i64: 256>} : i32
// CHECK: arith.shrui {{.*}}axis_info.divisibility = array<i64: 1>} : i32
tt.func public @div_rem(%x: i32 {tt.divisibility = 16 : i32}) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %c4 = arith.constant dense<4> : tensor<128xi32>
  %c16 = arith.constant dense<16> : tensor<128xi32>
  %c3 = arith.constant dense<3> : tensor<128xi32>
  %c1 = arith.constant dense<1> : tensor<128xi32>
  %q = arith.divsi %r, %c4 : tensor<128xi32>
  %m = arith.remsi %r, %c16 : tensor<128xi32>
  %m3 = arith.remsi %r, %c3 : tensor<128xi32>
  %m1 = arith.remsi %r, %c1 : tensor<128xi32>
  %s4 = arith.constant 4 : i32
  %xq = arith.divsi %x, %s4 : i32
  %sh = arith.shli %x, %s4 : i32
  %sr = arith.shrui %x, %s4 : i32
  tt.return
}

// select: a scalar condition picks a whole side (the join: runs of 128 from 0 or from 64); a
// tensor condition constant over 32 lanes cuts the runs to 32; a constant one picks its side.
// CHECK-LABEL: tt.func public @select
// CHECK: arith.select %arg0, {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 128>, axis_info.divisibility = array<i64: 64>}
// CHECK: arith.cmpi slt, {{.*}}{axis_info.constancy = array<i64: 32>,
// CHECK: arith.select {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 32>, axis_info.divisibility = array<i64: 32>} : tensor<128xi1>
// CHECK: arith.select %true, {{.*}}{axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 128>, axis_info.divisibility = array<i64: 4611686018427387904>}
tt.func public @select(%c: i1) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %c64 = arith.constant dense<64> : tensor<128xi32>
  %shifted = arith.addi %r, %c64 : tensor<128xi32>
  %scalar = arith.select %c, %r, %shifted : tensor<128xi32>
  %c32 = arith.constant dense<32> : tensor<128xi32>
  %lt = arith.cmpi slt, %r, %c32 : tensor<128xi32>
  %tensor = arith.select %lt, %r, %shifted : tensor<128xi1>, tensor<128xi32>
  %true = arith.constant true
  %const = arith.select %true, %r, %shifted : tensor<128xi32>
  tt.return
}

// Joins where control flow merges: scf.if results (8 or 48: divisible by 8) and block
// arguments of cf branches (x % 16 == 0 or that: divisible by 8).
// CHECK-LABEL: tt.func public @branches
// CHECK-SAME: axis_info.args.divisibility = [array<i64: 16>, array<i64: 1>, array<i64: 8>]
// CHECK: scf.if
// CHECK: } {axis_info.constancy = array<i64: 1>, axis_info.contiguity = array<i64: 1>, axis_info.divisibility = array<i64: 8>}
tt.func public @branches(%x: i32 {tt.divisibility = 16 : i32}, %c: i1) -> i32 {
  %c8 = arith.constant 8 : i32
  %c48 = arith.constant 48 : i32
  %y = scf.if %c -> (i32) {
    scf.yield %c8 : i32
  } else {
    scf.yield %c48 : i32
  }
  cf.cond_br %c, ^bb1(%x : i32), ^bb1(%y : i32)
^bb1(%z: i32):
  tt.return %z : i32
}
