// RUN: rnn-opt %s -split-input-file --rnn-dse | FileCheck %s

// A select between a buffer nothing reads and a live one may write the live
// one: the stores through it are kept, and so is the buffer.

// CHECK-LABEL: func.func @select_with_live_buffer
// CHECK-SAME: (%[[OUT:.+]]: memref<8xf32>, %[[C:.+]]: i1
// CHECK: %[[DEAD:.+]] = memref.alloc()
// CHECK: %[[SEL:.+]] = arith.select %[[C]], %[[DEAD]], %[[OUT]]
// CHECK: memref.store %{{.+}}, %[[SEL]]
// CHECK: memref.dealloc %[[DEAD]]
func.func @select_with_live_buffer(%out: memref<8xf32>, %c: i1, %v: f32,
                                   %i: index) {
  %dead = memref.alloc() : memref<8xf32>
  %sel = arith.select %c, %dead, %out : memref<8xf32>
  memref.store %v, %sel[%i] : memref<8xf32>
  memref.dealloc %dead : memref<8xf32>
  return
}

// -----

// A select between two views of the same dead buffer is still dead.

// CHECK-LABEL: func.func @select_within_dead_buffer
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.store
// CHECK: return
func.func @select_within_dead_buffer(%c: i1, %v: f32, %i: index) {
  %dead = memref.alloc() : memref<2x8xf32>
  %a = memref.subview %dead[0, 0] [1, 8] [1, 1]
      : memref<2x8xf32> to memref<8xf32, strided<[1]>>
  %b = memref.subview %dead[1, 0] [1, 8] [1, 1]
      : memref<2x8xf32> to memref<8xf32, strided<[1], offset: 8>>
  %bc = memref.cast %b
      : memref<8xf32, strided<[1], offset: 8>> to memref<8xf32, strided<[1], offset: ?>>
  %ac = memref.cast %a
      : memref<8xf32, strided<[1]>> to memref<8xf32, strided<[1], offset: ?>>
  %sel = arith.select %c, %ac, %bc : memref<8xf32, strided<[1], offset: ?>>
  memref.store %v, %sel[%i] : memref<8xf32, strided<[1], offset: ?>>
  memref.dealloc %dead : memref<2x8xf32>
  return
}
