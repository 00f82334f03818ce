// RUN: naiad-opt %s -p tt-to-linalg --no-locations | filecheck %s

// device_print calls the runtime: one private declaration per signature (at the top of the
// module), the program ids then the printed values as operands, the print's own attributes on
// the call.
// CHECK-LABEL: func.func private @naiad_print_0(i32, i32, i32, tensor<4xf32>)
// CHECK-LABEL: func.func public @device_print
// CHECK-SAME: (%[[V:[^:]+]]: tensor<4xf32>, %{{[^:]+}}: i32, %{{[^:]+}}: i32, %{{[^:]+}}: i32, %[[PX:[^:]+]]: i32, %[[PY:[^:]+]]: i32, %[[PZ:[^:]+]]: i32)
// CHECK: call @naiad_print_0(%[[PX]], %[[PY]], %[[PZ]], %[[V]]) {hex = false, isSigned = array<i32: 0>, prefix = " x: "} : (i32, i32, i32, tensor<4xf32>) -> ()
tt.func public @device_print(%v: tensor<4xf32>) {
  tt.print " x: " {hex = false, isSigned = array<i32: 0>} : %v : tensor<4xf32>
  tt.return
}

// A structured block with a prefix-box mask: a strided view of the argument, the box of it
// copied into a buffer (filled with 0 first when the box is short), and the box stored.
// CHECK-LABEL: func.func public @masked_copy
// CHECK-SAME: (%[[X:[^:]+]]: memref<*xf32>, %[[Y:[^:]+]]: memref<*xf32>, %{{[^:]+}}: i32,
// CHECK: %[[BUF:.+]] = memref.alloc() : memref<64xf32>
// CHECK: scf.if
// CHECK-NEXT: linalg.fill
// CHECK: %[[VIEW:.+]] = memref.reinterpret_cast %[[X]] to offset: [%{{.+}}], sizes: [64], strides: [1]
// CHECK: %[[WINDOW:.+]] = memref.subview %[[VIEW]][0] [%[[KEPT:.+]]] [1]
// CHECK: %[[TARGET:.+]] = memref.subview %[[BUF]][0] [%[[KEPT]]] [1]
// CHECK: memref.copy %[[WINDOW]], %[[TARGET]]
// CHECK: %[[LOADED:.+]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: %[[OUT:.+]] = memref.reinterpret_cast %[[Y]]
// CHECK: %[[PART:.+]] = tensor.extract_slice %[[LOADED]][0] [%[[STORED:.+]]] [1]
// CHECK: %[[DEST:.+]] = memref.subview %[[OUT]][0] [%[[STORED]]] [1]
// CHECK: bufferization.materialize_in_destination %[[PART]] in writable %[[DEST]]
// CHECK-NOT: memref.load
// CHECK: return
tt.func public @masked_copy(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %n: i32) {
  %pid = tt.get_program_id x : i32
  %c64 = arith.constant 64 : i32
  %start = arith.muli %pid, %c64 : i32
  %range = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %s = tt.splat %start : i32 -> tensor<64xi32>
  %offs = arith.addi %s, %range : tensor<64xi32>
  %bound = tt.splat %n : i32 -> tensor<64xi32>
  %mask = arith.cmpi slt, %offs, %bound : tensor<64xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %v = tt.load %xp, %mask : tensor<64x!tt.ptr<f32>>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %yp = tt.addptr %ys, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  tt.store %yp, %v, %mask : tensor<64x!tt.ptr<f32>>
  tt.return
}

