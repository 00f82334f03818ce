// RUN: naiad-opt %s -p canonicalize | filecheck %s

// (x + 3) + 4 -> x + 7, the constant on either side.
// CHECK-LABEL: tt.func public @add_add
// CHECK: %[[C7:.+]] = arith.constant 7 : i32
// CHECK-NEXT: %[[A:.+]] = arith.addi %arg0, %[[C7]] : i32
// CHECK-NEXT: %[[C9:.+]] = arith.constant 9 : i32
// CHECK-NEXT: %[[B:.+]] = arith.addi %arg0, %[[C9]] : i32
// CHECK: tt.return %[[A]], %[[B]] : i32, i32
tt.func public @add_add(%x: i32) -> (i32, i32) {
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %c5 = arith.constant 5 : i32
  %a0 = arith.addi %x, %c3 : i32
  %a = arith.addi %a0, %c4 : i32
  %b0 = arith.addi %c4, %x : i32
  %b = arith.addi %c5, %b0 : i32
  tt.return %a, %b : i32, i32
}

// The same for muli, andi, ori and xori.
// CHECK-LABEL: tt.func public @bitwise_and_mul
// CHECK: %[[C15:.+]] = arith.constant 15 : i32
// CHECK-NEXT: %[[M:.+]] = arith.muli %arg0, %[[C15]] : i32
// CHECK-NEXT: %[[C12:.+]] = arith.constant 12 : i32
// CHECK-NEXT: %[[A:.+]] = arith.andi %arg0, %[[C12]] : i32
// CHECK-NEXT: %[[C13:.+]] = arith.constant 13 : i32
// CHECK-NEXT: %[[O:.+]] = arith.ori %arg0, %[[C13]] : i32
// CHECK-NEXT: %[[C10:.+]] = arith.constant 10 : i32
// CHECK-NEXT: %[[X:.+]] = arith.xori %arg0, %[[C10]] : i32
// CHECK: tt.return %[[M]], %[[A]], %[[O]], %[[X]]
tt.func public @bitwise_and_mul(%x: i32) -> (i32, i32, i32, i32) {
  %c3 = arith.constant 3 : i32
  %c5 = arith.constant 5 : i32
  %c12 = arith.constant 12 : i32
  %c13 = arith.constant 13 : i32
  %c6 = arith.constant 6 : i32
  %c9 = arith.constant 9 : i32
  %c28 = arith.constant 28 : i32
  %c14 = arith.constant 14 : i32
  %m0 = arith.muli %x, %c3 : i32
  %m = arith.muli %m0, %c5 : i32
  %a0 = arith.andi %x, %c28 : i32
  %a = arith.andi %a0, %c14 : i32
  %o0 = arith.ori %x, %c9 : i32
  %o = arith.ori %o0, %c5 : i32
  %x0 = arith.xori %x, %c6 : i32
  %r = arith.xori %x0, %c12 : i32
  tt.return %m, %a, %o, %r : i32, i32, i32, i32
}

