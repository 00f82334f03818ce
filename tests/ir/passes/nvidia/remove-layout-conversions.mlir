// RUN: naiad-opt %s -p remove-layout-conversions --no-locations | filecheck %s

// CHECK-DAG: #[[FOUR:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[ONE:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[WIDE:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
// CHECK-DAG: #[[TALL:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked2 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked3 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked4 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
#blocked5 = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // What coalesce leaves of `y = x + 1`: the load's layout flows forward to the add and the
  // store; the pointers (a range, splats, pointer arithmetic) are recomputed in it.
  // CHECK-LABEL: tt.func @add_one
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.make_range {{.*}} : tensor<1024xi32, #[[FOUR]]>
  // CHECK: %[[V:.*]] = tt.load {{.*}} : tensor<1024x!tt.ptr<f32>, #[[FOUR]]>
  // CHECK: %[[S:.*]] = arith.addf %[[V]], %{{.*}} : tensor<1024xf32, #[[FOUR]]>
  // CHECK: tt.store %{{.*}}, %[[S]] : tensor<1024x!tt.ptr<f32>, #[[FOUR]]>
  tt.func @add_one(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %one = arith.constant dense<1.0> : tensor<1024xf32, #blocked>
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %xp = tt.addptr %xs, %r : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %xp4 = ttg.convert_layout %xp : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<1024x!tt.ptr<f32>, #blocked1>
    %v4 = tt.load %xp4 : tensor<1024x!tt.ptr<f32>, #blocked1>
    %v = ttg.convert_layout %v4 : tensor<1024xf32, #blocked1> -> tensor<1024xf32, #blocked>
    %s = arith.addf %v, %one : tensor<1024xf32, #blocked>
    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %yp = tt.addptr %ys, %r : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %yp4 = ttg.convert_layout %yp : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<1024x!tt.ptr<f32>, #blocked1>
    %s4 = ttg.convert_layout %s : tensor<1024xf32, #blocked> -> tensor<1024xf32, #blocked1>
    tt.store %yp4, %s4 : tensor<1024x!tt.ptr<f32>, #blocked1>
    tt.return
  }

  // Two conversions in a row are one; a conversion back to where it started is none.
  // CHECK-LABEL: tt.func @chain
  // CHECK-NEXT: tt.return %arg0
  tt.func @chain(%a: tensor<1024xf32, #blocked>) -> tensor<1024xf32, #blocked> {
    %b = ttg.convert_layout %a : tensor<1024xf32, #blocked> -> tensor<1024xf32, #blocked1>
    %c = ttg.convert_layout %b : tensor<1024xf32, #blocked1> -> tensor<1024xf32, #blocked>
    tt.return %c : tensor<1024xf32, #blocked>
  }

  // A row sum is a slice of the 2-D layout; storing it from a 1-D layout needs its conversion:
  // a reduction is not recomputed when it has another use (here, the function's result).
  // CHECK-LABEL: tt.func @row_sum
  // CHECK: %[[SUM:.*]] = "tt.reduce"
  // CHECK: ttg.convert_layout %[[SUM]] : tensor<32xf32, #ttg.slice<{dim = 1, parent = #{{.*}}}>> -> tensor<32xf32, #[[FOUR]]>
  tt.func @row_sum(%t: tensor<32x64xf32, #blocked2>, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked2}>> {
    %s = "tt.reduce"(%t) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<32x64xf32, #blocked2>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked2}>>
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #blocked1>
    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>, #blocked1>
    %yp = tt.addptr %ys, %r : tensor<32x!tt.ptr<f32>, #blocked1>, tensor<32xi32, #blocked1>
    %s1 = ttg.convert_layout %s : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked2}>> -> tensor<32xf32, #blocked1>
    tt.store %yp, %s1 : tensor<32x!tt.ptr<f32>, #blocked1>
    tt.return %s : tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked2}>>
  }

  // A pointer tensor the loop carries takes its load's layout: its initial value is converted
  // before the loop (here recomputed in the new layout: a splat and a range), it is advanced in
  // the new layout inside the loop, and converted back after it for a reader that keeps the old
  // one (the function's result).
  // CHECK-LABEL: tt.func @carried_pointers
  // CHECK: %[[P0:.*]] = tt.addptr %{{.*}} : tensor<1024x!tt.ptr<f32>, #[[FOUR]]>, tensor<1024xi32, #[[FOUR]]>
  // CHECK: %[[LOOP:.*]]:2 = scf.for {{.*}} iter_args(%[[P:.*]] = %[[P0]], %{{.*}} = %{{.*}}) -> (tensor<1024x!tt.ptr<f32>, #[[FOUR]]>, tensor<1024xf32, #[[FOUR]]>)
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.load %[[P]] : tensor<1024x!tt.ptr<f32>, #[[FOUR]]>
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.addptr %[[P]], %{{.*}} : tensor<1024x!tt.ptr<f32>, #[[FOUR]]>, tensor<1024xi32, #[[FOUR]]>
  // CHECK-NOT: ttg.convert_layout
  // CHECK: scf.yield
  // CHECK: ttg.convert_layout %[[LOOP]]#0 : tensor<1024x!tt.ptr<f32>, #[[FOUR]]> -> tensor<1024x!tt.ptr<f32>, #[[ONE]]>
  tt.func @carried_pointers(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) -> tensor<1024x!tt.ptr<f32>, #blocked> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %step = arith.constant dense<1024> : tensor<1024xi32, #blocked>
    %zero = arith.constant dense<0.0> : tensor<1024xf32, #blocked1>
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
    %xp = tt.addptr %xs, %r : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %out:2 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %xp, %acc = %zero) -> (tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xf32, #blocked1>) : i32 {
      %p4 = ttg.convert_layout %p : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<1024x!tt.ptr<f32>, #blocked1>
      %v = tt.load %p4 : tensor<1024x!tt.ptr<f32>, #blocked1>
      %sum = arith.addf %acc, %v : tensor<1024xf32, #blocked1>
      %next = tt.addptr %p, %step : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
      scf.yield %next, %sum : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xf32, #blocked1>
    }
    %yp = tt.addptr %xs, %r : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %yp4 = ttg.convert_layout %yp : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<1024x!tt.ptr<f32>, #blocked1>
    tt.store %yp4, %out#1 : tensor<1024x!tt.ptr<f32>, #blocked1>
    tt.return %out#0 : tensor<1024x!tt.ptr<f32>, #blocked>
  }
  // Offsets made in a branch taken where a tile starts and carried to the steps after it (a
  // fused persistent loop's shape): the branch yields them in the layout their reader wants
  // (a row's slice), both blocks recomputing or passing them on, the loop carries them so, and
  // the step reads them without a conversion.
  // CHECK-LABEL: tt.func @offsets_through_a_branch
  // CHECK: scf.for {{.*}} -> (tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked2}>>)
  // CHECK: scf.if {{.*}} -> (tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked2}>>)
  // CHECK: arith.select {{.*}} : tensor<32xi1, #ttg.slice<{dim = 1, parent = #blocked2}>>, tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked2}>>
  // CHECK: } else {
  // CHECK-NEXT: scf.yield %{{.*}} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked2}>>
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.expand_dims
  // CHECK-NOT: ttg.convert_layout
  // CHECK: tt.return
  tt.func @offsets_through_a_branch(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32, %m: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %undefined = ub.poison : tensor<32xi32, #blocked>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<32x4x!tt.ptr<f32>, #blocked2>
    %out = scf.for %t = %c0 to %n step %c1 iter_args(%offs = %undefined) -> (tensor<32xi32, #blocked>) : i32 {
      %k = arith.remsi %t, %c4 : i32
      %first = arith.cmpi eq, %k, %c0 : i32
      %now = scf.if %first -> (tensor<32xi32, #blocked>) {
        %start = arith.muli %t, %m : i32
        %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #blocked>
        %starts = tt.splat %start : i32 -> tensor<32xi32, #blocked>
        %o = arith.addi %starts, %r : tensor<32xi32, #blocked>
        %ms = tt.splat %m : i32 -> tensor<32xi32, #blocked>
        %in = arith.cmpi slt, %o, %ms : tensor<32xi32, #blocked>
        %zeros = arith.constant dense<0> : tensor<32xi32, #blocked>
        %o2 = arith.select %in, %o, %zeros : tensor<32xi1, #blocked>, tensor<32xi32, #blocked>
        scf.yield %o2 : tensor<32xi32, #blocked>
      } else {
        scf.yield %offs : tensor<32xi32, #blocked>
      }
      %rows = ttg.convert_layout %now : tensor<32xi32, #blocked> -> tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked2}>>
      %e = tt.expand_dims %rows {axis = 1 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked2}>> -> tensor<32x1xi32, #blocked2>
      %eb = tt.broadcast %e : tensor<32x1xi32, #blocked2> -> tensor<32x4xi32, #blocked2>
      %p = tt.addptr %xs, %eb : tensor<32x4x!tt.ptr<f32>, #blocked2>, tensor<32x4xi32, #blocked2>
      %v = tt.load %p : tensor<32x4x!tt.ptr<f32>, #blocked2>
      %w = arith.addf %v, %v : tensor<32x4xf32, #blocked2>
      tt.store %p, %w : tensor<32x4x!tt.ptr<f32>, #blocked2>
      scf.yield %now : tensor<32xi32, #blocked>
    }
    tt.return
  }
  // A buffer stores an accumulator in its own layout (stmatrix on sm_90): the conversion a
  // chained wgmma's B went through is gone.
  // CHECK-LABEL: tt.func @alloc_accumulator
  // CHECK-NOT: ttg.convert_layout
  // CHECK: ttg.local_alloc %arg0 : (tensor<64x64xf16, #mma>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
  tt.func @alloc_accumulator(%acc: tensor<64x64xf16, #mma>) {
    %b = ttg.convert_layout %acc : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked3>
    %buffer = ttg.local_alloc %b : (tensor<64x64xf16, #blocked3>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    tt.return
  }

  // Any other source keeps its conversion: the buffer's layout was chosen for its vectors.
  // CHECK-LABEL: tt.func @alloc_blocked
  // CHECK: %[[B:.*]] = ttg.convert_layout %arg0 : tensor<64x64xf16, #blocked2> -> tensor<64x64xf16, #[[EIGHT:blocked[0-9]*]]>
  // CHECK: ttg.local_alloc %[[B]] : (tensor<64x64xf16, #[[EIGHT]]>)
  tt.func @alloc_blocked(%x: tensor<64x64xf16, #blocked2>) {
    %b = ttg.convert_layout %x : tensor<64x64xf16, #blocked2> -> tensor<64x64xf16, #blocked3>
    %buffer = ttg.local_alloc %b : (tensor<64x64xf16, #blocked3>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    tt.return
  }

  // A loop's initial value that its own producer's layout reaches (a reduction of a load in
  // #blocked5), where the loop's argument keeps the body's (#blocked4): the initial value is
  // converted to the argument's layout. It was left in its producer's, and the loop's types
  // disagreed (a Triton scan whose carry starts from a reduced tile).
  // CHECK-LABEL: tt.func @init_from_another_anchor
  // CHECK: %[[R:.*]] = "tt.reduce"
  // CHECK: %[[I:.*]] = ttg.convert_layout %[[R]] : tensor<4xf32, #ttg.slice<{dim = 1, parent = #[[TALL]]}>> -> tensor<4xf32, #ttg.slice<{dim = 1, parent = #[[WIDE]]}>>
  // CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[I]]) -> (tensor<4xf32, #ttg.slice<{dim = 1, parent = #[[WIDE]]}>>)
  tt.func @init_from_another_anchor(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %t: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
    %tp = tt.splat %t : !tt.ptr<f32> -> tensor<4x64x!tt.ptr<f32>, #blocked5>
    %tv = tt.load %tp : tensor<4x64x!tt.ptr<f32>, #blocked5>
    %r = "tt.reduce"(%tv) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %ab = arith.addf %a, %b : f32
      tt.reduce.return %ab : f32
    }) : (tensor<4x64xf32, #blocked5>) -> tensor<4xf32, #ttg.slice<{dim = 1, parent = #blocked5}>>
    %init = ttg.convert_layout %r : tensor<4xf32, #ttg.slice<{dim = 1, parent = #blocked5}>> -> tensor<4xf32, #ttg.slice<{dim = 1, parent = #blocked4}>>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %xp = tt.splat %x : !tt.ptr<f32> -> tensor<4x1024x!tt.ptr<f32>, #blocked4>
    %out = scf.for %i = %c0 to %n step %c1 iter_args(%carry = %init) -> (tensor<4xf32, #ttg.slice<{dim = 1, parent = #blocked4}>>) : i32 {
      %v = tt.load %xp : tensor<4x1024x!tt.ptr<f32>, #blocked4>
      %e = tt.expand_dims %carry {axis = 1 : i32} : tensor<4xf32, #ttg.slice<{dim = 1, parent = #blocked4}>> -> tensor<4x1xf32, #blocked4>
      %bc = tt.broadcast %e : tensor<4x1xf32, #blocked4> -> tensor<4x1024xf32, #blocked4>
      %w = arith.addf %v, %bc : tensor<4x1024xf32, #blocked4>
      tt.store %xp, %w : tensor<4x1024x!tt.ptr<f32>, #blocked4>
      %s = "tt.reduce"(%v) <{axis = 1 : i32}> ({
      ^bb0(%a: f32, %b: f32):
        %ab = arith.addf %a, %b : f32
        tt.reduce.return %ab : f32
      }) : (tensor<4x1024xf32, #blocked4>) -> tensor<4xf32, #ttg.slice<{dim = 1, parent = #blocked4}>>
      %next = arith.addf %carry, %s : tensor<4xf32, #ttg.slice<{dim = 1, parent = #blocked4}>>
      scf.yield %next : tensor<4xf32, #ttg.slice<{dim = 1, parent = #blocked4}>>
    }
    tt.return
  }
}
