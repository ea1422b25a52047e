// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-place-in-arena | FileCheck %s

// rnn-place-in-arena: each planned allocation becomes a view of the arena
// (a new last argument of rnn.arena_bytes bytes, named arena) at its
// rnn.offset, keeping its role; deallocations go. Functions without a plan
// are left alone.

// CHECK-LABEL: func.func @planned(
// CHECK-SAME: %{{[[:alnum:]_]+}}: memref<4xf32>, [[ARENA:%[[:alnum:]_]+]]: memref<192xi8> {rnn.name = "arena"})
// CHECK-NOT: memref.alloc
// CHECK: [[C0:%[[:alnum:]_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[A:%[[:alnum:]_]+]] = memref.view [[ARENA]]{{\[}}[[C0]]][] {rnn.role = "y"} : memref<192xi8> to memref<4xf32>
// CHECK-NEXT: [[C64:%[[:alnum:]_]+]] = arith.constant 64 : index
// CHECK-NEXT: memref.view [[ARENA]]{{\[}}[[C64]]][] {rnn.role = "scratch"} : memref<192xi8> to memref<8xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return [[A]]
func.func @planned(%x: memref<4xf32>) -> memref<4xf32>
    attributes {rnn.arena_bytes = 192 : i64} {
  %y = memref.alloc() {rnn.offset = 0 : i64, rnn.role = "y"} : memref<4xf32>
  %s = memref.alloc() {rnn.offset = 64 : i64, rnn.role = "scratch"} : memref<8xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  memref.store %v, %s[%c0] : memref<8xf32>
  memref.store %v, %y[%c0] : memref<4xf32>
  memref.dealloc %s : memref<8xf32>
  return %y : memref<4xf32>
}

// -----

// CHECK-LABEL: func.func @unplanned(
// CHECK-SAME: %{{[[:alnum:]_]+}}: memref<4xf32>) -> memref<4xf32>
// CHECK: memref.alloc
func.func @unplanned(%x: memref<4xf32>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  return %y : memref<4xf32>
}

// -----

func.func @missing_offset() attributes {rnn.arena_bytes = 64 : i64} {
  // expected-error @+1 {{'memref.alloc' op has no arena offset: run rnn-plan-memory first}}
  %s = memref.alloc() : memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  return
}

// -----

// expected-error @+1 {{'func.func' op rnn.arena_bytes must be a non-negative integer, got -64 : i64}}
func.func @negative_arena() attributes {rnn.arena_bytes = -64 : i64} {
  %s = memref.alloc() {rnn.offset = 0 : i64} : memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  return
}

// -----

// expected-error @+1 {{'func.func' op rnn.arena_bytes must be a non-negative integer, got "64"}}
func.func @string_arena() attributes {rnn.arena_bytes = "64"} {
  return
}

// -----

func.func @string_offset() attributes {rnn.arena_bytes = 64 : i64} {
  // expected-error @+1 {{'memref.alloc' op rnn.offset must be a non-negative integer, got 1.000000e+00 : f32}}
  %s = memref.alloc() {rnn.offset = 1.0 : f32} : memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  return
}

// -----

func.func @negative_offset() attributes {rnn.arena_bytes = 64 : i64} {
  // expected-error @+1 {{'memref.alloc' op rnn.offset must be a non-negative integer, got -32 : i64}}
  %s = memref.alloc() {rnn.offset = -32 : i64} : memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  return
}

// -----

func.func @past_the_arena() attributes {rnn.arena_bytes = 64 : i64} {
  // expected-error @+1 {{'memref.alloc' op at offset 48 with 32 bytes does not fit in the arena of 64 bytes}}
  %s = memref.alloc() {rnn.offset = 48 : i64} : memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  return
}

// -----

func.func @dynamic_size(%n: index) attributes {rnn.arena_bytes = 64 : i64} {
  // expected-error @+1 {{'memref.alloc' op has no static size in bytes to place in the arena}}
  %s = memref.alloc(%n) {rnn.offset = 0 : i64} : memref<?xf32>
  memref.dealloc %s : memref<?xf32>
  return
}
