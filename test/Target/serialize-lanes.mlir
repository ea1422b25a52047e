// RUN: rnn-opt %s --rnn-serialize-lanes | FileCheck %s

// rnn-serialize-lanes (the CPU's lowering of lanes) erases the lane ops:
// the ops between fork and join run in program order, which respects every
// signal and wait. Nothing else changes.

// CHECK-LABEL: func.func @wavefront(
// CHECK-NOT: rnn.
// CHECK: scf.for
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @wavefront(%a: memref<4xf32>, %b: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  rnn.fork
  rnn.lane 0
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %v, %a[%i] : memref<4xf32>
    rnn.signal %i
  }
  rnn.lane 1
  scf.for %i = %c0 to %c4 step %c1 {
    rnn.wait %i
    %x = memref.load %a[%i] : memref<4xf32>
    memref.store %x, %b[%i] : memref<4xf32>
  }
  rnn.join
  return
}
