// RUN: naiad-opt %s -p cpu-carried-reductions | filecheck %s

// naiad.ops' amax: a NaN-propagating maximum kept by a select in the loop, reduced by maximumf
// after it. The loop carries the select of each step's reduction instead of the block.
// CHECK-LABEL: tt.func @select_maximum
// CHECK: %[[INIT:.+]] = "tt.reduce"(%{{.+}})
// CHECK: arith.maximumf
// CHECK: scf.for {{.+}} iter_args(%[[R:[a-z0-9_]+]] = %[[INIT]]) -> (f32)
// CHECK: %[[P:.+]] = "tt.reduce"(%{{.+}})
// CHECK: arith.maximumf
// CHECK: %[[GT:.+]] = arith.cmpf ogt, %[[P]], %[[R]] : f32
// CHECK-NEXT: %[[NAN:.+]] = arith.cmpf une, %[[P]], %[[P]] : f32
// CHECK-NEXT: %[[EITHER:.+]] = arith.ori %[[GT]], %[[NAN]] : i1
// CHECK-NEXT: %[[S:.+]] = arith.select %[[EITHER]], %[[P]], %[[R]] : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NOT: tensor<256xf32>)  :
// CHECK: tt.return
tt.func @select_maximum(%x: !tt.ptr<f32>, %n: i32) -> f32 {
  %init = arith.constant dense<0xFF800000> : tensor<256xf32>
  %c0 = arith.constant 0 : i32
  %c256 = arith.constant 256 : i32
  %acc = scf.for %i = %c0 to %n step %c256 iter_args(%a = %init) -> (tensor<256xf32>) : i32 {
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %s = tt.splat %x : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %p = tt.addptr %s, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %v = tt.load %p : tensor<256x!tt.ptr<f32>>
    %gt = arith.cmpf ogt, %v, %a : tensor<256xf32>
    %nan = arith.cmpf une, %v, %v : tensor<256xf32>
    %either = arith.ori %gt, %nan : tensor<256xi1>
    %next = arith.select %either, %v, %a : tensor<256xi1>, tensor<256xf32>
    scf.yield %next : tensor<256xf32>
  }
  %m = "tt.reduce"(%acc) <{axis = 0 : i32}> ({
  ^bb0(%l: f32, %k: f32):
    %mx = arith.maximumf %l, %k : f32
    tt.reduce.return %mx : f32
  }) : (tensor<256xf32>) -> f32
  tt.return %m : f32
}

// The same select reduced by maxnumf (tl.max), which lets a number win over a lane's NaN:
// reduced step by step, a NaN would reach the carried value; the block stays carried.
// CHECK-LABEL: tt.func @select_then_maxnum
// CHECK: scf.for {{.+}} -> (tensor<256xf32>)
// CHECK: arith.select {{.+}} : tensor<256xi1>, tensor<256xf32>
// CHECK: arith.maxnumf
tt.func @select_then_maxnum(%x: !tt.ptr<f32>, %n: i32) -> f32 {
  %init = arith.constant dense<0xFF800000> : tensor<256xf32>
  %c0 = arith.constant 0 : i32
  %c256 = arith.constant 256 : i32
  %acc = scf.for %i = %c0 to %n step %c256 iter_args(%a = %init) -> (tensor<256xf32>) : i32 {
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %s = tt.splat %x : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %p = tt.addptr %s, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %v = tt.load %p : tensor<256x!tt.ptr<f32>>
    %gt = arith.cmpf ogt, %v, %a : tensor<256xf32>
    %nan = arith.cmpf une, %v, %v : tensor<256xf32>
    %either = arith.ori %gt, %nan : tensor<256xi1>
    %next = arith.select %either, %v, %a : tensor<256xi1>, tensor<256xf32>
    scf.yield %next : tensor<256xf32>
  }
  %m = "tt.reduce"(%acc) <{axis = 0 : i32}> ({
  ^bb0(%l: f32, %k: f32):
    %mx = arith.maxnumf %l, %k : f32
    tt.reduce.return %mx : f32
  }) : (tensor<256xf32>) -> f32
  tt.return %m : f32
}
