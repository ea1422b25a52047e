// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-place-in-arena | FileCheck %s
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-place-in-arena --canonicalize --cse | FileCheck %s --check-prefix=SYMBOLIC

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

// -----

// A function for every T and B (no rnn.arena_bytes: its plan is symbolic,
// computed here): the arena is memref<?xi8>, sized by @g.arena_bytes(T, B)
// (the argument's rnn.size), and the buffers are views at offsets the
// function computes from its arguments' T and B: size class 4*T*B first
// (%y, and %g in the slot %y freed), then class 8*B (%s, %t: two slots),
// each slot rounded up to 64 bytes.

// SYMBOLIC-LABEL: func.func @g(
// SYMBOLIC-SAME: [[X:%[[:alnum:]_]+]]: memref<?x?x1xf32>, [[H:%[[:alnum:]_]+]]: memref<?x2xf32>, [[ARENA:%[[:alnum:]_]+]]: memref<?xi8> {rnn.name = "arena", rnn.size = @g.arena_bytes})
// SYMBOLIC-DAG: [[T:%.+]] = memref.dim [[X]], %c0
// SYMBOLIC-DAG: [[B:%.+]] = memref.dim [[X]], %c1
// SYMBOLIC: [[TB:%.+]] = arith.muli [[T]], [[B]]
// SYMBOLIC: [[Y:%.+]] = arith.muli [[TB]], %c4
// SYMBOLIC: [[YUNITS:%.+]] = arith.ceildivui [[Y]], %c64
// SYMBOLIC: [[CLASS1:%.+]] = arith.muli [[YUNITS]], %c64
// SYMBOLIC: [[S:%.+]] = arith.muli [[B]], %c8
// SYMBOLIC: [[SUNITS:%.+]] = arith.ceildivui [[S]], %c64
// SYMBOLIC: [[SLOT:%.+]] = arith.muli [[SUNITS]], %c64
// SYMBOLIC: [[SECOND:%.+]] = arith.addi [[CLASS1]], [[SLOT]]
// SYMBOLIC: memref.view [[ARENA]][%c0][{{%.+}}, {{%.+}}] {rnn.role = "y"}
// SYMBOLIC: memref.view [[ARENA]][[[CLASS1]]][{{%.+}}] {rnn.role = "s"}
// SYMBOLIC: memref.view [[ARENA]][[[SECOND]]][{{%.+}}] {rnn.role = "t"}
// SYMBOLIC: memref.view [[ARENA]][%c0][{{%.+}}, {{%.+}}] {rnn.role = "g"}
// SYMBOLIC-NOT: memref.dealloc
// SYMBOLIC-LABEL: func.func private @g.arena_bytes(
// SYMBOLIC-SAME: %{{.+}}: index, %{{.+}}: index) -> i64
func.func @g(%x: memref<?x?x1xf32>, %h: memref<?x2xf32>) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  %tt = memref.dim %x, %c0 : memref<?x?x1xf32>
  %bb = memref.dim %h, %c0 : memref<?x2xf32>
  %y = memref.alloc(%tt, %bb) {rnn.role = "y"} : memref<?x?xf32>
  memref.store %v, %y[%c0, %c0] : memref<?x?xf32>
  %s = memref.alloc(%bb) {rnn.role = "s"} : memref<?x2xf32>
  memref.store %v, %s[%c0, %c0] : memref<?x2xf32>
  %t = memref.alloc(%bb) {rnn.role = "t"} : memref<?x2xf32>
  memref.store %v, %t[%c0, %c0] : memref<?x2xf32>
  memref.dealloc %y : memref<?x?xf32>
  %g = memref.alloc(%tt, %bb) {rnn.role = "g"} : memref<?x?xf32>
  memref.store %v, %g[%c0, %c0] : memref<?x?xf32>
  memref.dealloc %s : memref<?x2xf32>
  memref.dealloc %t : memref<?x2xf32>
  memref.dealloc %g : memref<?x?xf32>
  return
}
