// RUN: naiad-opt %s --split-input-file --verify-diagnostics --no-locations > /dev/null

// The verifier's errors, one rule each: the message and the line it points at.
// Elementwise integer ops take and give one type.
tt.func @a(%x: i32, %y: i64) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %a = "arith.addi"(%x, %y) : (i32, i64) -> i32
  tt.return
}

// -----

// A reshape keeps the number of elements.
tt.func @b(%x: tensor<16xi32>) {
  // expected-error @+1 {{number of src and dst elements of reshape must be the same}}
  %a = tt.reshape %x : tensor<16xi32> -> tensor<8xi32>
  tt.return
}

// -----

// Offsetting a scalar pointer by a tensor gives a tensor of pointers.
tt.func @c(%p: !tt.ptr<f32>, %o: tensor<16xi32>) {
  // expected-error @+1 {{if an operand is non-scalar, then all results must be non-scalar}}
  %a = "tt.addptr"(%p, %o) : (!tt.ptr<f32>, tensor<16xi32>) -> !tt.ptr<f32>
  tt.return
}

// -----

// Blocks have a power-of-two number of elements.
tt.func @d() {
  // expected-error @+1 {{Number of elements must be power-of-two}}
  %a = "tt.make_range"() <{start = 0 : i32, end = 12 : i32}> : () -> tensor<12xi32>
  tt.return
}

// -----

// Integer comparisons compare integers.
tt.func @e(%x: f32) {
  // expected-error @+1 {{must be signless-integer-like, but got 'f32'}}
  %a = "arith.cmpi"(%x, %x) <{predicate = 0 : i64}> : (f32, f32) -> i1
  tt.return
}

// -----

// Elementwise float ops take operands of one shape.
tt.func @f(%x: tensor<16xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %a = "arith.addf"(%x, %y) : (tensor<16xf32>, tensor<8xf32>) -> tensor<16xf32>
  tt.return
}

// -----

// A dot's result is M x N of its operands.
tt.func @g(%x: tensor<16x16xf16>, %y: tensor<16x16xf16>, %c: tensor<16x8xf32>) {
  // expected-error @+1 {{expected the output shape to be the concatenation}}
  %a = tt.dot %x, %y, %c : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x8xf32>
  tt.return
}

// -----

// A transposition's order names every dimension once.
tt.func @h(%x: tensor<16xi32>) {
  // expected-error @+1 {{order must have the same size as the rank of the operand and result}}
  %a = tt.trans %x {order = array<i32: 1, 0>} : tensor<16xi32> -> tensor<16xi32>
  tt.return
}

// -----

// expand_dims inserts a dimension within the rank.
tt.func @i(%x: tensor<16xi32>) {
  // expected-error @+1 {{invalid axis 3 for a tensor of rank 1}}
  %a = tt.expand_dims %x {axis = 3 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  tt.return
}

// -----

// A reduction's axis is one of its operand's.
tt.func @j(%x: tensor<16xf32>) {
  // expected-error @+1 {{axis 1 is out of range for a tensor of rank 1}}
  %a = "tt.reduce"(%x) <{axis = 1 : i32}> ({
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tt.reduce.return %s : f32
  }) : (tensor<16xf32>) -> f32
  tt.return
}

// -----

// scf.for's bounds and step have one type (the parser sees the mismatch first).
tt.func @k(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i64
  // expected-error @+1 {{expects different type than prior uses: 'i32' vs 'i64'}}
  scf.for %i = %c0 to %n step %c1 : i32 {
  }
  tt.return
}

// -----

// select's two values and its result have one type.
tt.func @l(%c: i1, %x: i32, %y: i64) {
  // expected-error @+1 {{have same type}}
  %a = "arith.select"(%c, %x, %y) : (i1, i32, i64) -> i32
  tt.return
}

// -----

// A sign extension widens.
tt.func @n(%x: i64) {
  // expected-error @+1 {{result type 'i32' must be wider than operand type 'i64'}}
  %a = "arith.extsi"(%x) : (i64) -> i32
  tt.return
}

// -----

// tt.return gives what the function returns.
tt.func @o(%x: i32) -> i32 {
  // expected-error @+1 {{has 0 operands, but enclosing function (@o) returns 1}}
  tt.return
}

// -----

// A broadcast only stretches dimensions of size 1.
tt.func @p(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{Broadcast requires the source dimension to be 1}}
  %a = tt.broadcast %x : tensor<4x8xi32> -> tensor<4x16xi32>
  tt.return
}

