// RUN: naiad-opt %s --split-input-file -p tritongpu-allocate-warp-groups --no-locations | filecheck %s

// The partitions take their warps largest first, one after another past the kernel's 4:
// 8 warps at 4, 4 at 12, 2 at 16, 1 at 18 and the other 1 at 19; 20 in all.
// CHECK: module attributes {"ttg.num-warps" = 4 : i32, "ttg.total-num-warps" = 20 : i32}
// CHECK: ttg.warp_specialize() attributes {warpGroupStartIds = array<i32: 18, 4, 12, 16, 19>}
// CHECK-NEXT: default
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @five() {
    ttg.warp_specialize()
    default {
      ttg.warp_yield
    }
    partition0() num_warps(1) {
      ttg.warp_return
    }
    partition1() num_warps(8) {
      ttg.warp_return
    }
    partition2() num_warps(4) {
      ttg.warp_return
    }
    partition3() num_warps(2) {
      ttg.warp_return
    }
    partition4() num_warps(1) {
      ttg.warp_return
    } : () -> ()
    tt.return
  }
}

// -----

// Start ids given by hand are kept; the total counts to the end of the last partition.
// CHECK: module attributes {"ttg.num-warps" = 8 : i32, "ttg.total-num-warps" = 16 : i32}
// CHECK: ttg.warp_specialize() attributes {warpGroupStartIds = array<i32: 12, 8>}
module attributes {"ttg.num-warps" = 8 : i32} {
  tt.func @placed() {
    ttg.warp_specialize() attributes {warpGroupStartIds = array<i32: 12, 8>}
    default {
      ttg.warp_yield
    }
    partition0() num_warps(4) {
      ttg.warp_return
    }
    partition1() num_warps(4) {
      ttg.warp_return
    } : () -> ()
    tt.return
  }
}

// -----

// A kernel without partitions launches its own warps: the pass leaves it alone.
// CHECK: module attributes {"ttg.num-warps" = 4 : i32} {
// CHECK-NOT: ttg.total-num-warps
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @plain() {
    tt.return
  }
}
