// RUN: rnn-opt %s -split-input-file --test-rnn-liveness -o /dev/null | FileCheck %s

// BufferLiveness, printed by -test-rnn-liveness: for each buffer allocated
// at the top level of a function, in allocation order, its role (rnn.role,
// or "buffer"), its bytes, and positions in the entry block (0-based op
// indices): the allocation, the last op that uses the buffer or one of its
// views (a use in a nested region counts at its top-level ancestor; the
// dealloc is not a use), the dealloc, and whether it is returned. Then the
// peak of bytes held in program order, a buffer without a dealloc counting
// to the end of the function. The position of each op is written next to
// it in the input.

// One buffer: stored, loaded, freed two ops later. The arith.addf after
// the load is not a use.

// CHECK-LABEL: liveness of @simple
// CHECK-NEXT: buffer 32 bytes: alloc 0, last use 2, dealloc 4
// CHECK-NEXT: peak 32 bytes
func.func @simple(%i: index, %v: f32) -> f32 {
  %a = memref.alloc() : memref<8xf32>              // 0
  memref.store %v, %a[%i] : memref<8xf32>          // 1
  %r = memref.load %a[%i] : memref<8xf32>          // 2
  %w = arith.addf %r, %v : f32                     // 3
  memref.dealloc %a : memref<8xf32>                // 4
  return %w : f32                                  // 5
}

// -----

// Uses through views: %gates is written in a loop through a select of its
// subview and a cast of %b, so the loop (position 9) is the last use of
// %gates; %b is last used by the copy after it. %y is returned through a
// cast: its last use is the return and it counts to the end. Held bytes:
// 128 + 32 + 64 = 224 from position 4 until %gates is freed.

// CHECK-LABEL: liveness of @views{{$}}
// CHECK-NEXT: gates 128 bytes: alloc 2, last use 9, dealloc 11
// CHECK-NEXT: buffer 32 bytes: alloc 3, last use 10, dealloc 13
// CHECK-NEXT: y 64 bytes: alloc 4, last use 15, returned
// CHECK-NEXT: peak 224 bytes
func.func @views(%c: i1, %n: index, %v: f32, %out: memref<8xf32>)
    -> memref<?xf32> {
  %c0 = arith.constant 0 : index                                  // 0
  %c1 = arith.constant 1 : index                                  // 1
  %gates = memref.alloc() {rnn.role = "gates"} : memref<4x8xf32>  // 2
  %b = memref.alloc() : memref<8xf32>                             // 3
  %y = memref.alloc() {rnn.role = "y"} : memref<16xf32>           // 4
  linalg.fill ins(%v : f32) outs(%gates : memref<4x8xf32>)        // 5
  %row = memref.subview %gates[%n, 0] [1, 8] [1, 1]               // 6
      : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %bv = memref.cast %b                                            // 7
      : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %sel = arith.select %c, %row, %bv                               // 8
      : memref<8xf32, strided<[1], offset: ?>>
  scf.for %i = %c0 to %n step %c1 {                               // 9
    memref.store %v, %sel[%i] : memref<8xf32, strided<[1], offset: ?>>
  }
  memref.copy %b, %out : memref<8xf32> to memref<8xf32>           // 10
  memref.dealloc %gates : memref<4x8xf32>                         // 11
  %x = memref.load %y[%c0] : memref<16xf32>                       // 12
  memref.dealloc %b : memref<8xf32>                               // 13
  %cast = memref.cast %y : memref<16xf32> to memref<?xf32>        // 14
  return %cast : memref<?xf32>                                    // 15
}

// -----

// Sizes: element count times the element size in bytes, i1 taking one
// byte; a buffer nothing uses has its last use at its allocation. With no
// dealloc every buffer counts to the end: the peak is their sum.

// CHECK-LABEL: liveness of @sizes
// CHECK-NEXT: cells 480 bytes: alloc 0, last use 0{{$}}
// CHECK-NEXT: buffer 6 bytes: alloc 1, last use 1{{$}}
// CHECK-NEXT: buffer 40 bytes: alloc 2, last use 2{{$}}
// CHECK-NEXT: buffer 6 bytes: alloc 3, last use 3{{$}}
// CHECK-NEXT: buffer 4 bytes: alloc 4, last use 4{{$}}
// CHECK-NEXT: peak 536 bytes
func.func @sizes() {
  %a = memref.alloc() {rnn.role = "cells"} : memref<2x3x20xf32>  // 0
  %b = memref.alloc() : memref<2x3xi1>                            // 1
  %c = memref.alloc() : memref<5xf64>                             // 2
  %d = memref.alloc() : memref<3xf16>                             // 3
  %e = memref.alloc() : memref<f32>                               // 4
  return                                                          // 5
}

// -----

// Disjoint lifetimes: %b is allocated after %a is freed, so the peak is
// the larger of the two, not their sum.

