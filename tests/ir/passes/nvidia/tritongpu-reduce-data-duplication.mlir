// RUN: naiad-opt %s -p tritongpu-reduce-data-duplication --no-locations | filecheck %s

// #blocked fitted to 128x4 repeats each element in two registers (its third register basis
// is zero): the conversion through shared memory first drops the repeats, for free.
// CHECK: #[[LINEAR:linear[0-9]*]] = #ttg.linear<{register = {{\[}}[0, 1], [0, 2]], lane = {{\[}}[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = {{\[}}[32, 0], [64, 0]], block = []}>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked2 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func @repeats
  // CHECK: %[[NARROW:.*]] = ttg.convert_layout %arg0 : tensor<128x4xf32, #blocked> -> tensor<128x4xf32, #[[LINEAR]]>
  // CHECK: ttg.convert_layout %[[NARROW]] : tensor<128x4xf32, #[[LINEAR]]> -> tensor<128x4xf32, #blocked1>
  tt.func @repeats(%arg0: tensor<128x4xf32, #blocked>) -> tensor<128x4xf32, #blocked1> {
    %0 = ttg.convert_layout %arg0 : tensor<128x4xf32, #blocked> -> tensor<128x4xf32, #blocked1>
    tt.return %0 : tensor<128x4xf32, #blocked1>
  }

  // Left alone: the source holds every element once.
  // CHECK-LABEL: tt.func @no_repeats
  // CHECK-NOT: #linear
  // CHECK: ttg.convert_layout %arg0 : tensor<128x4xf32, #blocked2> -> tensor<128x4xf32, #blocked1>
  tt.func @no_repeats(%arg0: tensor<128x4xf32, #blocked2>) -> tensor<128x4xf32, #blocked1> {
    %0 = ttg.convert_layout %arg0 : tensor<128x4xf32, #blocked2> -> tensor<128x4xf32, #blocked1>
    tt.return %0 : tensor<128x4xf32, #blocked1>
  }

  // Left alone: every thread already holds its elements (registers are only renumbered).
  // CHECK-LABEL: tt.func @renumber
  // CHECK-NOT: #linear
  // CHECK: ttg.convert_layout %arg0 : tensor<128x4xf32, #blocked> -> tensor<128x4xf32, #blocked2>
  tt.func @renumber(%arg0: tensor<128x4xf32, #blocked>) -> tensor<128x4xf32, #blocked2> {
    %0 = ttg.convert_layout %arg0 : tensor<128x4xf32, #blocked> -> tensor<128x4xf32, #blocked2>
    tt.return %0 : tensor<128x4xf32, #blocked2>
  }
}
