// RUN: naiad-opt %s -p "tritongpu-pipeline{num-stages=3},canonicalize" --no-locations | filecheck %s

// A fused persistent matmul (fuse-nested-loops of tests/fixture_kernels/flattened_loops.py's
// persistent_matmul, 64x32x16, 4 warps, sm_90a; the TTGIR before the pipeliner): its dot runs
// on across iterations and its epilogue's branch waits for it. The branch runs where a tile
// ends: the next iteration's dot starts over (its useC is `k != 0`, the K-step counter reset
// to 0 where the branch's condition holds), so the branch yields zeros to the loop, not the
// waited accumulator, whose registers would stay live through the whole epilogue.

// CHECK-LABEL: tt.func public @restarts
// CHECK: %[[DOT:.+]] = ttng.warp_group_dot {{.*}}isAsync = true
// CHECK-NEXT: %[[RUNNING:.+]] = ttng.warp_group_dot_wait %[[DOT]] {pendings = 1 : i32}
// CHECK: %[[ACC:.+]] = scf.if %{{.+}} -> (tensor<64x32xf32, #mma>) {
// CHECK-NEXT: %[[DONE:.+]] = ttng.warp_group_dot_wait %[[RUNNING]] {pendings = 0 : i32}
// CHECK: ttg.convert_layout %[[DONE]]
// CHECK: %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : tensor<64x32xf32, #mma>
// CHECK-NEXT: scf.yield %[[ZEROS]]
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[RUNNING]]
// CHECK: scf.yield %{{.+}}, %{{.+}}, %[[ACC]],

// The same loop whose last accumulator is read after it (a user's code may): it is not dead
// after the last tile's epilogue, which yields the waited value as before.