// -----

// A load's mask has its pointers' shape.
tt.func @q(%p: tensor<16x!tt.ptr<f32>>, %m: tensor<8xi1>) {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %a = tt.load %p, %m : tensor<16x!tt.ptr<f32>>
  tt.return
}

// -----

// A float truncation narrows.
tt.func @r(%x: f32) {
  // expected-error @+1 {{result type 'f64' must be shorter than operand type 'f32'}}
  %a = "arith.truncf"(%x) : (f32) -> f64
  tt.return
}

// -----

// A warp-specialize partition runs on a power of 2 of warps.
tt.func @ws_warps() {
  // expected-error @+1 {{partition number of warps must be a power of 2}}
  ttg.warp_specialize()
  default {
    ttg.warp_yield
  }
  partition0() num_warps(3) {
    ttg.warp_return
  } : () -> ()
  tt.return
}

// -----

// Each partition takes the captures as its arguments.
tt.func @ws_arguments(%p: !tt.ptr<i32>) {
  // expected-error @+1 {{partition #0 must take the captures' types as arguments}}
  ttg.warp_specialize(%p)
  default {
    ttg.warp_yield
  }
  partition0(%x: i32) num_warps(1) {
    ttg.warp_return
  } : (!tt.ptr<i32>) -> ()
  tt.return
}

// -----

// A partition ends with `ttg.warp_return`.
tt.func @ws_return() {
  // expected-error @+1 {{partition #0 must end with 'ttg.warp_return'}}
  ttg.warp_specialize()
  default {
    ttg.warp_yield
  }
  partition0() num_warps(1) {
    %c = arith.constant 1 : i32
  } : () -> ()
  tt.return
}

// -----

// The default region ends with `ttg.warp_yield`.
tt.func @ws_yield() {
  // expected-error @+1 {{the default region must end with 'ttg.warp_yield'}}
  ttg.warp_specialize()
  default {
    %c = arith.constant 1 : i32
  }
  partition0() num_warps(1) {
    ttg.warp_return
  } : () -> ()
  tt.return
}

// -----

// The default region yields the op's results.
tt.func @ws_results() {
  // expected-error @+1 {{the default region's 'ttg.warp_yield' must give the op's result types}}
  %r = ttg.warp_specialize()
  default {
    ttg.warp_yield
  }
  partition0() num_warps(1) {
    ttg.warp_return
  } : () -> (i32)
  tt.return
}

// -----

// Start ids, when given, are one per partition.
tt.func @ws_starts() {
  // expected-error @+1 {{'warpGroupStartIds' must have one entry per partition (1)}}
  ttg.warp_specialize() attributes {warpGroupStartIds = array<i32: 4, 8>}
  default {
    ttg.warp_yield
  }
  partition0() num_warps(1) {
    ttg.warp_return
  } : () -> ()
  tt.return
}

// -----

// One `num_warps` per partition (the generic form spells `partitionNumWarps` itself).
tt.func @ws_counts() {
  // expected-error @+1 {{has 1 partitions but 'partitionNumWarps' says otherwise}}
  "ttg.warp_specialize"() <{partitionNumWarps = array<i32: 1, 2>}> ({
    ttg.warp_yield
  }, {
    "ttg.warp_specialize.partitions"() ({
      ttg.warp_return
    }) : () -> ()
  }) : () -> ()
  tt.return
}

// -----

// A partition is isolated from above: what it reads comes through the captures.
tt.func @ws_isolated(%v: i32) {
  "ttg.warp_specialize"() <{partitionNumWarps = array<i32: 1>}> ({
    ttg.warp_yield
  }, {
    "ttg.warp_specialize.partitions"() ({
      // expected-error @+1 {{use of undeclared SSA value name '%v'}}
      %w = arith.addi %v, %v : i32
      ttg.warp_return
    }) : () -> ()
  }) : () -> ()
  tt.return
}
