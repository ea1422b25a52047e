// RUN: rnn-opt %s -split-input-file --test-rnn-memory-plan -o /dev/null | FileCheck %s --check-prefixes=CHECK,NOPLAN
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-plan-memory --test-rnn-memory-plan -o /dev/null | FileCheck %s

// The MemoryPlan analysis: first fit in allocation order, sizes rounded up
// to 64 bytes, reusing space freed before a buffer is allocated; the peak
// of exact bytes held in program order; the phase figures at a backward
// boundary. The same after rnn-plan-memory, which attaches the plan
// without changing it (the analysis is preserved). Positions are 0-based
// op indices in the entry block, written next to each op.

// By hand (sizes rounded: 400 -> 448, 40 -> 64, 256 -> 256, 200 -> 256,
// 64 -> 64):
//   gates [0, 3]      offset 0    (arena empty)
//   %b    [1, 7]      offset 448  (gates holds [0, 448))
//   cells [4, 8]      offset 0    (gates freed at 3, before 4)
//   y     [5, end]    offset 512  (cells [0, 256), %b [448, 512): the
//                                  192-byte gap is too small for 256)
//   %e    [6, 9]      offset 256  (64 bytes fit in the gap)
// Arena 512 + 256 = 768. Held: 400, 440, 440, 40, 296, 496, 560 (position
// 6: 256 + 200 + 40 + 64), 520, 264, 200: peak 560. No boundary.

// CHECK-LABEL: plan of @first_fit: peak 560, arena 768
// CHECK-NEXT: {{^}}  gates at 0{{$}}
// CHECK-NEXT: {{^}}  buffer at 448{{$}}
// CHECK-NEXT: {{^}}  cells at 0{{$}}
// CHECK-NEXT: {{^}}  y at 512{{$}}
// CHECK-NEXT: {{^}}  buffer at 256{{$}}
// CHECK-NOT: backward
func.func @first_fit(%i: index, %v: f32) -> memref<50xf32> {
  %gates = memref.alloc() {rnn.role = "gates"} : memref<100xf32>  // 0
  %b = memref.alloc() : memref<10xf32>                            // 1
  memref.store %v, %gates[%i] : memref<100xf32>                   // 2
  memref.dealloc %gates : memref<100xf32>                         // 3
  %cells = memref.alloc() {rnn.role = "cells"} : memref<64xf32>   // 4
  %y = memref.alloc() {rnn.role = "y"} : memref<50xf32>           // 5
  %e = memref.alloc() : memref<16xf32>                            // 6
  memref.dealloc %b : memref<10xf32>                              // 7
  memref.dealloc %cells : memref<64xf32>                          // 8
  memref.dealloc %e : memref<16xf32>                              // 9
  return %y : memref<50xf32>                                      // 10
}

// -----

// A boundary at position 5 (the top-level rnn.begin_backward). Held: 32,
// 96, 224, 96, 96, 96 at the boundary, then 112, 192, 192, 128, 48. Forward
// peak (positions 0-4) 224, backward peak 192; saved: the 96 bytes held at
// the boundary less the returned %y's 32. Offsets: %y 0, %gates 64, %tmp
// 128 (both others live), %dx 128 (%tmp freed), %s 192.

// CHECK-LABEL: plan of @phases: peak 224, arena 320
// CHECK-NEXT: {{^}}  y at 0{{$}}
// CHECK-NEXT: {{^}}  gates at 64{{$}}
// CHECK-NEXT: {{^}}  buffer at 128{{$}}
// CHECK-NEXT: {{^}}  grad_x at 128{{$}}
// CHECK-NEXT: {{^}}  buffer at 192{{$}}
// CHECK-NEXT: {{^}}  backward from 5: fwd 224, bwd 192, saved 64{{$}}
func.func @phases(%i: index, %v: f32) -> (memref<8xf32>, memref<4xf32>) {
  %y = memref.alloc() {rnn.role = "y"} : memref<8xf32>             // 0
  %gates = memref.alloc() {rnn.role = "gates"} : memref<16xf32>    // 1
  %tmp = memref.alloc() : memref<32xf32>                           // 2
  memref.dealloc %tmp : memref<32xf32>                             // 3
  %c1 = arith.constant 1 : i64                                     // 4
  rnn.begin_backward                                               // 5
  %dx = memref.alloc() {rnn.role = "grad_x"} : memref<4xf32>       // 6
  %s = memref.alloc() : memref<20xf32>                             // 7
  memref.store %v, %gates[%i] : memref<16xf32>                     // 8
  memref.dealloc %gates : memref<16xf32>                           // 9
  memref.dealloc %s : memref<20xf32>                               // 10
  return %y, %dx : memref<8xf32>, memref<4xf32>                    // 11
}