// Negative case: offsets loaded from memory are not structured, and a mask `offs != 3` is not a
// box: the load gathers element by element (a linalg.generic loading under scf.if) and the
// store scatters in a loop over the block.
// CHECK-LABEL: func.func public @gather_fallback
// CHECK-NOT: memref.reinterpret_cast
// CHECK: %[[FLAT:.+]] = memref.cast %{{.+}} : memref<*xf32> to memref<?xf32>
// CHECK: linalg.generic
// CHECK: scf.if
// CHECK-NEXT: memref.load %[[FLAT]][%{{.+}}] : memref<?xf32>
// CHECK: scf.for
// CHECK: tensor.extract
// CHECK: memref.store %{{.+}}, %[[FLAT]][%{{.+}}] : memref<?xf32>
tt.func public @gather_fallback(%x: !tt.ptr<f32>, %idx: !tt.ptr<i32>) {
  %range = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %is = tt.splat %idx : !tt.ptr<i32> -> tensor<16x!tt.ptr<i32>>
  %ip = tt.addptr %is, %range : tensor<16x!tt.ptr<i32>>, tensor<16xi32>
  %offs = tt.load %ip : tensor<16x!tt.ptr<i32>>
  %c3 = arith.constant dense<3> : tensor<16xi32>
  %mask = arith.cmpi ne, %offs, %c3 : tensor<16xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %offs : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %v = tt.load %xp, %mask : tensor<16x!tt.ptr<f32>>
  tt.store %xp, %v, %mask : tensor<16x!tt.ptr<f32>>
  tt.return
}

// A scalar pointer advanced in a loop is carried as its i64 offset; its loads read the
// argument's flat view at that offset.
// CHECK-LABEL: func.func public @scalar_pointer_loop
// CHECK-SAME: (%[[X:[^:]+]]: memref<*xf32>
// CHECK: %[[FLAT:.+]] = memref.cast %[[X]] : memref<*xf32> to memref<?xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[P:.+]] = %[[ZERO]], %[[ACC:.+]] = %{{.+}}) -> (i64, f32)
// CHECK: %[[AT:.+]] = arith.index_cast %[[P]] : i64 to index
// CHECK: memref.load %[[FLAT]][%[[AT]]] : memref<?xf32>
// CHECK: %[[NEXT:.+]] = arith.addi %[[P]], %{{.+}} : i64
// CHECK: scf.yield %[[NEXT]], %{{.+}} : i64, f32
tt.func public @scalar_pointer_loop(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %x, %acc = %zero) -> (!tt.ptr<f32>, f32)  : i32 {
    %v = tt.load %p : !tt.ptr<f32>
    %a = arith.addf %acc, %v : f32
    %q = tt.addptr %p, %c1 : !tt.ptr<f32>, i32
    scf.yield %q, %a : !tt.ptr<f32>, f32
  }
  tt.store %y, %r#1 : !tt.ptr<f32>
  tt.return
}

// A pointer block advanced by a uniform step is carried by its start alone (an index): the
// strides stay loop-invariant and each load is a view at the carried start.
// CHECK-LABEL: func.func public @carried_block
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[START:.+]] = %{{.+}}, %{{.+}} = %{{.+}}) -> (index, tensor<32xf32>)
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [%[[START]]], sizes: [32], strides: [1]
// CHECK: %[[NEXT:.+]] = arith.addi %{{.+}}, %[[START]] : index
// CHECK: scf.yield %[[NEXT]], %{{.+}} : index, tensor<32xf32>
tt.func public @carried_block(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %step = arith.constant dense<32> : tensor<32xi32>
  %range = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %range : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
  %zero = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %xp, %acc = %zero) -> (tensor<32x!tt.ptr<f32>>, tensor<32xf32>)  : i32 {
    %v = tt.load %p : tensor<32x!tt.ptr<f32>>
    %a = arith.addf %acc, %v : tensor<32xf32>
    %q = tt.addptr %p, %step : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    scf.yield %q, %a : tensor<32x!tt.ptr<f32>>, tensor<32xf32>
  }
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
  %yp = tt.addptr %ys, %range : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
  tt.store %yp, %r#1 : tensor<32x!tt.ptr<f32>>
  tt.return
}

