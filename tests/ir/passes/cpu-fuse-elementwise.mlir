// RUN: naiad-opt %s -p cpu-fuse-elementwise | filecheck %s
// RUN: naiad-opt %s -p "cpu-fuse-elementwise{max-body-weight=40}" | filecheck %s --check-prefix=BUDGET

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A chain subf -> exp -> mulf is one generic reading the chain's leaves; each body op once.
// CHECK-LABEL: func.func @chain
// CHECK: %[[F:.+]] = linalg.generic
// CHECK-SAME: ins(%arg2, %arg0, %arg1 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
// CHECK: ^bb0(%[[W:[a-z0-9_]+]]: f32{{[^,]*}}, %[[X:[a-z0-9_]+]]: f32{{[^,]*}}, %[[M:[a-z0-9_]+]]: f32
// CHECK-NEXT: %[[S:.+]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT: %[[E:.+]] = math.exp %[[S]] : f32
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[E]], %[[W]] : f32
// CHECK-NEXT: linalg.yield %[[P]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]
// BUDGET-LABEL: func.func @chain
// BUDGET-COUNT-1: linalg.generic
// BUDGET-NOT: linalg.generic
// BUDGET: return
func.func @chain(%x: tensor<16xf32>, %m: tensor<16xf32>, %w: tensor<16xf32>) -> tensor<16xf32> {
  %e0 = tensor.empty() : tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %m : tensor<16xf32>, tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%e, %w : tensor<16xf32>, tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %p : tensor<16xf32>
}

// A fill is its scalar, read from outside the body.
// CHECK-LABEL: func.func @fill
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<16xf32>)
// CHECK: arith.addf %{{.+}}, %arg1 : f32
func.func @fill(%x: tensor<16xf32>, %c: f32) -> tensor<16xf32> {
  %e0 = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%c : f32) outs(%e0 : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %f : tensor<16xf32>, tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// A producer read through a broadcast: its inputs are read through the composed map.
// CHECK-LABEL: func.func @broadcast
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: arith.negf
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
func.func @broadcast(%x: tensor<4x8xf32>, %v: tensor<4xf32>) -> tensor<4x8xf32> {
  %e1 = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %n : tensor<4x8xf32>, tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// One producer read as a row and as a column is two different elements: computed once for
// each map (it is cheap), never one value for both.
// CHECK-LABEL: func.func @row_and_column
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: ins(%arg0, %arg0 : tensor<8xf32>, tensor<8xf32>)
// CHECK: ^bb0(%[[R:[a-z0-9_]+]]: f32{{[^,]*}}, %[[C:[a-z0-9_]+]]: f32
// CHECK-NEXT: %[[NR:.+]] = arith.negf %[[R]] : f32
// CHECK-NEXT: %[[NC:.+]] = arith.negf %[[C]] : f32
// CHECK-NEXT: arith.subf %[[NR]], %[[NC]] : f32
func.func @row_and_column(%v: tensor<8xf32>) -> tensor<8x8xf32> {
  %e1 = tensor.empty() : tensor<8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [#row, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%n, %n : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// Negative: an exp read by two consumers is not computed twice (not cheap), and a producer
// reading its init is not elementwise in its inputs alone: every generic stays.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @kept(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e0 = tensor.empty() : tensor<16xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%e : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %acc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%acc : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// A cheap producer (%p) read by two consumers is computed again in each, but the exp it reads
// is computed once: read by a producer that stays, it is not pulled in with it.
// CHECK-LABEL: func.func @recompute_only_the_cheap
// CHECK: %[[E:.+]] = linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK-NOT: math.exp
// CHECK: ins(%[[E]] : tensor<16xf32>)
// CHECK: arith.addf
// CHECK-NEXT: arith.negf
// CHECK: ins(%[[E]] : tensor<16xf32>)
// CHECK: arith.addf
// CHECK-NEXT: arith.mulf
func.func @recompute_only_the_cheap(%x: tensor<16xf32>, %c: f32) -> (tensor<16xf32>, tensor<16xf32>) {
  %e0 = tensor.empty() : tensor<16xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%q : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %c : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// Negative: a reduction is not an elementwise producer.
// CHECK-LABEL: func.func @reduction_producer
// CHECK-COUNT-2: linalg.generic
func.func @reduction_producer(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// The budget: three exps (16 each) exceed a body of weight 40, so the chain is two loops.
// BUDGET-LABEL: func.func @long_chain
// BUDGET: %[[A:.+]] = linalg.generic
// BUDGET-COUNT-1: math.exp
// BUDGET: linalg.generic
// BUDGET-SAME: ins(%[[A]] : tensor<16xf32>)
// BUDGET-COUNT-2: math.exp
// BUDGET-NOT: linalg.generic
func.func @long_chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e0 = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%b : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %c : tensor<16xf32>
}
