// RUN: rnn-opt %s -split-input-file --rnn-dse | FileCheck %s
// RUN: rnn-opt %s -split-input-file --canonicalize | FileCheck %s --check-prefix=CANON
// RUN: split-file %s %t
// RUN: rnn-opt %t/lstm.mlir --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops --canonicalize | FileCheck %s --check-prefix=NODSE
// RUN: rnn-opt %t/lstm.mlir --rnn-expand-forward --rnn-kernels-to-loops | FileCheck %s --check-prefix=INFER
// RUN: rnn-opt %t/lstm.mlir --rnn-autodiff --rnn-expand-forward --rnn-kernels-to-loops | FileCheck %s --check-prefix=TRAIN
// RUN: rnn-opt %t/lstm.mlir --rnn-autodiff --rnn-rematerialize="policy=gates" --rnn-expand-forward --rnn-kernels-to-loops | FileCheck %s --check-prefix=REMAT

// rnn-dse deletes a buffer that nothing reads, through any of its views,
// with its stores, views and dealloc, and repeats until nothing changes.
// The hand-written cases below run rnn-dse alone; the CANON line shows that
// upstream canonicalization keeps the first one. The last case (after
// `//--- lstm.mlir`, extracted by split-file) is an LSTM model compiled by
// the rnn-kernels-to-loops pipeline, of which rnn-dse is a part.

// A buffer only written, through a subview (vector.store), a collapse_shape
// and a cast (memref.store), and a select of two of its subviews, then
// freed: everything but the return is deleted, including the now unused
// index constant. Canonicalization sees views and a vector.store among the
// users of the allocation and keeps it.

// CHECK-LABEL: func.func @dead_through_views(
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.subview
// CHECK-NOT: memref.collapse_shape
// CHECK-NOT: memref.cast
// CHECK-NOT: arith.select
// CHECK-NOT: arith.constant
// CHECK-NOT: vector.store
// CHECK-NOT: memref.store
// CHECK-NOT: memref.dealloc
// CHECK: return{{$}}

// CANON-LABEL: func.func @dead_through_views(
// CANON: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<4x8xf32>
// CANON: vector.store
// CANON: memref.dealloc [[A]] : memref<4x8xf32>
// CANON-NEXT: return
func.func @dead_through_views(%i: index, %j: index, %k: index, %c: i1,
    %v: f32, %vec: vector<4xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4x8xf32>
  %row = memref.subview %a[%i, 0] [1, 8] [1, 1]
      : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  vector.store %vec, %row[%c0]
      : memref<8xf32, strided<[1], offset: ?>>, vector<4xf32>
  %flat = memref.collapse_shape %a [[0, 1]]
      : memref<4x8xf32> into memref<32xf32>
  memref.store %v, %flat[%i] : memref<32xf32>
  %dyn = memref.cast %a : memref<4x8xf32> to memref<?x8xf32>
  memref.store %v, %dyn[%i, %c0] : memref<?x8xf32>
  %rj = memref.subview %a[%j, 0] [1, 8] [1, 1]
      : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %rk = memref.subview %a[%k, 0] [1, 8] [1, 1]
      : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %sel = arith.select %c, %rj, %rk : memref<8xf32, strided<[1], offset: ?>>
  memref.store %v, %sel[%i] : memref<8xf32, strided<[1], offset: ?>>
  memref.dealloc %a : memref<4x8xf32>
  return
}

// -----

// Stores inside a loop (through a subview created in the loop) and a
// linalg.fill are writes too: the buffer goes, and the loop, left empty, is
// deleted with it. Canonicalization keeps all of it.

// CANON-LABEL: func.func @dead_in_loop(
// CANON: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CANON: linalg.fill {{.*}} outs([[A]] :
// CANON: scf.for
// CANON: memref.dealloc [[A]] : memref<8xf32>
// CANON-NEXT: return

// CHECK-LABEL: func.func @dead_in_loop(
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.fill
// CHECK-NOT: scf.for
// CHECK-NOT: memref.store
// CHECK-NOT: memref.dealloc
// CHECK: return{{$}}
func.func @dead_in_loop(%n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%v : f32) outs(%a : memref<8xf32>)
  scf.for %i = %c0 to %n step %c1 {
    %sv = memref.subview %a[%i] [4] [1]
        : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
    memref.store %v, %sv[%c0] : memref<4xf32, strided<[1], offset: ?>>
  }
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// A buffer read by memref.load is kept with its store.

// CHECK-LABEL: func.func @read_by_load(
// CHECK: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK: memref.store {{%[[:alnum:]_]+}}, [[A]]
// CHECK: [[R:%[[:alnum:]_]+]] = memref.load [[A]]
// CHECK: memref.dealloc [[A]]
// CHECK: return [[R]]
func.func @read_by_load(%i: index, %v: f32) -> f32 {
  %a = memref.alloc() : memref<8xf32>
  memref.store %v, %a[%i] : memref<8xf32>
  %r = memref.load %a[%i] : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return %r : f32
}