// Negative case: the yield doubles the strides (`p + range`), so the block keeps its offsets
// (a tensor of i64) through the loop and its load gathers.
// CHECK-LABEL: func.func public @carried_block_changing_strides
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (tensor<32xi64>)
// CHECK: memref.load
tt.func public @carried_block_changing_strides(%x: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %range = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %range : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%p = %xp) -> (tensor<32x!tt.ptr<f32>>)  : i32 {
    %v = tt.load %p : tensor<32x!tt.ptr<f32>>
    tt.store %p, %v : tensor<32x!tt.ptr<f32>>
    %q = tt.addptr %p, %range : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    scf.yield %q : tensor<32x!tt.ptr<f32>>
  }
  tt.return
}

// Rows wrapping around `% M` are read run by run: an scf.while over the rows, each run a view
// at its first row and a copy into the rows of the buffer it fills.
// CHECK-LABEL: func.func public @wrapped_rows
// CHECK: %[[BUF:.+]] = memref.alloc() : memref<16xf32>
// CHECK: scf.while (%[[P0:.+]] = %{{.+}}) : (index) -> index
// CHECK: scf.condition
// CHECK: ^bb0(%[[P:.+]]: index):
// CHECK: arith.remsi
// CHECK: %[[ROOM:.+]] = arith.minsi
// CHECK: %[[RUN:.+]] = arith.select %{{.+}}, %[[ROOM]], %{{.+}} : index
// CHECK: %[[VIEW:.+]] = memref.reinterpret_cast
// CHECK: %[[PIECE:.+]] = memref.subview %[[VIEW]][0] [%[[RUN]]] [1]
// CHECK: %[[ROWS:.+]] = memref.subview %[[BUF]][%[[P]]] [%[[RUN]]] [1]
// CHECK: memref.copy %[[PIECE]], %[[ROWS]]
// CHECK: %[[NEXT:.+]] = arith.addi %[[P]], %[[RUN]] : index
// CHECK: scf.yield %[[NEXT]] : index
tt.func public @wrapped_rows(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %m: i32) {
  %pid = tt.get_program_id x : i32
  %c16 = arith.constant 16 : i32
  %start = arith.muli %pid, %c16 : i32
  %range = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %s = tt.splat %start : i32 -> tensor<16xi32>
  %rows = arith.addi %s, %range : tensor<16xi32>
  %ms = tt.splat %m : i32 -> tensor<16xi32>
  %wrapped = arith.remsi %rows, %ms : tensor<16xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %wrapped : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %v = tt.load %xp : tensor<16x!tt.ptr<f32>>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %yp = tt.addptr %ys, %rows : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  tt.store %yp, %v : tensor<16x!tt.ptr<f32>>
  tt.return
}

// A reduction with a custom combine region (argmax's pair): linalg.reduce of the slices after
// the first into the first, the region inlined as its body (combine(accumulated, next)).
// CHECK-LABEL: func.func public @reduce_custom
// CHECK: %[[V0:.+]] = tensor.extract_slice %[[V:.+]][0] [1] [1] : tensor<8xf32> to tensor<f32>
// CHECK: %[[I0:.+]] = tensor.extract_slice %[[I:.+]][0] [1] [1] : tensor<8xi32> to tensor<i32>
// CHECK: %[[VS:.+]] = tensor.extract_slice %[[V]][1] [7] [1] : tensor<8xf32> to tensor<7xf32>
// CHECK: %[[IS:.+]] = tensor.extract_slice %[[I]][1] [7] [1] : tensor<8xi32> to tensor<7xi32>
// CHECK: linalg.reduce ins(%[[VS]], %[[IS]] : tensor<7xf32>, tensor<7xi32>) outs(%[[V0]], %[[I0]] : tensor<f32>, tensor<i32>) dimensions = [0]
// CHECK-NEXT: (%[[IN:.+]]: f32, %[[IN_I:.+]]: i32, %[[ACC:.+]]: f32, %[[ACC_I:.+]]: i32) {
// CHECK-NEXT: %[[PICK:.+]] = arith.cmpf oge, %[[ACC]], %[[IN]] : f32
// CHECK-NEXT: %[[BEST:.+]] = arith.select %[[PICK]], %[[ACC]], %[[IN]] : f32
// CHECK-NEXT: %[[BEST_I:.+]] = arith.select %[[PICK]], %[[ACC_I]], %[[IN_I]] : i32
// CHECK-NEXT: linalg.yield %[[BEST]], %[[BEST_I]] : f32, i32
tt.func public @reduce_custom(%v: tensor<8xf32>, %i: tensor<8xi32>, %y: !tt.ptr<i32>) {
  %r:2 = "tt.reduce"(%v, %i) <{axis = 0 : i32}> ({
  ^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
    %pick = arith.cmpf oge, %a, %b : f32
    %best = arith.select %pick, %a, %b : f32
    %best_i = arith.select %pick, %ai, %bi : i32
    tt.reduce.return %best, %best_i : f32, i32
  }) : (tensor<8xf32>, tensor<8xi32>) -> (f32, i32)
  tt.store %y, %r#1 : !tt.ptr<i32>
  tt.return
}

