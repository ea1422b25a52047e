// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-split-training | FileCheck %s

// rnn-split-training: the ops before `rnn.begin_backward` become
// @f_fwd, those after it @f_bwd; @f_grad stays. Buffers the forward writes
// and the backward reads are packed in allocation order at 64-byte aligned
// offsets into a saved region, a last argument of both; each side takes
// only the arguments it uses; a buffer only the backward uses moves to it;
// pure values (constants) are recomputed; the saved region's frees go.

// CHECK-LABEL: func.func @f_grad(
// CHECK: rnn.begin_backward

// CHECK-LABEL: func.func @f_fwd(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<4xf32> {rnn.name = "x"},
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: memref<4xf32> {rnn.name = "y"},
// CHECK-SAME: [[SAVED:%[[:alnum:]_]+]]: memref<112xi8> {rnn.name = "saved"})
// CHECK-SAME: rnn.saved = [{bytes = 16 : i64, offset = 0 : i64, role = "gates"}, {bytes = 48 : i64, offset = 64 : i64, role = "cells"}]
// CHECK-SAME: rnn.saved_bytes = 112 : i64
// CHECK-DAG: memref.view [[SAVED]][%{{.*}}][] {rnn.role = "gates"} : memref<112xi8> to memref<4xf32>
// CHECK-DAG: memref.view [[SAVED]][%{{.*}}][] {rnn.role = "cells"} : memref<112xi8> to memref<12xf32>
// CHECK: memref.alloc() {rnn.role = "scratch"}
// CHECK-NOT: rnn.begin_backward
// CHECK-NOT: rnn.role = "dx"
// CHECK: return

// CHECK-LABEL: func.func @f_bwd(
// CHECK-SAME: memref<4xf32> {rnn.name = "grad_y"},
// CHECK-SAME: memref<4xf32> {rnn.name = "y"},
// CHECK-SAME: memref<4xf32> {rnn.name = "grad_x"},
// CHECK-SAME: [[SAVED:%[[:alnum:]_]+]]: memref<112xi8> {rnn.name = "saved"})
// CHECK-DAG: memref.view [[SAVED]][%{{.*}}][] {rnn.role = "gates"}
// CHECK-DAG: memref.view [[SAVED]][%{{.*}}][] {rnn.role = "cells"}
// CHECK-DAG: memref.alloc() {rnn.role = "dx"}
// CHECK-NOT: rnn.begin_backward
// CHECK-NOT: rnn.role = "scratch"
// CHECK: memref.dealloc
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @f_grad(%x: memref<4xf32> {rnn.name = "x"},
                  %gy: memref<4xf32> {rnn.name = "grad_y"},
                  %y: memref<4xf32> {rnn.name = "y"},
                  %gx: memref<4xf32> {rnn.name = "grad_x"}) {
  %c0 = arith.constant 0 : index
  %gates = memref.alloc() {rnn.role = "gates"} : memref<4xf32>
  %cells = memref.alloc() {rnn.role = "cells"} : memref<12xf32>
  %scratch = memref.alloc() {rnn.role = "scratch"} : memref<4xf32>
  %dx = memref.alloc() {rnn.role = "dx"} : memref<4xf32>
  %v = memref.load %x[%c0] : memref<4xf32>
  memref.store %v, %scratch[%c0] : memref<4xf32>
  memref.store %v, %gates[%c0] : memref<4xf32>
  memref.store %v, %cells[%c0] : memref<12xf32>
  memref.store %v, %y[%c0] : memref<4xf32>
  memref.dealloc %scratch : memref<4xf32>
  rnn.begin_backward
  %g = memref.load %gates[%c0] : memref<4xf32>
  %c = memref.load %cells[%c0] : memref<12xf32>
  %h = memref.load %y[%c0] : memref<4xf32>
  %d = memref.load %gy[%c0] : memref<4xf32>
  %s = arith.addf %g, %c : f32
  %t = arith.addf %s, %h : f32
  %u = arith.mulf %t, %d : f32
  memref.store %u, %dx[%c0] : memref<4xf32>
  %w = memref.load %dx[%c0] : memref<4xf32>
  memref.store %w, %gx[%c0] : memref<4xf32>
  memref.dealloc %gates : memref<4xf32>
  memref.dealloc %cells : memref<12xf32>
  memref.dealloc %dx : memref<4xf32>
  return
}

// -----

// A function without a phase boundary (inference) is left alone.

// CHECK-LABEL: func.func @infer(
// CHECK-NOT: func.func @infer_fwd
func.func @infer(%x: memref<4xf32>) {
  return
}

// -----

// expected-error @+1 {{cannot be split into forward and backward: it returns values}}
func.func @f_grad(%x: memref<4xf32>) -> memref<4xf32> {
  rnn.begin_backward
  return %x : memref<4xf32>
}

// -----

func.func private @f_fwd()
// expected-error @+1 {{cannot be split: symbol @f_fwd already exists}}
func.func @f_grad(%x: memref<4xf32>) {
  rnn.begin_backward
  return
}

// -----

func.func private @opaque() -> f32
func.func @f_grad(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{defines a value that crosses the forward/backward boundary of @f_grad but is neither a buffer, an argument nor a pure op}}
  %v = func.call @opaque() : () -> f32
  rnn.begin_backward
  memref.store %v, %x[%c0] : memref<4xf32>
  return
}

// -----

