// RUN: naiad-opt %s -p tritongpu-optimize-thread-locality --no-locations | filecheck %s

// A row sum the loop accumulates: 4 elements per thread along the row, 8 lanes. The row is
// viewed as 8 positions of 4 (registers only), each thread sums its 4 in the loop and carries
// its partial sums; the lanes combine them once after the loop, and the initial value last.
// CHECK: #[[VIEW:linear[0-9]*]] = #ttg.linear<{register = {{\[}}[0, 0, 1], [0, 0, 2], [16, 0, 0]], lane = {{\[}}[0, 1, 0], [0, 2, 0], [0, 4, 0], [1, 0, 0], [2, 0, 0]], warp = {{\[}}[4, 0, 0], [8, 0, 0]], block = []}>
// CHECK: #[[VIEW2:linear[0-9]*]] = #ttg.linear<{register = {{\[}}[0, 0, 1], [0, 0, 2], [0, 0, 4], [0, 0, 8], [0, 0, 16], [16, 0, 0]]
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func @sum
  // CHECK: %[[ZERO:.*]] = arith.constant dense<-0.000000e+00> : tensor<32x8xf32, #ttg.slice<{dim = 2, parent = #[[VIEW]]}>>
  // CHECK: %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (tensor<32x8xf32, #ttg.slice<{dim = 2, parent = #[[VIEW]]}>>)
  // CHECK:   %[[X:.*]] = tt.load
  // CHECK:   %[[V:.*]] = tt.reshape %[[X]] : tensor<32x32xf32, #blocked> -> tensor<32x8x4xf32, #[[VIEW]]>
  // CHECK:   %[[P:.*]] = "tt.reduce"(%[[V]]) <{axis = 2 : i32}>
  // CHECK:     arith.addf
  // CHECK:   %[[U:.*]] = arith.addf %[[ACC]], %[[P]] : tensor<32x8xf32
  // CHECK:   scf.yield %[[U]]
  // CHECK: %[[T:.*]] = "tt.reduce"(%[[LOOP]]) <{axis = 1 : i32}>
  // CHECK: %[[C:.*]] = ttg.convert_layout %[[T]] {{.*}} -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
  // CHECK: %[[F:.*]] = arith.addf %arg2, %[[C]]
  // CHECK: tt.return %[[F]]
  tt.func @sum(%p: tensor<32x32x!tt.ptr<f32>, #blocked>, %n: i32, %init: tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) : i32 {
      %x = tt.load %p : tensor<32x32x!tt.ptr<f32>, #blocked>
      %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({
      ^bb0(%a: f32, %b: f32):
        %t = arith.addf %a, %b : f32
        tt.reduce.return %t : f32
      }) : (tensor<32x32xf32, #blocked>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      %u = arith.addf %acc, %s : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      scf.yield %u : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
    }
    tt.return %r : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
  }

  // A row of 256, the layout's tile of 32 repeated 8 times: the view [32, 8 repeats, 8 lanes,
  // 4 elements] with the lanes moved first is [32, 8, 32], the last dimension all registers.
  // maxnum's neutral element is NaN; the old accumulator stays the operand it was.
  // CHECK-LABEL: tt.func @max_repeats
  // CHECK: %[[NAN:.*]] = arith.constant dense<0x7FC00000> : tensor<32x8xf32, #ttg.slice<{dim = 2, parent = #[[VIEW2]]}>>
  // CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[NAN]])
  // CHECK:   %[[R:.*]] = tt.reshape %arg0 : tensor<32x256xf32, #blocked> -> tensor<32x8x8x4xf32
  // CHECK:   %[[T:.*]] = tt.trans %[[R]] {order = array<i32: 0, 2, 1, 3>}
  // CHECK:   %[[V:.*]] = tt.reshape %[[T]] {{.*}} -> tensor<32x8x32xf32, #[[VIEW2]]>
  // CHECK:   %[[P:.*]] = "tt.reduce"(%[[V]]) <{axis = 2 : i32}>
  // CHECK:   arith.maxnumf %[[P]], %[[ACC]]
  // CHECK: "tt.reduce"({{.*}}) <{axis = 1 : i32}>
  // CHECK: arith.maxnumf %{{.*}}, %cst
  tt.func @max_repeats(%x: tensor<32x256xf32, #blocked>, %n: i32) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = arith.constant dense<0xFF800000> : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) : i32 {
      %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({
      ^bb0(%a: f32, %b: f32):
        %t = arith.maxnumf %a, %b : f32
        tt.reduce.return %t : f32
      }) : (tensor<32x256xf32, #blocked>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      %u = arith.maxnumf %s, %acc : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      scf.yield %u : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
    }
    tt.return %r : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
  }

  // Left alone: the loop also stores the running sum, which the thread's partial sums are not.
  // CHECK-LABEL: tt.func @accumulator_read_in_the_loop
  // CHECK-NOT: tt.reshape
  // CHECK: "tt.reduce"(%{{.*}}) <{axis = 1 : i32}>
  // CHECK-NOT: "tt.reduce"
  // CHECK: tt.return
  tt.func @accumulator_read_in_the_loop(%x: tensor<32x32xf32, #blocked>, %q: tensor<32x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #blocked}>>, %n: i32, %init: tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) : i32 {
      tt.store %q, %acc : tensor<32x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #blocked}>>
      %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({
      ^bb0(%a: f32, %b: f32):
        %t = arith.addf %a, %b : f32
        tt.reduce.return %t : f32
      }) : (tensor<32x32xf32, #blocked>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      %u = arith.addf %acc, %s : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      scf.yield %u : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
    }
    tt.return %r : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
  }

  // Left alone: a combine region that is not an op of its two arguments (`a + a`).
  // CHECK-LABEL: tt.func @combine_of_one_argument
  // CHECK-NOT: tt.reshape
  // CHECK: "tt.reduce"(%arg0) <{axis = 1 : i32}>
  // CHECK-NOT: "tt.reduce"
  // CHECK: tt.return
  tt.func @combine_of_one_argument(%x: tensor<32x32xf32, #blocked>, %n: i32, %init: tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) : i32 {
      %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({
      ^bb0(%a: f32, %b: f32):
        %t = arith.addf %a, %a : f32
        tt.reduce.return %t : f32
      }) : (tensor<32x32xf32, #blocked>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      %u = arith.addf %acc, %s : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      scf.yield %u : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
    }
    tt.return %r : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
  }

  // Left alone: a column reduction (not the fastest dimension) and a combine op that differs
  // from the reduction's.
  // CHECK-LABEL: tt.func @not_rewritten
  // CHECK-NOT: tt.reshape
  // CHECK: "tt.reduce"(%arg0) <{axis = 0 : i32}>
  // CHECK: "tt.reduce"(%arg0) <{axis = 1 : i32}>
  // CHECK-NOT: "tt.reduce"
  // CHECK: tt.return
  tt.func @not_rewritten(%x: tensor<32x32xf32, #blocked>, %n: i32, %a0: tensor<32xf32, #ttg.slice<{dim = 0, parent = #blocked}>>, %b0: tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) -> (tensor<32xf32, #ttg.slice<{dim = 0, parent = #blocked}>>, tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %a0, %b = %b0) -> (tensor<32xf32, #ttg.slice<{dim = 0, parent = #blocked}>>, tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) : i32 {
      %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
      ^bb0(%l: f32, %m: f32):
        %t = arith.addf %l, %m : f32
        tt.reduce.return %t : f32
      }) : (tensor<32x32xf32, #blocked>) -> tensor<32xf32, #ttg.slice<{dim = 0, parent = #blocked}>>
      %u = arith.addf %a, %s : tensor<32xf32, #ttg.slice<{dim = 0, parent = #blocked}>>
      %w = "tt.reduce"(%x) <{axis = 1 : i32}> ({
      ^bb0(%l: f32, %m: f32):
        %t = arith.maxnumf %l, %m : f32
        tt.reduce.return %t : f32
      }) : (tensor<32x32xf32, #blocked>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      %v = arith.addf %b, %w : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      scf.yield %u, %v : tensor<32xf32, #ttg.slice<{dim = 0, parent = #blocked}>>, tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
    }
    tt.return %r#0, %r#1 : tensor<32xf32, #ttg.slice<{dim = 0, parent = #blocked}>>, tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
  }
}