// CHECK-LABEL: liveness of @disjoint
// CHECK-NEXT: buffer 256 bytes: alloc 0, last use 1, dealloc 2
// CHECK-NEXT: buffer 128 bytes: alloc 3, last use 4, dealloc 5
// CHECK-NEXT: peak 256 bytes
func.func @disjoint(%i: index, %v: f32) {
  %a = memref.alloc() : memref<64xf32>      // 0
  memref.store %v, %a[%i] : memref<64xf32>  // 1
  memref.dealloc %a : memref<64xf32>        // 2
  %b = memref.alloc() : memref<32xf32>      // 3
  memref.store %v, %b[%i] : memref<32xf32>  // 4
  memref.dealloc %b : memref<32xf32>        // 5
  return                                    // 6
}

// -----

// Overlapping lifetimes: both are held at position 1, the peak is the sum.

// CHECK-LABEL: liveness of @overlapping
// CHECK-NEXT: buffer 256 bytes: alloc 0, last use 2, dealloc 4
// CHECK-NEXT: buffer 128 bytes: alloc 1, last use 3, dealloc 5
// CHECK-NEXT: peak 384 bytes
func.func @overlapping(%i: index, %v: f32) {
  %a = memref.alloc() : memref<64xf32>      // 0
  %b = memref.alloc() : memref<32xf32>      // 1
  memref.store %v, %a[%i] : memref<64xf32>  // 2
  memref.store %v, %b[%i] : memref<32xf32>  // 3
  memref.dealloc %a : memref<64xf32>        // 4
  memref.dealloc %b : memref<32xf32>        // 5
  return                                    // 6
}

// -----

// A dealloc nested in a region is not the buffer's dealloc but a use by
// the region's op (here the scf.if at position 2): the buffer has no
// dealloc and counts to the end.

// CHECK-LABEL: liveness of @nested_dealloc
// CHECK-NEXT: buffer 32 bytes: alloc 0, last use 2{{$}}
// CHECK-NEXT: peak 32 bytes
func.func @nested_dealloc(%c: i1, %i: index, %v: f32) {
  %a = memref.alloc() : memref<8xf32>       // 0
  memref.store %v, %a[%i] : memref<8xf32>   // 1
  scf.if %c {                               // 2
    memref.dealloc %a : memref<8xf32>
  }
  return                                    // 3
}

// -----

// A buffer allocated inside a loop makes the function not static; only
// the top-level buffers are listed and counted.

// CHECK-LABEL: liveness of @alloc_in_loop (not static)
// CHECK-NEXT: buffer 16 bytes: alloc 2, last use 3, dealloc 4
// CHECK-NEXT: peak 16 bytes
func.func @alloc_in_loop(%n: index, %v: f32) {
  %c0 = arith.constant 0 : index                  // 0
  %c1 = arith.constant 1 : index                  // 1
  %b = memref.alloc() : memref<4xf32>             // 2
  scf.for %i = %c0 to %n step %c1 {               // 3
    %t = memref.alloc() : memref<8xf32>
    memref.store %v, %b[%c0] : memref<4xf32>
    memref.dealloc %t : memref<8xf32>
  }
  memref.dealloc %b : memref<4xf32>               // 4
  return                                          // 5
}

// -----

// So does a dynamic size that is not T, B or P: the buffer is listed, of
// unknown size.

// CHECK-LABEL: liveness of @dynamic (not static)
// CHECK-NEXT: buffer ? bytes: alloc 0, last use 0, dealloc 3
// CHECK-NEXT: buffer 16 bytes: alloc 1, last use 1, dealloc 2
// CHECK-NEXT: peak 16 bytes
func.func @dynamic(%n: index) {
  %a = memref.alloc(%n) : memref<?xf32>   // 0
  %b = memref.alloc() : memref<4xf32>     // 1
  memref.dealloc %b : memref<4xf32>       // 2
  memref.dealloc %a : memref<?xf32>       // 3
  return                                  // 4
}

// -----

// No buffer: peak 0. A declaration prints nothing.

// CHECK-LABEL: liveness of @no_buffers{{$}}
// CHECK-NEXT: peak 0 bytes
// CHECK-NOT: liveness of @declared
func.func @no_buffers(%a: memref<4xf32>) {
  return
}

func.func private @declared(memref<4xf32>)

// -----

// Element sizes come from the data layout: index (8 bytes), complex, vector
// and i1 (one byte) buffers are sized like any other.

