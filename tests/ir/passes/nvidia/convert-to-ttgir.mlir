// RUN: naiad-opt %s -p 'convert-to-ttgir{num-warps=8 target=cuda:80}' --no-locations | filecheck %s

// Every tensor gets the default blocked layout of its shape for 8 warps; the module says how
// many warps, threads and CTAs a program has and which GPU it is for.
// CHECK-DAG: #[[ONE_D:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
// CHECK-DAG: #[[COLUMN:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [8, 1], order = [0, 1]}>
// CHECK-DAG: #[[TILE:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [8, 1], order = [1, 0]}>
// CHECK: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32}

module {
  // CHECK-LABEL: tt.func @copy
  tt.func @copy(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
    // CHECK: tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #[[ONE_D]]>
    // CHECK: tt.load {{.*}} : tensor<1024x!tt.ptr<f32>, #[[ONE_D]]>
    // CHECK-NOT: ttg.convert_layout
    // CHECK: tt.store {{.*}} : tensor<1024x!tt.ptr<f32>, #[[ONE_D]]>
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xs, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %xp : tensor<1024x!tt.ptr<f32>>
    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %ys, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %yp, %v : tensor<1024x!tt.ptr<f32>>
    tt.return
  }

  // expand_dims takes a slice of the operand's layout with a size-1 dimension inserted (order
  // [0, 1]); a reduction gives a slice of its operand's layout; conversions bring both back to
  // the default layouts where the values are used.
  // CHECK-LABEL: tt.func @column_sum
  tt.func @column_sum(%x: !tt.ptr<f32>) -> tensor<256xf32> {
    // CHECK: %[[R:.*]] = tt.make_range {{.*}} : tensor<256xi32, #[[ONE_D]]>
    // CHECK: %[[S:.*]] = ttg.convert_layout %[[R]] : tensor<256xi32, #[[ONE_D]]> -> tensor<256xi32, #ttg.slice<{dim = 1, parent = #[[COLUMN]]}>>
    // CHECK: %[[E:.*]] = tt.expand_dims %[[S]] {axis = 1 : i32} : {{.*}} -> tensor<256x1xi32, #[[COLUMN]]>
    // CHECK: ttg.convert_layout %[[E]] : tensor<256x1xi32, #[[COLUMN]]> -> tensor<256x1xi32, #[[TILE]]>
    // CHECK: "tt.reduce"
    // CHECK: }) : (tensor<256x1xf32, #[[TILE]]>) -> tensor<256xf32, #ttg.slice<{dim = 1, parent = #[[TILE]]}>>
    // CHECK: %[[BACK:.*]] = ttg.convert_layout {{.*}} : tensor<256xf32, #ttg.slice<{dim = 1, parent = #[[TILE]]}>> -> tensor<256xf32, #[[ONE_D]]>
    // CHECK: tt.return %[[BACK]]
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %e = tt.expand_dims %r {axis = 1 : i32} : tensor<256xi32> -> tensor<256x1xi32>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<256x1x!tt.ptr<f32>>
    %xp = tt.addptr %xs, %e : tensor<256x1x!tt.ptr<f32>>, tensor<256x1xi32>
    %v = tt.load %xp : tensor<256x1x!tt.ptr<f32>>
    %s = "tt.reduce"(%v) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<256x1xf32>) -> tensor<256xf32>
    tt.return %s : tensor<256xf32>
  }

  // Scalars have no layout: nothing changes.
  // CHECK-LABEL: tt.func @scalars
  // CHECK-NEXT: arith.addi %{{.*}}, %{{.*}} : i32
  // CHECK-NEXT: tt.return
  tt.func @scalars(%a: i32, %b: i32) -> i32 {
    %c = arith.addi %a, %b : i32
    tt.return %c : i32
  }
}