// tt.dot accumulates into its c: linalg.matmul, the f16 inputs widened by its semantics.
// CHECK-LABEL: func.func public @dot
// CHECK: %[[D:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<16x32xf16>, tensor<32x16xf16>) outs(%{{.+}} : tensor<16x16xf32>) -> tensor<16x16xf32>
tt.func public @dot(%a: tensor<16x32xf16>, %b: tensor<32x16xf16>, %c: tensor<16x16xf32>, %y: !tt.ptr<f32>) {
  %d = tt.dot %a, %b, %c, inputPrecision = tf32 : tensor<16x32xf16> * tensor<32x16xf16> -> tensor<16x16xf32>
  %r = "tt.reduce"(%d) <{axis = 0 : i32}> ({
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tt.reduce.return %s : f32
  }) : (tensor<16x16xf32>) -> tensor<16xf32>
  %r2 = "tt.reduce"(%r) <{axis = 0 : i32}> ({
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tt.reduce.return %s : f32
  }) : (tensor<16xf32>) -> f32
  tt.store %y, %r2 : !tt.ptr<f32>
  tt.return
}

// An inclusive scan: a loop along the axis carrying the running value, combined with the next
// slice by a linalg.generic and inserted into the result.
// CHECK-LABEL: func.func public @scan
// CHECK: %[[FIRST:.+]] = tensor.extract_slice %{{.+}}[0] [1] [1] : tensor<8xi32> to tensor<i32>
// CHECK: %[[INIT:.+]] = tensor.insert_slice %[[FIRST]] into %{{.+}}[0] [1] [1]
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[OUT:.+]] = %[[INIT]], %[[RUNNING:.+]] = %[[FIRST]]) -> (tensor<8xi32>, tensor<i32>)
// CHECK: %[[NEXT:.+]] = tensor.extract_slice %{{.+}}[%[[K]]] [1] [1]
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[RUNNING]], %[[NEXT]] : tensor<i32>, tensor<i32>)
// CHECK: arith.addi
// CHECK: %[[PLACED:.+]] = tensor.insert_slice %[[SUM]] into %[[OUT]][%[[K]]] [1] [1]
// CHECK: scf.yield %[[PLACED]], %[[SUM]] : tensor<8xi32>, tensor<i32>
tt.func public @scan(%v: tensor<8xi32>, %y: !tt.ptr<i32>) {
  %r = "tt.scan"(%v) <{axis = 0 : i32, reverse = false}> ({
  ^bb0(%p: i32, %q: i32):
    %s = arith.addi %p, %q : i32
    tt.scan.return %s : i32
  }) : (tensor<8xi32>) -> tensor<8xi32>
  %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ys = tt.splat %y : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
  %yp = tt.addptr %ys, %range : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
  tt.store %yp, %r : tensor<8x!tt.ptr<i32>>
  tt.return
}

// A block assertion checks each element in a loop nest, keeping the message.
// CHECK-LABEL: func.func public @assert_block
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NEXT: %[[OK:.+]] = tensor.extract %{{.+}}[%[[I]]] : tensor<4xi1>
// CHECK-NEXT: cf.assert %[[OK]], "x must be positive"
tt.func public @assert_block(%ok: tensor<4xi1>) {
  tt.assert %ok, "x must be positive" : tensor<4xi1>
  tt.return
}