// addi and subi of constants, each form of upstream's table (c0 = 10, c1 = 3).
// CHECK-LABEL: tt.func public @add_sub
// CHECK: %[[K0:.+]] = arith.constant -7 : i32
// CHECK-NEXT: %[[R0:.+]] = arith.addi %arg0, %[[K0]] : i32
// CHECK-NEXT: %[[K1:.+]] = arith.constant 13 : i32
// CHECK-NEXT: %[[R1:.+]] = arith.subi %[[K1]], %arg0 : i32
// CHECK-NEXT: %[[K2:.+]] = arith.constant 7 : i32
// CHECK-NEXT: %[[R2:.+]] = arith.addi %arg0, %[[K2]] : i32
// CHECK-NEXT: %[[K3:.+]] = arith.constant -7 : i32
// CHECK-NEXT: %[[R3:.+]] = arith.subi %[[K3]], %arg0 : i32
// CHECK-NEXT: %[[K4:.+]] = arith.constant 13 : i32
// CHECK-NEXT: %[[R4:.+]] = arith.subi %arg0, %[[K4]] : i32
// CHECK-NEXT: %[[K5:.+]] = arith.constant 7 : i32
// CHECK-NEXT: %[[R5:.+]] = arith.subi %[[K5]], %arg0 : i32
// CHECK-NEXT: %[[K6:.+]] = arith.constant 13 : i32
// CHECK-NEXT: %[[R6:.+]] = arith.subi %[[K6]], %arg0 : i32
// CHECK-NEXT: %[[K7:.+]] = arith.constant -7 : i32
// CHECK-NEXT: %[[R7:.+]] = arith.addi %arg0, %[[K7]] : i32
// CHECK: tt.return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]]
tt.func public @add_sub(%x: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32) {
  %c0 = arith.constant 10 : i32
  %c1 = arith.constant 3 : i32
  // addi(subi(x, c0), c1) -> addi(x, c1 - c0)
  %s0 = arith.subi %x, %c0 : i32
  %r0 = arith.addi %s0, %c1 : i32
  // addi(subi(c0, x), c1) -> subi(c0 + c1, x)
  %s1 = arith.subi %c0, %x : i32
  %r1 = arith.addi %s1, %c1 : i32
  // subi(addi(x, c0), c1) -> addi(x, c0 - c1)
  %a2 = arith.addi %x, %c0 : i32
  %r2 = arith.subi %a2, %c1 : i32
  // subi(c1, addi(x, c0)) -> subi(c1 - c0, x)
  %a3 = arith.addi %x, %c0 : i32
  %r3 = arith.subi %c1, %a3 : i32
  // subi(subi(x, c0), c1) -> subi(x, c0 + c1)
  %s4 = arith.subi %x, %c0 : i32
  %r4 = arith.subi %s4, %c1 : i32
  // subi(subi(c0, x), c1) -> subi(c0 - c1, x)
  %s5 = arith.subi %c0, %x : i32
  %r5 = arith.subi %s5, %c1 : i32
  // subi(c1, subi(x, c0)) -> subi(c0 + c1, x)
  %s6 = arith.subi %x, %c0 : i32
  %r6 = arith.subi %c1, %s6 : i32
  // subi(c1, subi(c0, x)) -> addi(x, c1 - c0)
  %s7 = arith.subi %c0, %x : i32
  %r7 = arith.subi %c1, %s7 : i32
  tt.return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7 : i32, i32, i32, i32, i32, i32, i32, i32
}

// Wrap-around: (x + INT_MAX) + 2 is x + INT_MIN + 1, in any order of evaluation.
// CHECK-LABEL: tt.func public @add_wraps
// CHECK: %[[C:.+]] = arith.constant -2147483647 : i32
// CHECK: arith.addi %arg0, %[[C]] : i32
tt.func public @add_wraps(%x: i32) -> i32 {
  %max = arith.constant 2147483647 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.addi %x, %max : i32
  %b = arith.addi %a, %c2 : i32
  tt.return %b : i32
}

// Tensors of splat constants reassociate too.
// CHECK-LABEL: tt.func public @tensor_add_add
// CHECK: %[[C:.+]] = arith.constant dense<5> : tensor<4xi32>
// CHECK: %[[A:.+]] = arith.addi %arg0, %[[C]] : tensor<4xi32>
// CHECK: tt.return %[[A]]
tt.func public @tensor_add_add(%x: tensor<4xi32>) -> tensor<4xi32> {
  %c2 = arith.constant dense<2> : tensor<4xi32>
  %c3 = arith.constant dense<3> : tensor<4xi32>
  %a = arith.addi %x, %c2 : tensor<4xi32>
  %b = arith.addi %a, %c3 : tensor<4xi32>
  tt.return %b : tensor<4xi32>
}

// Negative: floating-point addition is not associative ((x + 1e8) + -1e8 is not x + 0), so
// the two addf stay.
// CHECK-LABEL: tt.func public @float_stays
// CHECK: arith.addf
// CHECK: arith.addf
tt.func public @float_stays(%x: f32) -> f32 {
  %big = arith.constant 1.000000e+08 : f32
  %neg = arith.constant -1.000000e+08 : f32
  %a = arith.addf %x, %big : f32
  %b = arith.addf %a, %neg : f32
  tt.return %b : f32
}

// Negative: without a second constant there is nothing to combine ((x + 3) + y stays).
// CHECK-LABEL: tt.func public @variable_stays
// CHECK: %[[A:.+]] = arith.addi %arg0, %{{.+}} : i32
// CHECK: arith.addi %[[A]], %arg1 : i32
tt.func public @variable_stays(%x: i32, %y: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %a = arith.addi %x, %c3 : i32
  %b = arith.addi %a, %y : i32
  tt.return %b : i32
}

// Negative: different ops do not reassociate ((x * 3) + 4 is not x * 7 nor x + 7).
// CHECK-LABEL: tt.func public @mixed_stays
// CHECK: arith.muli
// CHECK: arith.addi
tt.func public @mixed_stays(%x: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %a = arith.muli %x, %c3 : i32
  %b = arith.addi %a, %c4 : i32
  tt.return %b : i32
}