// -----

// A read through a view counts: written through a subview, read by a
// vector.load of a collapse_shape of the same buffer.

// CHECK-LABEL: func.func @read_through_view(
// CHECK: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<4x8xf32>
// CHECK: [[ROW:%[[:alnum:]_]+]] = memref.subview [[A]]
// CHECK: vector.store {{%[[:alnum:]_]+}}, [[ROW]]
// CHECK: [[FLAT:%[[:alnum:]_]+]] = memref.collapse_shape [[A]]
// CHECK: [[R:%[[:alnum:]_]+]] = vector.load [[FLAT]]
// CHECK: memref.dealloc [[A]]
// CHECK: return [[R]]
func.func @read_through_view(%i: index, %vec: vector<4xf32>) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4x8xf32>
  %row = memref.subview %a[%i, 0] [1, 8] [1, 1]
      : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  vector.store %vec, %row[%c0]
      : memref<8xf32, strided<[1], offset: ?>>, vector<4xf32>
  %flat = memref.collapse_shape %a [[0, 1]]
      : memref<4x8xf32> into memref<32xf32>
  %r = vector.load %flat[%i] : memref<32xf32>, vector<4xf32>
  memref.dealloc %a : memref<4x8xf32>
  return %r : vector<4xf32>
}

// -----

// A buffer passed to a call may be read by the callee: kept.

// CHECK-LABEL: func.func @passed_to_call(
// CHECK: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK: memref.store {{%[[:alnum:]_]+}}, [[A]]
// CHECK: call @consume([[A]])
// CHECK: memref.dealloc [[A]]
func.func private @consume(memref<8xf32>)

func.func @passed_to_call(%i: index, %v: f32) {
  %a = memref.alloc() : memref<8xf32>
  memref.store %v, %a[%i] : memref<8xf32>
  func.call @consume(%a) : (memref<8xf32>) -> ()
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// A returned buffer (here through a cast) outlives the function: kept.

// CHECK-LABEL: func.func @returned(
// CHECK: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK: memref.store {{%[[:alnum:]_]+}}, [[A]]
// CHECK: [[C:%[[:alnum:]_]+]] = memref.cast [[A]]
// CHECK: return [[C]]
func.func @returned(%i: index, %v: f32) -> memref<?xf32> {
  %a = memref.alloc() : memref<8xf32>
  memref.store %v, %a[%i] : memref<8xf32>
  %c = memref.cast %a : memref<8xf32> to memref<?xf32>
  return %c : memref<?xf32>
}

// -----

// A buffer copied into a function argument is read by the copy: kept.

// CHECK-LABEL: func.func @copied_out(
// CHECK-SAME: [[OUT:%[[:alnum:]_]+]]: memref<8xf32>
// CHECK: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK: linalg.fill {{.*}} outs([[A]] :
// CHECK: memref.copy [[A]], [[OUT]]
// CHECK: memref.dealloc [[A]]
func.func @copied_out(%v: f32, %out: memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%v : f32) outs(%a : memref<8xf32>)
  memref.copy %a, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// A chain: %a is read only to compute what is stored into %b, which nothing
// reads. The first round deletes %b and its store; the load of %a and the
// multiplication then have no user and go; the second round finds %a
// unread and deletes it too.

// CHECK-LABEL: func.func @chain(
// CHECK-NOT: memref.alloc
// CHECK-NOT: vector.store
// CHECK-NOT: memref.load
// CHECK-NOT: arith.mulf
// CHECK-NOT: memref.store
// CHECK-NOT: memref.dealloc
// CHECK: return{{$}}
func.func @chain(%i: index, %v: f32, %vec: vector<4xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  vector.store %vec, %a[%c0] : memref<8xf32>, vector<4xf32>
  %x = memref.load %a[%i] : memref<8xf32>
  %y = arith.mulf %x, %v : f32
  memref.store %y, %b[%i] : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  return
}

// -----

// An unread buffer whose only writer also writes live buffers stays: the
// forward kernel writes the unread gates and cells but also y, h_n and
// c_n, which are returned; deleting the kernel would lose them.

// CHECK-LABEL: func.func @shared_writer(
// CHECK: [[Y:%[[:alnum:]_]+]] = memref.alloc() : memref<2x3x5xf32>
// CHECK: [[G:%[[:alnum:]_]+]] = memref.alloc() : memref<2x3x20xf32>
// CHECK: [[CS:%[[:alnum:]_]+]] = memref.alloc() : memref<2x3x5xf32>
// CHECK: rnn.cell_fwd #rnn.lstm block(1)
// CHECK-SAME: outs([[Y]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}) saved(gates [[G]], cells [[CS]])
// CHECK: memref.dealloc [[G]]
// CHECK: memref.dealloc [[CS]]
// CHECK: return [[Y]] :
func.func @shared_writer(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %bi: memref<20xf32>, %bh: memref<20xf32>,
    %hn: memref<3x5xf32>, %cn: memref<3x5xf32>) -> memref<2x3x5xf32> {
  %y = memref.alloc() : memref<2x3x5xf32>
  %gates = memref.alloc() : memref<2x3x20xf32>
  %cells = memref.alloc() : memref<2x3x5xf32>
  rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn, %cn) saved(gates %gates, cells %cells)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<2x3x5xf32>, memref<3x5xf32>, memref<3x5xf32>,
        memref<2x3x20xf32>, memref<2x3x5xf32>
  memref.dealloc %gates : memref<2x3x20xf32>
  memref.dealloc %cells : memref<2x3x5xf32>
  return %y : memref<2x3x5xf32>
}