// CHECK-LABEL: tt.func public @read_after
// CHECK: %[[DOT:.+]] = ttng.warp_group_dot {{.*}}isAsync = true
// CHECK-NEXT: %[[RUNNING:.+]] = ttng.warp_group_dot_wait %[[DOT]] {pendings = 1 : i32}
// CHECK: %[[ACC:.+]] = scf.if %{{.+}} -> (tensor<64x32xf32, #mma>) {
// CHECK-NEXT: %[[DONE:.+]] = ttng.warp_group_dot_wait %[[RUNNING]] {pendings = 0 : i32}
// CHECK-NOT: arith.constant dense<0.000000e+00> : tensor<64x32xf32, #mma>
// CHECK: scf.yield %[[DONE]]
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[RUNNING]]
// CHECK: scf.yield %{{.+}}, %{{.+}}, %[[ACC]],

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 2], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 32, 16]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, elementBitWidth = 16}>
#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @restarts(%a_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %c_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %M: i32, %N: i32 {tt.divisibility = 16 : i32}, %K: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %tiles_n = arith.constant 31 : i32
    %tiles_n_0 = arith.addi %N, %tiles_n : i32
    %tiles_n_1 = arith.constant 32 : i32
    %tiles_n_2 = arith.divsi %tiles_n_0, %tiles_n_1 : i32
    %k_steps = arith.constant 15 : i32
    %k_steps_3 = arith.addi %K, %k_steps : i32
    %k_steps_4 = arith.constant 16 : i32
    %k_steps_5 = arith.divsi %k_steps_3, %k_steps_4 : i32
    %0 = tt.get_program_id x : i32
    %c63_i32 = arith.constant 63 : i32
    %1 = arith.addi %M, %c63_i32 : i32
    %c64_i32 = arith.constant 64 : i32
    %2 = arith.divsi %1, %c64_i32 : i32
    %3 = arith.muli %2, %tiles_n_2 : i32
    %c4_i32 = arith.constant 4 : i32
    %rows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %rows_6 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
    %cols = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
    %acc = arith.constant dense<0.000000e+00> : tensor<64x32xf32, #blocked1>
    %acc_7 = arith.constant dense<0.000000e+00> : tensor<64x32xf32, #mma>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %ks = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
    %ks_8 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %a = tt.splat %M : i32 -> tensor<64x1xi32, #blocked>
    %a_9 = tt.splat %K : i32 -> tensor<1x16xi32, #blocked>
    %a_10 = tt.splat %K : i32 -> tensor<64x1xi32, #blocked>
    %a_11 = tt.splat %a_ptr : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>, #blocked>
    %a_12 = arith.constant dense<0.000000e+00> : tensor<64x16xf16, #blocked>
    %b = tt.splat %K : i32 -> tensor<16x1xi32, #blocked1>
    %b_13 = tt.splat %N : i32 -> tensor<1x32xi32, #blocked1>
    %b_14 = tt.splat %N : i32 -> tensor<16x1xi32, #blocked1>
    %b_15 = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<16x1x!tt.ptr<f16>, #blocked1>
    %b_16 = arith.constant dense<0.000000e+00> : tensor<16x32xf16, #blocked1>
    %inside = tt.splat %M : i32 -> tensor<64x1xi32, #blocked1>
    %4 = tt.splat %N : i32 -> tensor<64x1xi32, #blocked1>
    %5 = tt.splat %c_ptr : !tt.ptr<f32> -> tensor<64x1x!tt.ptr<f32>, #blocked1>
    %c4_i64 = arith.constant 4 : i64
    %6 = arith.extsi %3 : i32 to i64
    %7 = arith.extsi %0 : i32 to i64
    %8 = arith.subi %6, %7 : i64
    %c3_i64 = arith.constant 3 : i64
    %9 = arith.addi %8, %c3_i64 : i64
    %10 = arith.divsi %9, %c4_i64 : i64
    %11 = arith.extsi %k_steps_5 : i32 to i64
    %c1_i64 = arith.constant 1 : i64
    %12 = arith.maxsi %11, %c1_i64 : i64
    %c0_i64 = arith.constant 0 : i64
    %13 = arith.maxsi %10, %c0_i64 : i64
    %14 = arith.muli %13, %12 : i64
    %15 = arith.cmpi sle, %11, %c0_i64 : i64
    scf.if %15 {
      scf.for %arg6 = %0 to %3 step %c4_i32  : i32 {
        %rows_17 = arith.divsi %arg6, %tiles_n_2 : i32
        %rows_18 = arith.muli %rows_17, %c64_i32 : i32
        %rows_19 = tt.splat %rows_18 : i32 -> tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %rows_20 = arith.addi %rows_19, %rows_6 : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %cols_21 = arith.remsi %arg6, %tiles_n_2 : i32
        %cols_22 = arith.muli %cols_21, %tiles_n_1 : i32
        %cols_23 = tt.splat %cols_22 : i32 -> tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
        %cols_24 = arith.addi %cols_23, %cols : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
        %inside_25 = tt.expand_dims %rows_20 {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>> -> tensor<64x1xi32, #blocked1>
        %inside_26 = arith.cmpi slt, %inside_25, %inside : tensor<64x1xi32, #blocked1>
        %inside_27 = tt.expand_dims %cols_24 {axis = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>> -> tensor<1x32xi32, #blocked1>
        %inside_28 = arith.cmpi slt, %inside_27, %b_13 : tensor<1x32xi32, #blocked1>
        %inside_29 = tt.broadcast %inside_26 : tensor<64x1xi1, #blocked1> -> tensor<64x32xi1, #blocked1>
        %inside_30 = tt.broadcast %inside_28 : tensor<1x32xi1, #blocked1> -> tensor<64x32xi1, #blocked1>
        %inside_31 = arith.andi %inside_29, %inside_30 : tensor<64x32xi1, #blocked1>
        %16 = arith.muli %inside_25, %4 : tensor<64x1xi32, #blocked1>
        %17 = tt.addptr %5, %16 : tensor<64x1x!tt.ptr<f32>, #blocked1>, tensor<64x1xi32, #blocked1>
        %18 = tt.broadcast %17 : tensor<64x1x!tt.ptr<f32>, #blocked1> -> tensor<64x32x!tt.ptr<f32>, #blocked1>
        %19 = tt.broadcast %inside_27 : tensor<1x32xi32, #blocked1> -> tensor<64x32xi32, #blocked1>
        %20 = tt.addptr %18, %19 : tensor<64x32x!tt.ptr<f32>, #blocked1>, tensor<64x32xi32, #blocked1>
        tt.store %20, %acc, %inside_31 : tensor<64x32x!tt.ptr<f32>, #blocked1>
      }
    } else {
      %16 = arith.maxsi %12, %c0_i64 : i64
      %17 = arith.trunci %16 : i64 to i32
      %18 = arith.subi %0, %c4_i32 : i32
      %19 = ub.poison : i32
      %20 = arith.subi %17, %c1_i32 : i32
      %21:6 = scf.for %arg6 = %c0_i64 to %14 step %c1_i64 iter_args(%arg7 = %c0_i32, %arg8 = %18, %arg9 = %c0_i32, %arg10 = %acc_7, %arg11 = %19, %arg12 = %19) -> (i32, i32, i32, tensor<64x32xf32, #mma>, i32, i32)  : i64 {
        %22 = arith.cmpi eq, %arg7, %c0_i32 : i32
        %23:3 = scf.if %22 -> (i32, i32, i32) {
          %29 = arith.addi %arg8, %c4_i32 : i32
          %rows_61 = arith.divsi %29, %tiles_n_2 : i32
          %cols_62 = arith.remsi %29, %tiles_n_2 : i32
          scf.yield %29, %rows_61, %cols_62 : i32, i32, i32
        } else {
          scf.yield %arg8, %arg11, %arg12 : i32, i32, i32
        }
        %24 = arith.select %22, %c0_i32, %arg9 : i32
        %rows_17 = arith.muli %23#1, %c64_i32 : i32
        %rows_18 = tt.splat %rows_17 : i32 -> tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %rows_19 = tt.splat %rows_17 : i32 -> tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
        %rows_20 = arith.addi %rows_18, %rows_6 : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %rows_21 = arith.addi %rows_19, %rows : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
        %cols_22 = arith.muli %23#2, %tiles_n_1 : i32
        %cols_23 = tt.splat %cols_22 : i32 -> tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
        %cols_24 = arith.addi %cols_23, %cols : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
        %ks_25 = arith.muli %24, %k_steps_4 : i32
        %ks_26 = tt.splat %ks_25 : i32 -> tensor<16xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %ks_27 = tt.splat %ks_25 : i32 -> tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
        %ks_28 = arith.addi %ks_26, %ks : tensor<16xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %ks_29 = arith.addi %ks_27, %ks_8 : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
        %a_30 = tt.expand_dims %rows_21 {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
        %a_31 = arith.cmpi slt, %a_30, %a : tensor<64x1xi32, #blocked>
        %a_32 = tt.expand_dims %ks_29 {axis = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x16xi32, #blocked>
        %a_33 = arith.cmpi slt, %a_32, %a_9 : tensor<1x16xi32, #blocked>
        %a_34 = tt.broadcast %a_31 : tensor<64x1xi1, #blocked> -> tensor<64x16xi1, #blocked>
        %a_35 = tt.broadcast %a_33 : tensor<1x16xi1, #blocked> -> tensor<64x16xi1, #blocked>
        %a_36 = arith.andi %a_34, %a_35 : tensor<64x16xi1, #blocked>
        %a_37 = arith.muli %a_30, %a_10 : tensor<64x1xi32, #blocked>
        %a_38 = tt.addptr %a_11, %a_37 : tensor<64x1x!tt.ptr<f16>, #blocked>, tensor<64x1xi32, #blocked>
        %a_39 = tt.broadcast %a_38 : tensor<64x1x!tt.ptr<f16>, #blocked> -> tensor<64x16x!tt.ptr<f16>, #blocked>
        %a_40 = tt.broadcast %a_32 : tensor<1x16xi32, #blocked> -> tensor<64x16xi32, #blocked>
        %a_41 = tt.addptr %a_39, %a_40 : tensor<64x16x!tt.ptr<f16>, #blocked>, tensor<64x16xi32, #blocked>
        %a_42 = tt.load %a_41, %a_36, %a_12 : tensor<64x16x!tt.ptr<f16>, #blocked>
        %acc_43 = ttg.local_alloc %a_42 : (tensor<64x16xf16, #blocked>) -> !ttg.memdesc<64x16xf16, #shared, #smem>
        %b_44 = tt.expand_dims %ks_28 {axis = 1 : i32} : tensor<16xi32, #ttg.slice<{dim = 1, parent = #blocked1}>> -> tensor<16x1xi32, #blocked1>
        %b_45 = arith.cmpi slt, %b_44, %b : tensor<16x1xi32, #blocked1>
        %b_46 = tt.expand_dims %cols_24 {axis = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>> -> tensor<1x32xi32, #blocked1>
        %b_47 = arith.cmpi slt, %b_46, %b_13 : tensor<1x32xi32, #blocked1>
        %b_48 = tt.broadcast %b_45 : tensor<16x1xi1, #blocked1> -> tensor<16x32xi1, #blocked1>
        %b_49 = tt.broadcast %b_47 : tensor<1x32xi1, #blocked1> -> tensor<16x32xi1, #blocked1>
        %b_50 = arith.andi %b_48, %b_49 : tensor<16x32xi1, #blocked1>
        %b_51 = arith.muli %b_44, %b_14 : tensor<16x1xi32, #blocked1>
        %b_52 = tt.addptr %b_15, %b_51 : tensor<16x1x!tt.ptr<f16>, #blocked1>, tensor<16x1xi32, #blocked1>
        %b_53 = tt.broadcast %b_52 : tensor<16x1x!tt.ptr<f16>, #blocked1> -> tensor<16x32x!tt.ptr<f16>, #blocked1>
        %b_54 = tt.broadcast %b_46 : tensor<1x32xi32, #blocked1> -> tensor<16x32xi32, #blocked1>
        %b_55 = tt.addptr %b_53, %b_54 : tensor<16x32x!tt.ptr<f16>, #blocked1>, tensor<16x32xi32, #blocked1>
        %b_56 = tt.load %b_55, %b_50, %b_16 : tensor<16x32x!tt.ptr<f16>, #blocked1>
        %acc_57 = ttg.local_alloc %b_56 : (tensor<16x32xf16, #blocked1>) -> !ttg.memdesc<16x32xf16, #shared1, #smem>
        %acc_58 = arith.constant true
        %acc_59 = arith.xori %22, %acc_58 : i1
        %acc_60 = ttng.warp_group_dot %acc_43, %acc_57, %arg10, %acc_59 {inputPrecision = 0 : i32} : !ttg.memdesc<64x16xf16, #shared, #smem> * !ttg.memdesc<16x32xf16, #shared1, #smem> -> tensor<64x32xf32, #mma>
        %25 = arith.addi %24, %c1_i32 : i32
        %26 = arith.cmpi eq, %arg7, %20 : i32
        scf.if %26 {
          %inside_61 = tt.expand_dims %rows_20 {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>> -> tensor<64x1xi32, #blocked1>
          %inside_62 = arith.cmpi slt, %inside_61, %inside : tensor<64x1xi32, #blocked1>
          %inside_63 = tt.broadcast %inside_62 : tensor<64x1xi1, #blocked1> -> tensor<64x32xi1, #blocked1>
          %inside_64 = tt.broadcast %b_47 : tensor<1x32xi1, #blocked1> -> tensor<64x32xi1, #blocked1>
          %inside_65 = arith.andi %inside_63, %inside_64 : tensor<64x32xi1, #blocked1>
          %29 = arith.muli %inside_61, %4 : tensor<64x1xi32, #blocked1>
          %30 = tt.addptr %5, %29 : tensor<64x1x!tt.ptr<f32>, #blocked1>, tensor<64x1xi32, #blocked1>
          %31 = tt.broadcast %30 : tensor<64x1x!tt.ptr<f32>, #blocked1> -> tensor<64x32x!tt.ptr<f32>, #blocked1>
          %32 = tt.broadcast %b_46 : tensor<1x32xi32, #blocked1> -> tensor<64x32xi32, #blocked1>
          %33 = tt.addptr %31, %32 : tensor<64x32x!tt.ptr<f32>, #blocked1>, tensor<64x32xi32, #blocked1>
          %34 = ttg.convert_layout %acc_60 : tensor<64x32xf32, #mma> -> tensor<64x32xf32, #blocked1>
          tt.store %33, %34, %inside_65 : tensor<64x32x!tt.ptr<f32>, #blocked1>
        }
        %27 = arith.addi %arg7, %c1_i32 : i32
        %28 = arith.select %26, %c0_i32, %27 : i32
        scf.yield %28, %23#0, %25, %acc_60, %23#1, %23#2 : i32, i32, i32, tensor<64x32xf32, #mma>, i32, i32
      }
    }
    tt.return
  }
  tt.func public @read_after(%a_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %c_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %M: i32, %N: i32 {tt.divisibility = 16 : i32}, %K: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %tiles_n = arith.constant 31 : i32
    %tiles_n_0 = arith.addi %N, %tiles_n : i32
    %tiles_n_1 = arith.constant 32 : i32
    %tiles_n_2 = arith.divsi %tiles_n_0, %tiles_n_1 : i32
    %k_steps = arith.constant 15 : i32
    %k_steps_3 = arith.addi %K, %k_steps : i32
    %k_steps_4 = arith.constant 16 : i32
    %k_steps_5 = arith.divsi %k_steps_3, %k_steps_4 : i32
    %0 = tt.get_program_id x : i32
    %c63_i32 = arith.constant 63 : i32
    %1 = arith.addi %M, %c63_i32 : i32
    %c64_i32 = arith.constant 64 : i32
    %2 = arith.divsi %1, %c64_i32 : i32
    %3 = arith.muli %2, %tiles_n_2 : i32
    %c4_i32 = arith.constant 4 : i32
    %rows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %rows_6 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
    %cols = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
    %acc = arith.constant dense<0.000000e+00> : tensor<64x32xf32, #blocked1>
    %acc_7 = arith.constant dense<0.000000e+00> : tensor<64x32xf32, #mma>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %ks = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
    %ks_8 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %a = tt.splat %M : i32 -> tensor<64x1xi32, #blocked>
    %a_9 = tt.splat %K : i32 -> tensor<1x16xi32, #blocked>
    %a_10 = tt.splat %K : i32 -> tensor<64x1xi32, #blocked>
    %a_11 = tt.splat %a_ptr : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>, #blocked>
    %a_12 = arith.constant dense<0.000000e+00> : tensor<64x16xf16, #blocked>
    %b = tt.splat %K : i32 -> tensor<16x1xi32, #blocked1>
    %b_13 = tt.splat %N : i32 -> tensor<1x32xi32, #blocked1>
    %b_14 = tt.splat %N : i32 -> tensor<16x1xi32, #blocked1>
    %b_15 = tt.splat %b_ptr : !tt.ptr<f16> -> tensor<16x1x!tt.ptr<f16>, #blocked1>
    %b_16 = arith.constant dense<0.000000e+00> : tensor<16x32xf16, #blocked1>
    %inside = tt.splat %M : i32 -> tensor<64x1xi32, #blocked1>
    %4 = tt.splat %N : i32 -> tensor<64x1xi32, #blocked1>
    %5 = tt.splat %c_ptr : !tt.ptr<f32> -> tensor<64x1x!tt.ptr<f32>, #blocked1>
    %c4_i64 = arith.constant 4 : i64
    %6 = arith.extsi %3 : i32 to i64
    %7 = arith.extsi %0 : i32 to i64
    %8 = arith.subi %6, %7 : i64
    %c3_i64 = arith.constant 3 : i64
    %9 = arith.addi %8, %c3_i64 : i64
    %10 = arith.divsi %9, %c4_i64 : i64
    %11 = arith.extsi %k_steps_5 : i32 to i64
    %c1_i64 = arith.constant 1 : i64
    %12 = arith.maxsi %11, %c1_i64 : i64
    %c0_i64 = arith.constant 0 : i64
    %13 = arith.maxsi %10, %c0_i64 : i64
    %14 = arith.muli %13, %12 : i64
    %15 = arith.cmpi sle, %11, %c0_i64 : i64
    scf.if %15 {
      scf.for %arg6 = %0 to %3 step %c4_i32  : i32 {
        %rows_17 = arith.divsi %arg6, %tiles_n_2 : i32
        %rows_18 = arith.muli %rows_17, %c64_i32 : i32
        %rows_19 = tt.splat %rows_18 : i32 -> tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %rows_20 = arith.addi %rows_19, %rows_6 : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %cols_21 = arith.remsi %arg6, %tiles_n_2 : i32
        %cols_22 = arith.muli %cols_21, %tiles_n_1 : i32
        %cols_23 = tt.splat %cols_22 : i32 -> tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
        %cols_24 = arith.addi %cols_23, %cols : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
        %inside_25 = tt.expand_dims %rows_20 {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>> -> tensor<64x1xi32, #blocked1>
        %inside_26 = arith.cmpi slt, %inside_25, %inside : tensor<64x1xi32, #blocked1>
        %inside_27 = tt.expand_dims %cols_24 {axis = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>> -> tensor<1x32xi32, #blocked1>
        %inside_28 = arith.cmpi slt, %inside_27, %b_13 : tensor<1x32xi32, #blocked1>
        %inside_29 = tt.broadcast %inside_26 : tensor<64x1xi1, #blocked1> -> tensor<64x32xi1, #blocked1>
        %inside_30 = tt.broadcast %inside_28 : tensor<1x32xi1, #blocked1> -> tensor<64x32xi1, #blocked1>
        %inside_31 = arith.andi %inside_29, %inside_30 : tensor<64x32xi1, #blocked1>
        %16 = arith.muli %inside_25, %4 : tensor<64x1xi32, #blocked1>
        %17 = tt.addptr %5, %16 : tensor<64x1x!tt.ptr<f32>, #blocked1>, tensor<64x1xi32, #blocked1>
        %18 = tt.broadcast %17 : tensor<64x1x!tt.ptr<f32>, #blocked1> -> tensor<64x32x!tt.ptr<f32>, #blocked1>
        %19 = tt.broadcast %inside_27 : tensor<1x32xi32, #blocked1> -> tensor<64x32xi32, #blocked1>
        %20 = tt.addptr %18, %19 : tensor<64x32x!tt.ptr<f32>, #blocked1>, tensor<64x32xi32, #blocked1>
        tt.store %20, %acc, %inside_31 : tensor<64x32x!tt.ptr<f32>, #blocked1>
      }
    } else {
      %16 = arith.maxsi %12, %c0_i64 : i64
      %17 = arith.trunci %16 : i64 to i32
      %18 = arith.subi %0, %c4_i32 : i32
      %19 = ub.poison : i32
      %20 = arith.subi %17, %c1_i32 : i32
      %21:6 = scf.for %arg6 = %c0_i64 to %14 step %c1_i64 iter_args(%arg7 = %c0_i32, %arg8 = %18, %arg9 = %c0_i32, %arg10 = %acc_7, %arg11 = %19, %arg12 = %19) -> (i32, i32, i32, tensor<64x32xf32, #mma>, i32, i32)  : i64 {
        %22 = arith.cmpi eq, %arg7, %c0_i32 : i32
        %23:3 = scf.if %22 -> (i32, i32, i32) {
          %29 = arith.addi %arg8, %c4_i32 : i32
          %rows_61 = arith.divsi %29, %tiles_n_2 : i32
          %cols_62 = arith.remsi %29, %tiles_n_2 : i32
          scf.yield %29, %rows_61, %cols_62 : i32, i32, i32
        } else {
          scf.yield %arg8, %arg11, %arg12 : i32, i32, i32
        }
        %24 = arith.select %22, %c0_i32, %arg9 : i32
        %rows_17 = arith.muli %23#1, %c64_i32 : i32
        %rows_18 = tt.splat %rows_17 : i32 -> tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %rows_19 = tt.splat %rows_17 : i32 -> tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
        %rows_20 = arith.addi %rows_18, %rows_6 : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %rows_21 = arith.addi %rows_19, %rows : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
        %cols_22 = arith.muli %23#2, %tiles_n_1 : i32
        %cols_23 = tt.splat %cols_22 : i32 -> tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
        %cols_24 = arith.addi %cols_23, %cols : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>>
        %ks_25 = arith.muli %24, %k_steps_4 : i32
        %ks_26 = tt.splat %ks_25 : i32 -> tensor<16xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %ks_27 = tt.splat %ks_25 : i32 -> tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
        %ks_28 = arith.addi %ks_26, %ks : tensor<16xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
        %ks_29 = arith.addi %ks_27, %ks_8 : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
        %a_30 = tt.expand_dims %rows_21 {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
        %a_31 = arith.cmpi slt, %a_30, %a : tensor<64x1xi32, #blocked>
        %a_32 = tt.expand_dims %ks_29 {axis = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x16xi32, #blocked>
        %a_33 = arith.cmpi slt, %a_32, %a_9 : tensor<1x16xi32, #blocked>
        %a_34 = tt.broadcast %a_31 : tensor<64x1xi1, #blocked> -> tensor<64x16xi1, #blocked>
        %a_35 = tt.broadcast %a_33 : tensor<1x16xi1, #blocked> -> tensor<64x16xi1, #blocked>
        %a_36 = arith.andi %a_34, %a_35 : tensor<64x16xi1, #blocked>
        %a_37 = arith.muli %a_30, %a_10 : tensor<64x1xi32, #blocked>
        %a_38 = tt.addptr %a_11, %a_37 : tensor<64x1x!tt.ptr<f16>, #blocked>, tensor<64x1xi32, #blocked>
        %a_39 = tt.broadcast %a_38 : tensor<64x1x!tt.ptr<f16>, #blocked> -> tensor<64x16x!tt.ptr<f16>, #blocked>
        %a_40 = tt.broadcast %a_32 : tensor<1x16xi32, #blocked> -> tensor<64x16xi32, #blocked>
        %a_41 = tt.addptr %a_39, %a_40 : tensor<64x16x!tt.ptr<f16>, #blocked>, tensor<64x16xi32, #blocked>
        %a_42 = tt.load %a_41, %a_36, %a_12 : tensor<64x16x!tt.ptr<f16>, #blocked>
        %acc_43 = ttg.local_alloc %a_42 : (tensor<64x16xf16, #blocked>) -> !ttg.memdesc<64x16xf16, #shared, #smem>
        %b_44 = tt.expand_dims %ks_28 {axis = 1 : i32} : tensor<16xi32, #ttg.slice<{dim = 1, parent = #blocked1}>> -> tensor<16x1xi32, #blocked1>
        %b_45 = arith.cmpi slt, %b_44, %b : tensor<16x1xi32, #blocked1>
        %b_46 = tt.expand_dims %cols_24 {axis = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked1}>> -> tensor<1x32xi32, #blocked1>
        %b_47 = arith.cmpi slt, %b_46, %b_13 : tensor<1x32xi32, #blocked1>
        %b_48 = tt.broadcast %b_45 : tensor<16x1xi1, #blocked1> -> tensor<16x32xi1, #blocked1>
        %b_49 = tt.broadcast %b_47 : tensor<1x32xi1, #blocked1> -> tensor<16x32xi1, #blocked1>
        %b_50 = arith.andi %b_48, %b_49 : tensor<16x32xi1, #blocked1>
        %b_51 = arith.muli %b_44, %b_14 : tensor<16x1xi32, #blocked1>
        %b_52 = tt.addptr %b_15, %b_51 : tensor<16x1x!tt.ptr<f16>, #blocked1>, tensor<16x1xi32, #blocked1>
        %b_53 = tt.broadcast %b_52 : tensor<16x1x!tt.ptr<f16>, #blocked1> -> tensor<16x32x!tt.ptr<f16>, #blocked1>
        %b_54 = tt.broadcast %b_46 : tensor<1x32xi32, #blocked1> -> tensor<16x32xi32, #blocked1>
        %b_55 = tt.addptr %b_53, %b_54 : tensor<16x32x!tt.ptr<f16>, #blocked1>, tensor<16x32xi32, #blocked1>
        %b_56 = tt.load %b_55, %b_50, %b_16 : tensor<16x32x!tt.ptr<f16>, #blocked1>
        %acc_57 = ttg.local_alloc %b_56 : (tensor<16x32xf16, #blocked1>) -> !ttg.memdesc<16x32xf16, #shared1, #smem>
        %acc_58 = arith.constant true
        %acc_59 = arith.xori %22, %acc_58 : i1
        %acc_60 = ttng.warp_group_dot %acc_43, %acc_57, %arg10, %acc_59 {inputPrecision = 0 : i32} : !ttg.memdesc<64x16xf16, #shared, #smem> * !ttg.memdesc<16x32xf16, #shared1, #smem> -> tensor<64x32xf32, #mma>
        %25 = arith.addi %24, %c1_i32 : i32
        %26 = arith.cmpi eq, %arg7, %20 : i32
        scf.if %26 {
          %inside_61 = tt.expand_dims %rows_20 {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked1}>> -> tensor<64x1xi32, #blocked1>
          %inside_62 = arith.cmpi slt, %inside_61, %inside : tensor<64x1xi32, #blocked1>
          %inside_63 = tt.broadcast %inside_62 : tensor<64x1xi1, #blocked1> -> tensor<64x32xi1, #blocked1>
          %inside_64 = tt.broadcast %b_47 : tensor<1x32xi1, #blocked1> -> tensor<64x32xi1, #blocked1>
          %inside_65 = arith.andi %inside_63, %inside_64 : tensor<64x32xi1, #blocked1>
          %29 = arith.muli %inside_61, %4 : tensor<64x1xi32, #blocked1>
          %30 = tt.addptr %5, %29 : tensor<64x1x!tt.ptr<f32>, #blocked1>, tensor<64x1xi32, #blocked1>
          %31 = tt.broadcast %30 : tensor<64x1x!tt.ptr<f32>, #blocked1> -> tensor<64x32x!tt.ptr<f32>, #blocked1>
          %32 = tt.broadcast %b_46 : tensor<1x32xi32, #blocked1> -> tensor<64x32xi32, #blocked1>
          %33 = tt.addptr %31, %32 : tensor<64x32x!tt.ptr<f32>, #blocked1>, tensor<64x32xi32, #blocked1>
          %34 = ttg.convert_layout %acc_60 : tensor<64x32xf32, #mma> -> tensor<64x32xf32, #blocked1>
          tt.store %33, %34, %inside_65 : tensor<64x32x!tt.ptr<f32>, #blocked1>
        }
        %27 = arith.addi %arg7, %c1_i32 : i32
        %28 = arith.select %26, %c0_i32, %27 : i32
        scf.yield %28, %23#0, %25, %acc_60, %23#1, %23#2 : i32, i32, i32, tensor<64x32xf32, #mma>, i32, i32
      }
      %last = ttg.convert_layout %21#3 : tensor<64x32xf32, #mma> -> tensor<64x32xf32, #blocked1>
    }
    tt.return
  }
}
