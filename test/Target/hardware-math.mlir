// RUN: rnn-opt %s -split-input-file --rnn-hardware-math | FileCheck %s
// RUN: rnn-opt %s -split-input-file --rnn-hardware-math=tanh-approx=1 | FileCheck %s --check-prefix=APPROX

// rnn-hardware-math (the cuda target's gpu-math=ex2|approx, on the
// kernels): exp(x) becomes ex2.approx of x * log2(e); tanh(x) becomes
// 1 - 2 / (exp(2x) + 1) from that exp, or with tanh-approx the tanh
// intrinsic with `afn`, which NVPTX emits as tanh.approx.f32.

// CHECK-LABEL: func.func @scalars(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: f32
// CHECK: [[X2:%[[:alnum:]_]+]] = arith.addf [[X]], [[X]] : f32
// CHECK: [[LOG2E:%[[:alnum:]_]+]] = arith.constant 1.44269502 : f32
// CHECK: [[S:%[[:alnum:]_]+]] = arith.mulf [[X2]], [[LOG2E]] : f32
// CHECK: [[E:%[[:alnum:]_]+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"([[S]]) : (f32) -> f32
// CHECK: [[ONE:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK: [[D:%[[:alnum:]_]+]] = arith.addf [[E]], [[ONE]] : f32
// CHECK: [[TWO:%[[:alnum:]_]+]] = arith.constant 2.000000e+00 : f32
// CHECK: [[Q:%[[:alnum:]_]+]] = arith.divf [[TWO]], [[D]] : f32
// CHECK: [[ONE2:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK: [[T:%[[:alnum:]_]+]] = arith.subf [[ONE2]], [[Q]] : f32
// CHECK: [[LOG2E2:%[[:alnum:]_]+]] = arith.constant 1.44269502 : f32
// CHECK: [[SX:%[[:alnum:]_]+]] = arith.mulf [[X]], [[LOG2E2]] : f32
// CHECK: [[EX:%[[:alnum:]_]+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"([[SX]]) : (f32) -> f32
// CHECK: return [[T]], [[EX]]
// CHECK-NOT: math.

// APPROX-LABEL: func.func @scalars(
// APPROX-SAME: [[X:%[[:alnum:]_]+]]: f32
// APPROX: [[T:%[[:alnum:]_]+]] = llvm.intr.tanh([[X]]) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
// APPROX: [[EX:%[[:alnum:]_]+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// APPROX: return [[T]], [[EX]]
func.func @scalars(%x: f32) -> (f32, f32) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  return %t, %e : f32, f32
}

// -----

// A vector of f32, as the kernels' 128-bit accesses give: lane by lane
// (NVPTX selects neither instruction on a vector).

// APPROX-LABEL: func.func @vector(
// APPROX-SAME: [[V:%[[:alnum:]_]+]]: vector<2xf32>
// APPROX: [[V0:%[[:alnum:]_]+]] = vector.extract [[V]][0] : f32 from vector<2xf32>
// APPROX: [[T0:%[[:alnum:]_]+]] = llvm.intr.tanh([[V0]])
// APPROX: [[V1:%[[:alnum:]_]+]] = vector.extract [[V]][1] : f32 from vector<2xf32>
// APPROX: [[T1:%[[:alnum:]_]+]] = llvm.intr.tanh([[V1]])
// APPROX: [[T:%[[:alnum:]_]+]] = vector.from_elements [[T0]], [[T1]] : vector<2xf32>
// APPROX: return [[T]]
// CHECK-LABEL: func.func @vector(
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// CHECK: vector.from_elements
// CHECK-NOT: math.
func.func @vector(%v: vector<2xf32>) -> vector<2xf32> {
  %t = math.tanh %v : vector<2xf32>
  return %t : vector<2xf32>
}

// -----

// Other element types, vectors of more than one dimension and other math
// ops keep their math ops (the NVVM lowering calls libdevice for them).

// CHECK-LABEL: func.func @others(
// CHECK: math.tanh {{.*}} : f64
// CHECK: math.exp {{.*}} : f16
// CHECK: math.exp {{.*}} : vector<2x2xf32>
// CHECK: math.exp2 {{.*}} : f32
// CHECK: math.log {{.*}} : f32
// CHECK-NOT: llvm.
func.func @others(%a: f64, %b: f16, %c: vector<2x2xf32>, %x: f32)
    -> (f64, f16, vector<2x2xf32>, f32, f32) {
  %t = math.tanh %a : f64
  %e = math.exp %b : f16
  %v = math.exp %c : vector<2x2xf32>
  %p = math.exp2 %x : f32
  %l = math.log %x : f32
  return %t, %e, %v, %p, %l : f64, f16, vector<2x2xf32>, f32, f32
}