func.func @f_grad(%x: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{crosses the forward/backward boundary with sizes that are not T, B or the GEMM block; the saved region's size must be a function of T and B}}
  %b = memref.alloc(%n) : memref<?xf32>
  %v = memref.load %x[%c0] : memref<4xf32>
  memref.store %v, %b[%c0] : memref<?xf32>
  rnn.begin_backward
  %w = memref.load %b[%c0] : memref<?xf32>
  memref.store %w, %x[%c0] : memref<4xf32>
  memref.dealloc %b : memref<?xf32>
  return
}

// -----

// A function for every T and B that saves nothing (a GRU of one layer
// under `gates`) still takes its saved region sized by a function of
// (T, B), here of 0 bytes, so that a budget's variants that save and that
// do not take the same arguments.

// CHECK-LABEL: func.func @e_fwd(
// CHECK-SAME: memref<?xi8> {rnn.name = "saved", rnn.size = @e.saved_bytes})
// CHECK-SAME: rnn.saved = []
// CHECK-LABEL: func.func @e_bwd(
// CHECK-SAME: memref<?xi8> {rnn.name = "saved", rnn.size = @e.saved_bytes})
// CHECK-LABEL: func.func private @e.saved_bytes(
// CHECK-SAME: %{{.+}}: index, %{{.+}}: index) -> i64
// CHECK: [[NONE:%.+]] = arith.constant 0 : i64
// CHECK: [[BYTES:%.+]] = arith.select %false, %c-1_i64, [[NONE]] : i64
// CHECK-NEXT: return [[BYTES]] : i64
func.func @e_grad(%x: memref<?x?x3xf32>, %y: memref<?x?x3xf32>,
                  %gx: memref<?x?x3xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0, %c0, %c0] : memref<?x?x3xf32>
  memref.store %v, %y[%c0, %c0, %c0] : memref<?x?x3xf32>
  rnn.begin_backward
  %w = memref.load %x[%c0, %c0, %c0] : memref<?x?x3xf32>
  memref.store %w, %gx[%c0, %c0, %c0] : memref<?x?x3xf32>
  return
}

// -----

// A function for every T and B: the saved buffers (gates, 32*T*B bytes;
// cells, 20*B) are views of a saved region of dynamic size, at offsets
// each function computes from its arguments' T and B (cells after the
// gates rounded up to 64 bytes); the region's size is @f.saved_bytes(T, B),
// the saved argument's rnn.size, and the layout names the sizes.

// CHECK-LABEL: func.func @f_fwd(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<?x?x3xf32>, [[SAVED:%[[:alnum:]_]+]]: memref<?xi8> {rnn.name = "saved", rnn.size = @f.saved_bytes})
// CHECK-SAME: rnn.saved = [{role = "gates", size = "32*T*B"}, {role = "cells", size = "20*B"}]
// CHECK: [[T:%.+]] = memref.dim [[X]], %c0
// CHECK: [[B:%.+]] = memref.dim [[X]], %c1
// CHECK: [[ZERO:%.+]] = arith.constant 0 : index
// CHECK: [[TB:%.+]] = arith.muli [[T]], [[B]]
// CHECK: [[GATES:%.+]] = arith.muli %c32, [[TB]]
// CHECK: [[UNITS:%.+]] = arith.ceildivui [[GATES]], %c64
// CHECK: [[ROUNDED:%.+]] = arith.muli [[UNITS]], %c64
// CHECK: [[AFTER:%.+]] = arith.addi [[ZERO]], [[ROUNDED]]
// CHECK: memref.view [[SAVED]][[[ZERO]]][{{%.+}}, {{%.+}}] {rnn.role = "gates"} : memref<?xi8> to memref<?x?x8xf32>
// CHECK: memref.view [[SAVED]][[[AFTER]]][{{%.+}}] {rnn.role = "cells"} : memref<?xi8> to memref<?x5xf32>
// CHECK-LABEL: func.func @f_bwd(
// CHECK-SAME: {rnn.name = "saved", rnn.size = @f.saved_bytes})
// CHECK: memref.view {{.*}}{rnn.role = "gates"}
// CHECK: memref.view {{.*}}{rnn.role = "cells"}
// CHECK-NOT: memref.dealloc
// CHECK-LABEL: func.func private @f.saved_bytes(
// CHECK-SAME: %{{.+}}: index, %{{.+}}: index) -> i64
// CHECK: arith.select %{{.+}}, %c-1_i64, %{{.+}} : i64
func.func @f_grad(%x: memref<?x?x3xf32>, %gx: memref<?x?x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x?x3xf32>
  %b = memref.dim %x, %c1 : memref<?x?x3xf32>
  %g = memref.alloc(%t, %b) {rnn.role = "gates"} : memref<?x?x8xf32>
  %s = memref.alloc(%b) {rnn.role = "cells"} : memref<?x5xf32>
  %v = memref.load %x[%c0, %c0, %c0] : memref<?x?x3xf32>
  memref.store %v, %g[%c0, %c0, %c0] : memref<?x?x8xf32>
  memref.store %v, %s[%c0, %c0] : memref<?x5xf32>
  rnn.begin_backward
  %w = memref.load %g[%c0, %c0, %c0] : memref<?x?x8xf32>
  %u = memref.load %s[%c0, %c0] : memref<?x5xf32>
  %z = arith.addf %w, %u : f32
  memref.store %z, %gx[%c0, %c0, %c0] : memref<?x?x3xf32>
  memref.dealloc %g : memref<?x?x8xf32>
  memref.dealloc %s : memref<?x5xf32>
  return
}
