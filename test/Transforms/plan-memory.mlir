// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-plan-memory | FileCheck %s
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-plan-memory --rnn-memory-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-plan-memory -o /dev/null | FileCheck %s --check-prefix=QUIET --allow-empty

// rnn-plan-memory gives each top-level buffer an offset in one arena (first
// fit in allocation order, sizes rounded up to 64 bytes, reusing space
// freed before the buffer is allocated) as rnn.offset, and sets
// rnn.predicted_peak_bytes (the peak of exact bytes held in program order)
// and rnn.arena_bytes on the function. rnn-opt --rnn-memory-report=- prints
// the plan after it, per function, each buffer's role, bytes, live
// range [alloc, dealloc] (`result` for a returned buffer, `end` for one
// never freed), offset, then the peak and arena; without it, nothing is
// printed (QUIET). Positions are 0-based op indices in the entry block,
// written next to each op in the input.

// QUIET-NOT: memory plan
// QUIET-NOT: predicted peak

// First fit by hand (sizes rounded: 400 -> 448, 40 -> 64, 256, 200 -> 256,
// 64):
//   gates [0, 3]      offset 0    (arena empty)
//   %b    [1, 7]      offset 448  (gates holds [0, 448))
//   cells [4, 8]      offset 0    (gates was freed at 3, before 4)
//   y     [5, result] offset 512  (cells holds [0, 256), %b [448, 512): the
//                                  192-byte gap is too small for 256)
//   %e    [6, 9]      offset 256  (64 bytes fit in the gap)
// The arena ends at 512 + 256 = 768. Bytes held: 400, 440, then 40 after
// position 3, 296, 496, 560 at position 6 (cells + y + %b + %e = 256 + 200
// + 40 + 64), then 520, 264, 200: the peak is 560.

// CHECK-LABEL: func.func @first_fit(
// CHECK-SAME: attributes {rnn.arena_bytes = 768 : i64, rnn.predicted_peak_bytes = 560 : i64}
// CHECK: memref.alloc() {rnn.offset = 0 : i64, rnn.role = "gates"} : memref<100xf32>
// CHECK: memref.alloc() {rnn.offset = 448 : i64} : memref<10xf32>
// CHECK: memref.alloc() {rnn.offset = 0 : i64, rnn.role = "cells"} : memref<64xf32>
// CHECK: memref.alloc() {rnn.offset = 512 : i64, rnn.role = "y"} : memref<50xf32>
// CHECK: memref.alloc() {rnn.offset = 256 : i64} : memref<16xf32>

// REPORT-LABEL: memory plan of @first_fit
// REPORT-NEXT: {{^}}  gates 400 bytes live [0, 3] offset 0{{$}}
// REPORT-NEXT: {{^}}  buffer 40 bytes live [1, 7] offset 448{{$}}
// REPORT-NEXT: {{^}}  cells 256 bytes live [4, 8] offset 0{{$}}
// REPORT-NEXT: {{^}}  y 200 bytes live [5, result] offset 512{{$}}
// REPORT-NEXT: {{^}}  buffer 64 bytes live [6, 9] offset 256{{$}}
// REPORT-NEXT: {{^}}  predicted peak 560 bytes, arena 768 bytes{{$}}
// REPORT-NEXT: {{^}}  at the peak (op 6): buffer; cells; y; buffer;{{$}}
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

// Overlapping lifetimes never share space, even when both are small: each
// takes a 64-byte slot. Disjoint ones share offset 0: %c is allocated
// after %a and %b are freed. A buffer never freed nor returned lives to the
// `end`. Peak: %a + %b = 4 + 8 = 12 bytes, then %c alone 12 bytes; the
// arena is two slots.

// CHECK-LABEL: func.func @slots(
// CHECK-SAME: attributes {rnn.arena_bytes = 128 : i64, rnn.predicted_peak_bytes = 12 : i64}
// CHECK: memref.alloc() {rnn.offset = 0 : i64} : memref<1xf32>
// CHECK: memref.alloc() {rnn.offset = 64 : i64} : memref<2xf32>
// CHECK: memref.alloc() {rnn.offset = 0 : i64} : memref<3xf32>

// REPORT-LABEL: memory plan of @slots
// REPORT-NEXT: {{^}}  buffer 4 bytes live [0, 2] offset 0{{$}}
// REPORT-NEXT: {{^}}  buffer 8 bytes live [1, 3] offset 64{{$}}
// REPORT-NEXT: {{^}}  buffer 12 bytes live [4, end] offset 0{{$}}
// REPORT-NEXT: {{^}}  predicted peak 12 bytes, arena 128 bytes{{$}}
func.func @slots() {
  %a = memref.alloc() : memref<1xf32>   // 0
  %b = memref.alloc() : memref<2xf32>   // 1
  memref.dealloc %a : memref<1xf32>     // 2
  memref.dealloc %b : memref<2xf32>     // 3
  %c = memref.alloc() : memref<3xf32>   // 4
  return                                // 5
}

