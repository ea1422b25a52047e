// RUN: rnn-opt %s -split-input-file --rnn-lower-begin-backward | FileCheck %s

// rnn-lower-begin-backward: each phase boundary becomes the runtime's
// phase call with phase 1, declared once; a module without a boundary is
// left as it is.

// CHECK: func.func private @rnnrt_begin_phase(i64)
// CHECK-NOT: func.func private @rnnrt_begin_phase
// CHECK-LABEL: func.func @f_grad(
// CHECK: memref.store
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @rnnrt_begin_phase(%[[ONE]]) : (i64) -> ()
// CHECK-NEXT: memref.load
// CHECK-NOT: rnn.begin_backward
// CHECK-LABEL: func.func @g_grad(
// CHECK: call @rnnrt_begin_phase(
func.func @f_grad(%x: memref<4xf32>, %v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  memref.store %v, %x[%c0] : memref<4xf32>
  rnn.begin_backward
  %w = memref.load %x[%c0] : memref<4xf32>
  return %w : f32
}
func.func @g_grad() {
  rnn.begin_backward
  return
}

// -----

// An existing declaration is used.

// CHECK: func.func private @rnnrt_begin_phase(i64)
// CHECK-NOT: func.func private @rnnrt_begin_phase
// CHECK: call @rnnrt_begin_phase(
func.func private @rnnrt_begin_phase(i64)
func.func @h_grad() {
  rnn.begin_backward
  return
}

// -----

// CHECK-LABEL: func.func @infer(
// CHECK-NOT: rnnrt_begin_phase
func.func @infer(%x: memref<4xf32>) {
  return
}