// -----

// End to end: an LSTM layer (H = 16, so that the lowering stores the saved
// values with vector.store) compiled by rnn-kernels-to-loops. Lowered and
// canonicalized without rnn-dse (prefix NODSE), the forward still allocates
// and writes gates and cells, which nothing reads in inference; the
// pipeline, which runs rnn-dse, leaves neither (INFER). The training
// function keeps both for the backward, while the inference function next
// to it still has neither (TRAIN). Under policy=gates (REMAT) the forward's
// gates are unread and deleted: the only gates buffer is the replay's,
// allocated in the backward phase, and cells are still saved.

// NODSE-LABEL: func.func @lstm(
// NODSE: [[G:%[[:alnum:]_]+]] = memref.alloc() {{{.*}}rnn.role = "gates"{{.*}}} : memref<2x3x64xf32>
// NODSE: [[CS:%[[:alnum:]_]+]] = memref.alloc() {{{.*}}rnn.role = "cells"{{.*}}} : memref<2x3x16xf32>
// NODSE-DAG: [[GT:%[[:alnum:]_]+]] = memref.subview [[G]]
// NODSE-DAG: [[CT:%[[:alnum:]_]+]] = memref.subview [[CS]]
// NODSE-DAG: vector.store {{%[[:alnum:]_]+}}, [[GT]]
// NODSE-DAG: vector.store {{%[[:alnum:]_]+}}, [[CT]]

// INFER-LABEL: func.func @lstm(
// INFER-NOT: rnn.role = "gates"
// INFER-NOT: rnn.role = "cells"
// INFER: memref.alloc() {{{.*}}rnn.role = "y"
// INFER-NOT: rnn.role = "gates"
// INFER-NOT: rnn.role = "cells"
// INFER: memref.alloc() {{{.*}}rnn.role = "xproj"
// INFER-NOT: rnn.role = "gates"
// INFER-NOT: rnn.role = "cells"
// INFER: return

// TRAIN-LABEL: func.func @lstm(
// TRAIN-NOT: rnn.role = "{{gates|cells}}"
// TRAIN-LABEL: func.func @lstm_grad(
// TRAIN: [[G:%[[:alnum:]_]+]] = memref.alloc() {{{.*}}rnn.role = "gates"{{.*}}} : memref<2x3x64xf32>
// TRAIN: [[CS:%[[:alnum:]_]+]] = memref.alloc() {{{.*}}rnn.role = "cells"{{.*}}} : memref<2x3x16xf32>
// TRAIN: [[GT:%[[:alnum:]_]+]] = memref.subview [[G]]
// TRAIN: vector.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN: rnn.begin_backward
// TRAIN: [[GB:%[[:alnum:]_]+]] = memref.subview [[G]]
// TRAIN: vector.load [[GB]]
// TRAIN: memref.dealloc [[G]]

// REMAT-LABEL: func.func @lstm_grad(
// REMAT-NOT: rnn.role = "gates"
// REMAT: memref.alloc() {{{.*}}rnn.role = "cells"{{.*}}} : memref<2x3x16xf32>
// REMAT-NOT: rnn.role = "gates"
// REMAT: rnn.begin_backward
// REMAT: memref.alloc() {{{.*}}rnn.role = "gates"{{.*}}} : memref<2x3x64xf32>
// REMAT-NOT: rnn.role = "gates"
// REMAT: return

//--- lstm.mlir
func.func @lstm(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x16xf32>, %c0: tensor<3x16xf32>,
    %w_ih: tensor<64x4xf32>, %w_hh: tensor<64x16xf32>,
    %b_ih: tensor<64xf32>, %b_hh: tensor<64xf32>)
    -> (tensor<2x3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x16xf32>,
         tensor<3x16xf32>, tensor<64x4xf32>, tensor<64x16xf32>,
         tensor<64xf32>, tensor<64xf32>)
      -> (tensor<2x3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>)
  return %y, %h_n, %c_n : tensor<2x3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>
}