// tl.gather: a generic over the result reading the source at the gathered row and the
// result's own column.
// CHECK-LABEL: func.func public @gather_rows
// CHECK-SAME: (%[[SRC:[^:]+]]: tensor<8x4xf32>, %[[IDX:[^:]+]]: tensor<2x4xi32>
// CHECK: linalg.generic {{.+}} ins(%[[IDX]] : tensor<2x4xi32>)
// CHECK-NEXT: ^bb0(%[[ROW:[^:]+]]: i32,
// CHECK-NEXT: %[[COL:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[AT:.+]] = arith.index_cast %[[ROW]] : i32 to index
// CHECK-NEXT: %[[X:.+]] = tensor.extract %[[SRC]][%[[AT]], %[[COL]]] : tensor<8x4xf32>
// CHECK-NEXT: linalg.yield %[[X]] : f32
tt.func public @gather_rows(%src: tensor<8x4xf32>, %idx: tensor<2x4xi32>, %y: !tt.ptr<f32>) {
  %g = tt.gather %src[%idx] {axis = 0 : i32} : (tensor<8x4xf32>, tensor<2x4xi32>) -> tensor<2x4xf32>
  %flat = tt.reshape %g : tensor<2x4xf32> -> tensor<8xf32>
  %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %yp = tt.addptr %ys, %range : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  tt.store %yp, %flat : tensor<8x!tt.ptr<f32>>
  tt.return
}

// tl.histogram: a loop over the input carrying the counts; an element in a bin and on in the
// mask adds one to its bin.
// CHECK-LABEL: func.func public @histogram
// CHECK: %[[ZEROS:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%{{.+}} : tensor<4xi32>)
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[COUNTS:.+]] = %[[ZEROS]]) -> (tensor<4xi32>)
// CHECK: %[[X:.+]] = tensor.extract %{{.+}}[%[[I]]] : tensor<16xi32>
// CHECK: arith.cmpi sge, %[[X]]
// CHECK: arith.cmpi slt, %[[X]]
// CHECK: %[[ON:.+]] = tensor.extract %{{.+}}[%[[I]]] : tensor<16xi1>
// CHECK: %[[COUNTED:.+]] = arith.andi %{{.+}}, %[[ON]] : i1
// CHECK: scf.if %[[COUNTED]] -> (tensor<4xi32>)
// CHECK: %[[BIN:.+]] = arith.index_cast %[[X]] : i32 to index
// CHECK: %[[OLD:.+]] = tensor.extract %[[COUNTS]][%[[BIN]]]
// CHECK: %[[NEW:.+]] = arith.addi %[[OLD]]
// CHECK: tensor.insert %[[NEW]] into %[[COUNTS]][%[[BIN]]]
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[COUNTS]]
tt.func public @histogram(%x: tensor<16xi32>, %m: tensor<16xi1>, %y: !tt.ptr<i32>) {
  %h = tt.histogram %x, %m : tensor<16xi32> -> tensor<4xi32>
  %range = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %ys = tt.splat %y : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
  %yp = tt.addptr %ys, %range : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
  tt.store %yp, %h : tensor<4x!tt.ptr<i32>>
  tt.return
}

