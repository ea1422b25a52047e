// RUN: rnn-opt %s -split-input-file --rnn-approximate-math | FileCheck %s
// RUN: rnn-opt %s -split-input-file --rnn-approximate-math=tanh-exp=0 | FileCheck %s --check-prefix=KEEP

// rnn-approximate-math replaces math.tanh and math.exp (scalar and vector)
// by polynomial approximations built from arith and math.fma, so that the
// gate math needs no libm; every other math op is left as it is. With
// tanh-exp=0 (the cuda target's gpu-math=ex2|approx, for
// rnn-hardware-math) tanh and exp stay.

// KEEP-LABEL: func.func @gate_math(
// KEEP: math.tanh {{.*}} : f32
// KEEP: math.exp {{.*}} : f32
// KEEP-NOT: math.fma
// KEEP-LABEL: func.func @vectors(
// KEEP: math.tanh {{.*}} : vector<8xf32>
// KEEP: math.exp {{.*}} : vector<8xf32>

// Scalar tanh and exp inside a loop body, as convert-rnn-to-loops emits
// them: both are expanded, the loop and the stores stay.

// CHECK-LABEL: func.func @gate_math(
// CHECK-NOT: math.{{(tanh|exp) }}
// CHECK: scf.parallel
// CHECK-NOT: math.{{(tanh|exp) }}
// CHECK: math.fma {{.*}} : f32
// CHECK-NOT: math.{{(tanh|exp) }}
// CHECK: memref.store
// CHECK-NOT: math.{{(tanh|exp) }}
// CHECK: math.fma {{.*}} : f32
// CHECK-NOT: math.{{(tanh|exp) }}
// CHECK: memref.store
// CHECK-NOT: math.{{(tanh|exp) }}
// CHECK: scf.reduce
// CHECK-NOT: math.{{(tanh|exp) }}
// CHECK: return
func.func @gate_math(%pre: memref<4xf32>, %act: memref<4xf32>,
                     %sig: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %pre[%i] : memref<4xf32>
    %t = math.tanh %x : f32
    memref.store %t, %act[%i] : memref<4xf32>
    %n = arith.negf %x : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %one, %d : f32
    memref.store %s, %sig[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// Vector operands, as the vectorized loops emit them.

// CHECK-LABEL: func.func @vectors(
// CHECK-NOT: math.{{(tanh|exp) }}
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK-NOT: math.{{(tanh|exp) }}
// CHECK: return
func.func @vectors(%v: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %t = math.tanh %v : vector<8xf32>
  %e = math.exp %v : vector<8xf32>
  return %t, %e : vector<8xf32>, vector<8xf32>
}

// -----

// Other math ops are kept, even those upstream can also approximate.

// CHECK-LABEL: func.func @others(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: f32
// CHECK-DAG: [[LOG:%[[:alnum:]_]+]] = math.log [[X]] : f32
// CHECK-DAG: [[SQRT:%[[:alnum:]_]+]] = math.sqrt [[X]] : f32
// CHECK-DAG: [[SIN:%[[:alnum:]_]+]] = math.sin [[X]] : f32
// CHECK-DAG: [[ERF:%[[:alnum:]_]+]] = math.erf [[X]] : f32
// CHECK-DAG: [[EXP2:%[[:alnum:]_]+]] = math.exp2 [[X]] : f32
// CHECK: return [[LOG]], [[SQRT]], [[SIN]], [[ERF]], [[EXP2]]
func.func @others(%x: f32) -> (f32, f32, f32, f32, f32) {
  %a = math.log %x : f32
  %b = math.sqrt %x : f32
  %c = math.sin %x : f32
  %d = math.erf %x : f32
  %e = math.exp2 %x : f32
  return %a, %b, %c, %d, %e : f32, f32, f32, f32, f32
}
