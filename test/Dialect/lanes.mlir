// RUN: rnn-opt %s | rnn-opt | FileCheck %s
// RUN: rnn-opt %s --mlir-print-op-generic | rnn-opt | FileCheck %s

// Round trip of the lane ops: a wavefront of two lanes, the second waiting
// for the first's signal inside a loop.

// CHECK-LABEL: func.func @wavefront(
// CHECK: rnn.fork
// CHECK-NEXT: rnn.lane 0
// CHECK: scf.for
// CHECK: rnn.signal %{{.*}}
// CHECK: rnn.lane 1
// CHECK: scf.for
// CHECK: rnn.wait %{{.*}}
// CHECK: rnn.join
func.func @wavefront(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rnn.fork
  rnn.lane 0
  scf.for %i = %c0 to %n step %c1 {
    rnn.signal %i
  }
  rnn.lane 1
  scf.for %i = %c0 to %n step %c1 {
    rnn.wait %i
  }
  rnn.join
  return
}