// A tensor descriptor is a box: the block at offsets is the view at Σ offset·stride, with the
// window `0 <= offset + i < shape` per dimension (a window that may start inside the block).
// CHECK-LABEL: func.func public @descriptor_copy
// CHECK-SAME: (%[[A:[^:]+]]: memref<*xf16>, %[[B:[^:]+]]: memref<*xf16>,
// CHECK: %[[BUF:.+]] = memref.alloc() : memref<16x32xf16>
// CHECK: %[[VIEW:.+]] = memref.reinterpret_cast %[[A]] to offset: [%{{.+}}], sizes: [16, 32], strides: [%{{.+}}, 1]
// CHECK: %[[WINDOW:.+]] = memref.subview %[[VIEW]][%[[LOW0:.+]], %[[LOW1:.+]]] [%[[SIZE0:.+]], %[[SIZE1:.+]]] [1, 1]
// CHECK: %[[TARGET:.+]] = memref.subview %[[BUF]][%[[LOW0]], %[[LOW1]]] [%[[SIZE0]], %[[SIZE1]]] [1, 1]
// CHECK: memref.copy %[[WINDOW]], %[[TARGET]]
// CHECK: memref.reinterpret_cast %[[B]]
// CHECK: bufferization.materialize_in_destination
// CHECK-NOT: tt.
tt.func public @descriptor_copy(%a: !tt.ptr<f16>, %b: !tt.ptr<f16>, %m: i32, %n: i32, %x: i32, %y: i32) {
  %c1 = arith.constant 1 : i64
  %stride = arith.extsi %n : i32 to i64
  %da = tt.make_tensor_descriptor %a, [%m, %n], [%stride, %c1] : <f16>, <16x32xf16>
  %db = tt.make_tensor_descriptor %b, [%m, %n], [%stride, %c1] : <f16>, <16x32xf16>
  %v = tt.descriptor_load %da[%x, %y] : !tt.tensordesc<16x32xf16> -> tensor<16x32xf16>
  tt.descriptor_store %db[%x, %y], %v : !tt.tensordesc<16x32xf16>, tensor<16x32xf16>
  tt.return
}

// TTIR's own elementwise ops become upstream ones with the same results; an external
// function (libdevice's names) stays a call the CPU back end implements.
// CHECK-LABEL: func.func public @tt_elementwise
// CHECK: %[[XW:.+]] = arith.extui %{{.+}} : i32 to i64
// CHECK: %[[YW:.+]] = arith.extui %{{.+}} : i32 to i64
// CHECK: %[[P:.+]] = arith.muli %[[XW]], %[[YW]] : i64
// CHECK: %[[HIGH:.+]] = arith.shrui %[[P]], %{{.+}} : i64
// CHECK: arith.trunci %[[HIGH]] : i64 to i32
// CHECK: %[[LOW:.+]] = arith.maxnumf %{{.+}}, %{{.+}} : f32
// CHECK: arith.minnumf %[[LOW]], %{{.+}} : f32
// CHECK: %[[LOWN:.+]] = arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK: arith.minimumf %[[LOWN]], %{{.+}} : f32
// CHECK: arith.divf
// CHECK: math.sqrt
// CHECK: arith.truncf %{{.+}} toward_zero : f32 to bf16
// CHECK: %[[WIDE:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK: arith.truncf %[[WIDE]] : f32 to bf16
// CHECK: tt.extern_elementwise %{{.+}} {libname = "", libpath = "", pure = true, symbol = "__nv_expf"} : (f32) -> f32
tt.func public @tt_elementwise(%i: i32, %f: f32, %h: f16, %out: !tt.ptr<i32>, %fout: !tt.ptr<f32>, %bout: !tt.ptr<bf16>) {
  %hi = tt.mulhiui %i, %i : i32
  tt.store %out, %hi : !tt.ptr<i32>
  %lo = arith.constant -1.000000e+00 : f32
  %up = arith.constant 1.000000e+00 : f32
  %c = tt.clampf %f, %lo, %up, propagateNan = none : f32
  %cn = tt.clampf %f, %lo, %up, propagateNan = all : f32
  %d = tt.precise_divf %c, %cn : f32
  %s = tt.precise_sqrt %d : f32
  %b = tt.fp_to_fp %s, rounding = rtz : f32 -> bf16
  %hb = tt.fp_to_fp %h, rounding = rtne : f16 -> bf16
  %e = tt.extern_elementwise %s {libname = "", libpath = "", pure = true, symbol = "__nv_expf"} : (f32) -> f32
  tt.store %fout, %e : !tt.ptr<f32>
  tt.store %bout, %b : !tt.ptr<bf16>
  tt.store %bout, %hb : !tt.ptr<bf16>
  tt.return
}

