// RUN: naiad-opt %s -p cpu-versioned-checks | filecheck %s

func.func private @naiad_bounds_info_0(i64, i64, i64)

// A scalar access at %base + %i, checked against [%low, %high] in every iteration: the check
// is evaluated at %lb and at %ub - 1, and where it holds at both (or the loop does not run)
// a copy of the loop runs without it; the loop as written, check and report, otherwise.
// CHECK-LABEL: func.func @linear_offset
// CHECK: %[[LAST:.+]] = arith.subi %arg2, %{{.+}} : i32
// CHECK: arith.extsi %arg1 : i32 to i64
// CHECK: arith.extsi %[[LAST]] : i32 to i64
// CHECK: %[[IDLE:.+]] = arith.cmpi sge, %arg1, %arg2 : i32
// CHECK: %[[OK:.+]] = arith.ori %[[IDLE]], %{{.+}} : i1
// CHECK: scf.if %[[OK]] {
// CHECK-NEXT: scf.for
// CHECK-NOT: cf.assert
// CHECK-NOT: func.call
// CHECK: memref.store
// CHECK: } else {
// CHECK-NEXT: scf.for
// CHECK: func.call @naiad_bounds_info_0
// CHECK: cf.assert
// CHECK: memref.store
func.func @linear_offset(%m: memref<?xf32>, %lb: i32, %ub: i32, %base: i64, %low: i64, %high: i64) {
  %c1 = arith.constant 1 : i32
  %true = arith.constant true
  scf.for %i = %lb to %ub step %c1 : i32 {
    %w = arith.extsi %i : i32 to i64
    %p = arith.addi %base, %w : i64
    %a = arith.cmpi sge, %p, %low : i64
    %b = arith.cmpi sle, %p, %high : i64
    %ok = arith.andi %a, %b : i1
    %bad = arith.xori %ok, %true : i1
    scf.if %bad {
      func.call @naiad_bounds_info_0(%p, %low, %high) : (i64, i64, i64) -> ()
    }
    cf.assert %ok, "out-of-bounds load" {naiad.bounds_check}
    %x = arith.index_cast %p : i64 to index
    %v = memref.load %m[%x] : memref<?xf32>
    memref.store %v, %m[%x] : memref<?xf32>
  }
  return
}

// The offset %i * %i is no straight line (its values between the ends are not bounded by
// them), and a runtime stride could wrap: both loops are left as written.
// CHECK-LABEL: func.func @not_linear
// CHECK-NOT: scf.if %{{.+}} {
// CHECK: scf.for
// CHECK: cf.assert
// CHECK: scf.for
// CHECK: cf.assert
// CHECK: return
func.func @not_linear(%m: memref<?xf32>, %ub: i32, %stride: i64, %low: i64, %high: i64) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %ub step %c1 : i32 {
    %w = arith.extsi %i : i32 to i64
    %p = arith.muli %w, %w : i64
    %a = arith.cmpi sge, %p, %low : i64
    %b = arith.cmpi sle, %p, %high : i64
    %ok = arith.andi %a, %b : i1
    cf.assert %ok, "out-of-bounds load" {naiad.bounds_check}
    %x = arith.index_cast %p : i64 to index
    %v = memref.load %m[%x] : memref<?xf32>
  }
  scf.for %i = %c0 to %ub step %c1 : i32 {
    %w = arith.extsi %i : i32 to i64
    %p = arith.muli %w, %stride : i64
    %a = arith.cmpi sge, %p, %low : i64
    %b = arith.cmpi sle, %p, %high : i64
    %ok = arith.andi %a, %b : i1
    cf.assert %ok, "out-of-bounds load" {naiad.bounds_check}
    %x = arith.index_cast %p : i64 to index
    %v = memref.load %m[%x] : memref<?xf32>
  }
  return
}