// -----

// No plan for a buffer allocated in a loop; a buffer of 2^63 - 1 bytes,
// whose size rounded up to 64 bytes overflows 64 bits, is the analysis's
// error (rnn-plan-memory reports both).

// NOPLAN-LABEL: plan of @alloc_in_loop: none (not static)
// NOPLAN-LABEL: plan of @huge: none (a buffer of 9223372036854775807 bytes cannot be placed in 64-bit offsets)
// expected-remark @below {{no static plan}}
func.func @alloc_in_loop(%n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<8xf32>
    memref.store %v, %t[%c0] : memref<8xf32>
    memref.dealloc %t : memref<8xf32>
  }
  return
}

// expected-error @below {{rnn-plan-memory: a buffer of 9223372036854775807 bytes cannot be placed in 64-bit offsets}}
func.func @huge() {
  %a = memref.alloc() : memref<9223372036854775807xi8>
  memref.dealloc %a : memref<9223372036854775807xi8>
  return
}

// -----

// A function for every T and B has a plan in closed form: the peak and
// phases as expressions in T, B and P, and an arena by size class. By
// hand: classes in order of first allocation, 4*T*B (%y, and %g, which is
// allocated at 8 after %y is freed at 7 and takes its slot), 8*B (%s and
// %t, live together: two slots) and 16 (%w); the arena is
// align(4*T*B) + 2*align(8*B) + align(16). Held from position 4: 4*T*B,
// 4*T*B + 8*B, 4*T*B + 16*B, 16*B, 4*T*B + 16*B, 4*T*B + 8*B (9, and 10,
// the boundary), 4*T*B + 8*B + 16 (11), 4*T*B + 16, 16, 0. The forward
// peak is 4*T*B + 16*B, the backward's 4*T*B + 8*B + 16; neither bounds
// the other (16*B < 8*B + 16 at B = 1), so the peak is their max. Saved
// at the boundary: 4*T*B + 8*B (nothing is returned).

// CHECK-LABEL: plan of @symbolic: peak max(4*T*B + 16*B, 4*T*B + 8*B + 16)
// CHECK-NEXT:   class 0: 1 x 4*T*B
// CHECK-NEXT:   class 1: 2 x 8*B
// CHECK-NEXT:   class 2: 1 x 16
// CHECK-NEXT:   y in class 0 slot 0
// CHECK-NEXT:   s in class 1 slot 0
// CHECK-NEXT:   t in class 1 slot 1
// CHECK-NEXT:   g in class 0 slot 0
// CHECK-NEXT:   w in class 2 slot 0
// CHECK-NEXT:   backward from 10: fwd 4*T*B + 16*B, bwd 4*T*B + 8*B + 16, saved 4*T*B + 8*B
func.func @symbolic(%x: memref<?x?x1xf32>, %h: memref<?x2xf32>) {
  %c0 = arith.constant 0 : index                                    // 0
  %c1 = arith.constant 1 : index                                    // 1
  %tt = memref.dim %x, %c0 : memref<?x?x1xf32>                      // 2
  %bb = memref.dim %h, %c0 : memref<?x2xf32>                        // 3
  %y = memref.alloc(%tt, %bb) {rnn.role = "y"} : memref<?x?xf32>   // 4
  %s = memref.alloc(%bb) {rnn.role = "s"} : memref<?x2xf32>        // 5
  %t = memref.alloc(%bb) {rnn.role = "t"} : memref<?x2xf32>        // 6
  memref.dealloc %y : memref<?x?xf32>                               // 7
  %g = memref.alloc(%tt, %bb) {rnn.role = "g"} : memref<?x?xf32>   // 8
  memref.dealloc %s : memref<?x2xf32>                               // 9
  rnn.begin_backward                                                // 10
  %w = memref.alloc() {rnn.role = "w"} : memref<4xf32>              // 11
  memref.dealloc %t : memref<?x2xf32>                               // 12
  memref.dealloc %g : memref<?x?xf32>                               // 13
  memref.dealloc %w : memref<4xf32>                                 // 14
  return                                                            // 15
}