// A pointer's address is its argument's aligned base plus its offset in bytes; a pointer made
// from an integer indexes memory, a view whose element i lies at address i * 4, made once at
// the entry from an empty buffer shifted back by its own address. Accesses through it gather
// and scatter; the other accesses keep their strided views (the store of the addresses).
// CHECK-LABEL: func.func public @pointer_integer_casts
// CHECK-SAME: (%[[X:[^:]+]]: memref<*xf32>, %[[A:[^:]+]]: i64, %[[OUT:[^:]+]]: memref<*xi64>,
// CHECK: %[[ANCHOR:.+]] = memref.alloca() : memref<0xi8>
// CHECK-NEXT: %[[AT:.+]] = memref.extract_aligned_pointer_as_index %[[ANCHOR]] : memref<0xi8> -> index
// CHECK: %[[SHIFT:.+]] = arith.subi %{{.+}}, %[[AT]] : index
// CHECK: %[[VIEW:.+]] = memref.view %[[ANCHOR]][%[[SHIFT]]][%{{.+}}] : memref<0xi8> to memref<?xf32>
// CHECK-NEXT: %[[MEMORY:.+]] = memref.cast %[[VIEW]] : memref<?xf32> to memref<*xf32>
// CHECK-NEXT: %[[ELEMENTS:.+]] = memref.cast %[[MEMORY]] : memref<*xf32> to memref<?xf32>
// CHECK-NEXT: %[[FLAT:.+]] = memref.cast %[[X]] : memref<*xf32> to memref<?xf32>
// CHECK: %[[BASE:.+]] = memref.extract_aligned_pointer_as_index %[[FLAT]] : memref<?xf32> -> index
// CHECK: %[[BASE64:.+]] = arith.index_cast %[[BASE]] : index to i64
// CHECK: linalg.generic
// CHECK: %[[BYTES:.+]] = arith.muli %{{.+}}, %{{.+}} : i64
// CHECK-NEXT: arith.addi %[[BASE64]], %[[BYTES]] : i64
// CHECK: memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [4], strides: [1]
// CHECK: %[[I:.+]] = arith.divsi %[[A]], %{{.+}} : i64
// CHECK: %[[P:.+]] = arith.index_cast %[[I]] : i64 to index
// CHECK: memref.store %{{.+}}, %[[ELEMENTS]][%[[P]]] : memref<?xf32>
tt.func public @pointer_integer_casts(%x: !tt.ptr<f32>, %a: i64, %out: !tt.ptr<i64>) {
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %r : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
  %addresses = tt.ptr_to_int %xp : tensor<4x!tt.ptr<f32>> -> tensor<4xi64>
  %os = tt.splat %out : !tt.ptr<i64> -> tensor<4x!tt.ptr<i64>>
  %op = tt.addptr %os, %r : tensor<4x!tt.ptr<i64>>, tensor<4xi32>
  tt.store %op, %addresses : tensor<4x!tt.ptr<i64>>
  %p = tt.int_to_ptr %a : i64 -> !tt.ptr<f32>
  %one = arith.constant 1.0 : f32
  tt.store %p, %one : !tt.ptr<f32>
  tt.return
}

// tt.map_elementwise: a parallel generic over its operands whose body is the scalar region,
// its scf.if on the scalars included.
// CHECK-LABEL: func.func public @map_elementwise
// CHECK-SAME: (%[[V:[^:]+]]: tensor<8xf32>, %[[W:[^:]+]]: tensor<8xf32>,
// CHECK: linalg.generic {{.+}} ins(%[[V]], %[[W]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: f32, %[[B:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[LT:.+]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[M:.+]] = scf.if %[[LT]] -> (f32) {
// CHECK: arith.subf %[[A]], %[[B]] : f32
// CHECK: linalg.yield %[[M]] : f32
tt.func public @map_elementwise(%v: tensor<8xf32>, %w: tensor<8xf32>, %y: !tt.ptr<f32>) {
  %r = "tt.map_elementwise"(%v, %w) <{pack = 1 : i32}> ({
  ^bb0(%a: f32, %b: f32):
    %lt = arith.cmpf olt, %a, %b : f32
    %m = scf.if %lt -> (f32) {
      scf.yield %b : f32
    } else {
      %d = arith.subf %a, %b : f32
      scf.yield %d : f32
    }
    tt.map_elementwise.return %m : f32
  }) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %yp = tt.addptr %ys, %range : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  tt.store %yp, %r : tensor<8x!tt.ptr<f32>>
  tt.return
}