// -----

// A buffer allocated inside a loop has no static offset: the function gets
// a remark and no plan (no attributes, nothing in the report), while the
// next function is planned as usual.

// CHECK-LABEL: func.func @alloc_in_loop(
// CHECK-NOT: rnn.predicted_peak_bytes
// CHECK-NOT: rnn.arena_bytes
// CHECK-NOT: rnn.offset
// CHECK-LABEL: func.func @after_loop(
// CHECK-SAME: attributes {rnn.arena_bytes = 64 : i64, rnn.predicted_peak_bytes = 32 : i64}

// REPORT-NOT: memory plan of @alloc_in_loop
// REPORT-LABEL: memory plan of @after_loop
// REPORT-NEXT: {{^}}  buffer 32 bytes live [0, 1] offset 0{{$}}
// REPORT-NEXT: {{^}}  predicted peak 32 bytes, arena 64 bytes{{$}}

// expected-remark @below {{rnn-plan-memory: buffers allocated inside loops, with dynamic sizes or with layouts other than the identity; no static plan}}
func.func @alloc_in_loop(%n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<8xf32>
    memref.store %v, %t[%c0] : memref<8xf32>
    memref.dealloc %t : memref<8xf32>
  }
  memref.dealloc %b : memref<4xf32>
  return
}

func.func @after_loop() {
  %a = memref.alloc() : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// Nor does a buffer of another layout than the identity, which spans more
// bytes than its elements (here 15 floats for 8).

// CHECK-LABEL: func.func @strided(
// CHECK-NOT: rnn.predicted_peak_bytes
// CHECK-NOT: rnn.offset
// CHECK: return

// expected-remark @below {{no static plan}}
func.func @strided(%x: memref<8xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<8xf32, strided<[2]>>
  memref.store %v, %t[%c0] : memref<8xf32, strided<[2]>>
  %l = memref.load %t[%c0] : memref<8xf32, strided<[2]>>
  memref.store %l, %x[%c0] : memref<8xf32>
  memref.dealloc %t : memref<8xf32, strided<[2]>>
  return
}

// -----

// A dynamic size has no static plan either.

// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT: rnn.predicted_peak_bytes
// CHECK-NOT: rnn.offset
// CHECK: return

// expected-remark @below {{no static plan}}
func.func @dynamic(%n: index) {
  %a = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return
}

// -----

// No buffers: an empty plan, peak and arena 0.

// CHECK-LABEL: func.func @no_buffers(
// CHECK-SAME: attributes {rnn.arena_bytes = 0 : i64, rnn.predicted_peak_bytes = 0 : i64}

// REPORT-LABEL: memory plan of @no_buffers
// REPORT-NEXT: {{^}}  predicted peak 0 bytes, arena 0 bytes{{$}}
func.func @no_buffers(%a: memref<4xf32>) {
  return
}

// -----

// A function with a forward/backward boundary (the top-level call
// rnn.begin_backward, position 5) also gets the plan's figures for each
// phase. Bytes held by hand: 32, 96, 224, 96 (%tmp freed), 96, 96 at the
// boundary, then 112, 192, 192, 128, 48. Forward peak (positions 0-4): 224
// at position 2; backward peak (5 on): 192; saved for backward: the 96
// bytes held at the boundary but the returned %y's 32, i.e. %gates's 64.

// CHECK-LABEL: func.func @phases(
// CHECK-SAME: rnn.predicted_bwd_peak_bytes = 192 : i64
// CHECK-SAME: rnn.predicted_fwd_peak_bytes = 224 : i64
// CHECK-SAME: rnn.predicted_peak_bytes = 224 : i64
// CHECK-SAME: rnn.predicted_saved_bytes = 64 : i64

// REPORT-LABEL: memory plan of @phases
// REPORT: {{^}}  predicted peak 224 bytes, arena 320 bytes{{$}}
// REPORT-NEXT: {{^}}  backward from op 5: forward peak 224 bytes, backward peak 192 bytes, saved for backward 64 bytes{{$}}
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

// A function placed in its arena (rnn-place-in-arena: an argument named
// arena, views instead of allocations) keeps the plan it was placed by;
// planned again, it would record an empty one.
// CHECK-LABEL: func.func @placed(
// CHECK-SAME: rnn.arena_bytes = 64 : i64, rnn.predicted_peak_bytes = 16 : i64
func.func @placed(%x: memref<4xf32>, %arena: memref<64xi8> {rnn.name = "arena"})
    attributes {rnn.arena_bytes = 64 : i64, rnn.predicted_peak_bytes = 16 : i64} {
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  memref.copy %x, %v : memref<4xf32> to memref<4xf32>
  return
}