// CHECK-LABEL: liveness of @element_types{{$}}
// CHECK-NEXT: buffer 32 bytes: alloc 0, last use 0, dealloc 4
// CHECK-NEXT: buffer 32 bytes: alloc 1, last use 1, dealloc 5
// CHECK-NEXT: buffer 64 bytes: alloc 2, last use 2, dealloc 6
// CHECK-NEXT: buffer 3 bytes: alloc 3, last use 3, dealloc 7
// CHECK-NEXT: peak 131 bytes
func.func @element_types() {
  %a = memref.alloc() : memref<4xindex>                  // 0
  %b = memref.alloc() : memref<4xcomplex<f32>>           // 1
  %c = memref.alloc() : memref<4xvector<4xf32>>          // 2
  %d = memref.alloc() : memref<3xi1>                     // 3
  memref.dealloc %a : memref<4xindex>                    // 4
  memref.dealloc %b : memref<4xcomplex<f32>>             // 5
  memref.dealloc %c : memref<4xvector<4xf32>>            // 6
  memref.dealloc %d : memref<3xi1>                       // 7
  return                                                 // 8
}

// -----

// A buffer whose size in bytes overflows 64 bits is not planned.

// CHECK-LABEL: liveness of @overflow (not static)
// CHECK-NEXT: peak 0 bytes
func.func @overflow() {
  %a = memref.alloc() : memref<1152921504606846976x4xf32>
  memref.dealloc %a : memref<1152921504606846976x4xf32>
  return
}

// -----

// So is one whose element count alone overflows (4 * 2^62 = 2^64 elements,
// which wrap to 0 in 64 bits).

// CHECK-LABEL: liveness of @count_overflow (not static)
// CHECK-NEXT: peak 0 bytes
func.func @count_overflow() {
  %a = memref.alloc() : memref<4x4611686018427387904xi8>
  memref.dealloc %a : memref<4x4611686018427387904xi8>
  return
}

// -----

// So is a function whose buffers together need more than 2^63 bytes (each
// fits): the sum of their sizes, which bounds the peak and every offset,
// would overflow.

// CHECK-LABEL: liveness of @total_overflow (not static)
func.func @total_overflow() {
  %a = memref.alloc() : memref<1152921504606846976xf32>
  %b = memref.alloc() : memref<1152921504606846976xf32>
  memref.dealloc %a : memref<1152921504606846976xf32>
  memref.dealloc %b : memref<1152921504606846976xf32>
  return
}

// -----

// Sizes in a function for every T and B: memref.dim of a sequence [T, B, X]
// (dims 0, 1), of is_init [T, B] and of a state [B, H] (dim 0), products
// of them, rnn.block_steps (P), and the size of an allocation. The held
// bytes at each position are sums of these; the peak is the larger of the
// held expressions that no other one bounds: 16*T*B + 12*B (position 5)
// and 8*B*P + 12*B (position 9) bound every other one, and neither bounds
// the other.

// CHECK-LABEL: liveness of @symbolic (symbolic)
// CHECK-NEXT: y 16*T*B bytes: alloc 4, last use 4, dealloc 6
// CHECK-NEXT: state 12*B bytes: alloc 5, last use 5, dealloc 10
// CHECK-NEXT: block 8*B*P bytes: alloc 9, last use 9, dealloc 11
// CHECK-NEXT: mask T*B bytes: alloc 14, last use 14, dealloc 15
// CHECK-NEXT: ones 4*B*P bytes: alloc 17, last use 17, dealloc 18
// CHECK-NEXT: peak max(16*T*B + 12*B, 8*B*P + 12*B) bytes
func.func @symbolic(%x: memref<?x?x3xf32>, %is_init: memref<?x?xi1>
                        {rnn.name = "is_init"},
                    %h0: memref<?x5xf32>) {
  %c0 = arith.constant 0 : index                                     // 0
  %c1 = arith.constant 1 : index                                     // 1
  %t = memref.dim %x, %c0 : memref<?x?x3xf32>                        // 2
  %bx = memref.dim %x, %c1 : memref<?x?x3xf32>                       // 3
  %y = memref.alloc(%t, %bx) {rnn.role = "y"} : memref<?x?x4xf32>    // 4
  %s = memref.alloc(%bx) {rnn.role = "state"} : memref<?x3xf32>      // 5
  memref.dealloc %y : memref<?x?x4xf32>                              // 6
  %b = memref.dim %h0, %c0 : memref<?x5xf32>                         // 7
  %p = rnn.block_steps %t, %b rows(64)                               // 8
  %k = memref.alloc(%p, %b) {rnn.role = "block"} : memref<?x?x2xf32> // 9
  memref.dealloc %s : memref<?x3xf32>                                // 10
  memref.dealloc %k : memref<?x?x2xf32>                              // 11
  %bi = memref.dim %is_init, %c1 : memref<?x?xi1>                    // 12
  %ti = memref.dim %is_init, %c0 : memref<?x?xi1>                    // 13
  %m = memref.alloc(%ti, %bi) {rnn.role = "mask"} : memref<?x?xi8>   // 14
  memref.dealloc %m : memref<?x?xi8>                                 // 15
  %pb = arith.muli %p, %b : index                                    // 16
  %o = memref.alloc(%pb) {rnn.role = "ones"} : memref<?xf32>         // 17
  memref.dealloc %o : memref<?xf32>                                  // 18
  return                                                             // 19
}