// pack 2 over a 2x4 block: the operand flattened, each element reads its pair (the group's
// start is its index less its lane), the region runs on the pair, and a select keeps the
// element's own lane of the result (lane 1: the region's second value).
// CHECK-LABEL: func.func public @map_elementwise_pack
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1]] : tensor<2x4xi32> into tensor<8xi32>
// CHECK: linalg.generic
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[LANE:.+]] = arith.remui %[[I]], %{{.+}} : index
// CHECK: %[[START:.+]] = arith.subi %[[I]], %[[LANE]] : index
// CHECK: %[[X0:.+]] = tensor.extract %[[FLAT]][%{{.+}}] : tensor<8xi32>
// CHECK: %[[X1:.+]] = tensor.extract %[[FLAT]][%{{.+}}] : tensor<8xi32>
// CHECK: %[[SUM:.+]] = arith.addi %[[X0]], %[[X1]] : i32
// CHECK: %[[SECOND:.+]] = arith.cmpi eq, %[[LANE]], %{{.+}} : index
// CHECK: %[[PICK:.+]] = arith.select %[[SECOND]], %[[X0]], %[[SUM]] : i32
// CHECK: linalg.yield %[[PICK]] : i32
// CHECK: tensor.expand_shape
tt.func public @map_elementwise_pack(%v: tensor<2x4xi32>, %y: !tt.ptr<i32>) {
  %r = "tt.map_elementwise"(%v) <{pack = 2 : i32}> ({
  ^bb0(%a0: i32, %a1: i32):
    %s = arith.addi %a0, %a1 : i32
    tt.map_elementwise.return %s, %a0 : i32, i32
  }) : (tensor<2x4xi32>) -> tensor<2x4xi32>
  %flat = tt.reshape %r : tensor<2x4xi32> -> tensor<8xi32>
  %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ys = tt.splat %y : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
  %yp = tt.addptr %ys, %range : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
  tt.store %yp, %flat : tensor<8x!tt.ptr<i32>>
  tt.return
}

// A reshape whose shapes nest is one view op: a dimension split into consecutive ones is one
// expand_shape, consecutive dimensions merged are one collapse_shape (either stays a view of a
// strided block); shapes that do not nest go through one dimension.
// CHECK-LABEL: func.func public @reshapes
// CHECK: %[[SPLIT:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [8, 16, 16] : tensor<8x256xf32> into tensor<8x16x16xf32>
// CHECK: tensor.collapse_shape %[[SPLIT]] {{\[}}[0], [1, 2]] : tensor<8x16x16xf32> into tensor<8x256xf32>
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2]] output_shape [1, 8, 256] : tensor<8x256xf32> into tensor<1x8x256xf32>
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [2, 8] : tensor<16xf32> into tensor<2x8xf32>
tt.func public @reshapes(%x: tensor<8x256xf32>, %s: tensor<4x4xf32>) {
  %split = tt.reshape %x : tensor<8x256xf32> -> tensor<8x16x16xf32>
  %merged = tt.reshape %split : tensor<8x16x16xf32> -> tensor<8x256xf32>
  %lead = tt.reshape %x : tensor<8x256xf32> -> tensor<1x8x256xf32>
  %other = tt.reshape %s : tensor<4x4xf32> -> tensor<2x8xf32>
  tt.print " " {hex = false, isSigned = array<i32: 0, 0, 0>} : %merged, %lead, %other : tensor<8x256xf32>, tensor<1x8x256xf32>, tensor<2x8xf32>
  tt.return
}
