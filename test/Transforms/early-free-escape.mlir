// RUN: rnn-opt %s -split-input-file --rnn-early-free | FileCheck %s
// RUN: rnn-opt %s -split-input-file --test-rnn-liveness | FileCheck %s --check-prefix=LIVE

// A buffer that flows out of a loop as an iter_arg is still used through the
// loop's result: its dealloc stays after that use.

// CHECK-LABEL: func.func @through_iter_args
// CHECK: %[[A:.+]] = memref.alloc()
// CHECK: %[[M:.+]] = scf.for
// CHECK: memref.load %[[M]]
// CHECK-NEXT: memref.dealloc %[[A]]
// LIVE-LABEL: liveness of @through_iter_args
// LIVE: buffer 32 bytes: alloc 3, last use 7, dealloc 6, escapes
func.func @through_iter_args(%i: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<8xf32>
  %m = scf.for %k = %c0 to %c4 step %c1 iter_args(%it = %a) -> (memref<8xf32>) {
    scf.yield %it : memref<8xf32>
  }
  %v = memref.load %m[%i] : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return %v : f32
}
