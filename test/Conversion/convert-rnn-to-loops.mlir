// RUN: rnn-opt %s -split-input-file --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1" | FileCheck %s
// RUN: rnn-opt %s -split-input-file --rnn-autodiff --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1" | FileCheck %s --check-prefix=TRAIN
// RUN: rnn-opt %s -split-input-file --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=4" | FileCheck %s --check-prefix=VEC

// convert-rnn-to-loops on bufferized kernels: per layer one hoisted input
// GEMM, an scf.for over time holding the recurrent GEMM and the fused gate
// math in scf.parallel, and for the backward a reversed time loop followed
// by the weight and input GEMMs over all steps. The three runs check the
// inference functions with scalar bodies, the training functions, and
// vector-width=4. Shapes: T = 6, B = 2, I = 3, H = 4 (LSTM 4H = 16, GRU
// 3H = 12).

// LSTM forward. The saved gates and cells are written at step t of the loop
// even though nothing reads them here.

// CHECK-DAG: [[MK:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: [[NK:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: [[MN:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-NOT: rnnrt_begin_phase
// CHECK-LABEL: func.func @lstm(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>, [[R:%[[:alnum:]_]+]]: memref<6x2xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<2x4xf32>, [[C0:%[[:alnum:]_]+]]: memref<2x4xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<16x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<16x4xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: memref<16xf32>, [[BH:%[[:alnum:]_]+]]: memref<16xf32>)
// CHECK-DAG: [[Y:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "y"} : memref<6x2x4xf32>
// CHECK-DAG: [[HN:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "h_n"} : memref<2x4xf32>
// CHECK-DAG: [[CN:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "c_n"} : memref<2x4xf32>
// CHECK-DAG: [[GATES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "gates"} : memref<6x2x16xf32>
// CHECK-DAG: [[CELLS:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "cells"} : memref<6x2x4xf32>
// CHECK-DAG: [[XP:%[[:alnum:]_]+]] = memref.alloc() {rnn.role = "xproj"} : memref<6x2x16xf32>
// CHECK: [[XP2:%[[:alnum:]_]+]] = memref.collapse_shape [[XP]] {{\[\[}}0, 1], [2]] : memref<6x2x16xf32> into memref<12x16xf32>
// CHECK: [[X2:%[[:alnum:]_]+]] = memref.collapse_shape [[X]] {{\[\[}}0, 1], [2]] : memref<6x2x3xf32> into memref<12x3xf32>
// CHECK: linalg.fill ins({{%[[:alnum:]_]+}} : f32) outs([[XP2]] : memref<12x16xf32>)
// CHECK-NEXT: linalg.matmul indexing_maps = {{\[}}[[MK]], [[NK]], [[MN]]] ins([[X2]], [[WI]] : memref<12x3xf32>, memref<16x3xf32>) outs([[XP2]] : memref<12x16xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: [[STEPS:%[[:alnum:]_]+]] = arith.constant 6 : index
// CHECK-NOT: linalg.matmul
// CHECK: scf.for [[T:%[[:alnum:]_]+]] = {{%[[:alnum:]_]+}} to [[STEPS]] step
//   Reset of the state where is_init[t, b].
// CHECK: scf.parallel
// CHECK: [[RESET:%[[:alnum:]_]+]] = memref.load [[R]]{{\[}}[[T]], {{%[[:alnum:]_]+}}] : memref<6x2xi1>
// CHECK: arith.select [[RESET]],
// CHECK: scf.reduce
//   The recurrent GEMM of the step.
// CHECK: linalg.fill ins({{%[[:alnum:]_]+}} : f32) outs([[PRE:%[[:alnum:]_]+]] : memref<2x16xf32>)
// CHECK-NEXT: linalg.matmul indexing_maps = {{\[}}[[MK]], [[NK]], [[MN]]] ins([[H:%[[:alnum:]_]+]], [[WH]] : memref<2x4xf32>, memref<16x4xf32>) outs([[PRE]] : memref<2x16xf32>)
//   The fused gate math: i, f, o through exp (sigmoid), g and c through tanh.
// CHECK: scf.parallel
// CHECK-DAG: memref.load [[XP]]{{\[}}[[T]],
// CHECK-DAG: math.exp
// CHECK-DAG: math.exp
// CHECK-DAG: math.exp
// CHECK-DAG: math.tanh
// CHECK-DAG: math.tanh
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[H]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[Y]]{{\[}}[[T]],
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[CELLS]]{{\[}}[[T]],
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GATES]]{{\[}}[[T]],
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GATES]]{{\[}}[[T]],
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GATES]]{{\[}}[[T]],
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GATES]]{{\[}}[[T]],
// CHECK-NOT: math.tanh
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: }
//   After the loop: h_n, c_n copied out, scratch freed, no GEMM.
// CHECK-NOT: linalg.matmul
// CHECK: memref.store {{%[[:alnum:]_]+}}, [[HN]]
// CHECK: memref.store {{%[[:alnum:]_]+}}, [[CN]]
// CHECK: memref.dealloc [[XP]]
// CHECK-NOT: linalg.matmul
// CHECK: return [[Y]], [[HN]], [[CN]] :

// TRAIN-DAG: [[KM:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// TRAIN-DAG: [[KN:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// TRAIN-DAG: [[MN:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// TRAIN-DAG: func.func private @rnnrt_begin_phase(i64)
// TRAIN-LABEL: func.func @lstm_grad(
// TRAIN-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>, [[R:%[[:alnum:]_]+]]: memref<6x2xi1>,
// TRAIN-SAME: [[WI:%[[:alnum:]_]+]]: memref<16x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<16x4xf32>,
// TRAIN: [[CELLS:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "cells"} : memref<6x2x4xf32>
// TRAIN: scf.for
// TRAIN: math.tanh
// TRAIN: memref.store {{%[[:alnum:]_]+}}, [[CELLS]]
//   The phase marker, between the forward and the backward loops.
// TRAIN: [[ONE:%[[:alnum:]_]+]] = arith.constant 1 : i64
// TRAIN-NEXT: call @rnnrt_begin_phase([[ONE]]) : (i64) -> ()
// TRAIN-NOT: rnn.begin_backward
// TRAIN-DAG: [[GX:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "grad_x"} : memref<6x2x3xf32>
// TRAIN-DAG: [[GWI:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "grad_weight_ih"} : memref<16x3xf32>
// TRAIN-DAG: [[GWH:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "grad_weight_hh"} : memref<16x4xf32>
// TRAIN-DAG: [[DG:%[[:alnum:]_]+]] = memref.alloc() {rnn.role = "dgates"} : memref<6x2x16xf32>
//   Time runs backwards: t = T - 1 - i.
// TRAIN: scf.for [[I:%[[:alnum:]_]+]] =
// TRAIN-NEXT: [[LAST:%[[:alnum:]_]+]] = arith.constant 5 : index
// TRAIN-NEXT: [[T:%[[:alnum:]_]+]] = arith.subi [[LAST]], [[I]] : index
// TRAIN-NOT: linalg.matmul
// TRAIN: scf.parallel
// TRAIN-DAG: math.tanh
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DG]]{{\[}}[[T]],
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DG]]{{\[}}[[T]],
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DG]]{{\[}}[[T]],
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DG]]{{\[}}[[T]],
// TRAIN: scf.reduce
//   One GEMM per step: the recurrent gradient from dgates[t].
// TRAIN: [[DGT:%[[:alnum:]_]+]] = memref.subview [[DG]]{{\[}}[[T]], 0, 0] [1, 2, 16] [1, 1, 1]
// TRAIN-NOT: linalg.matmul
// TRAIN: linalg.matmul ins([[DGT]], [[WH]] : memref<2x16xf32, strided<[16, 1], offset: ?>>, memref<16x4xf32>)
// TRAIN-NOT: linalg.matmul
// TRAIN: scf.reduce
// TRAIN-NEXT: }
// TRAIN-NEXT: }
//   After the loop: grad_x, grad_weight_ih and grad_weight_hh as GEMMs over
//   all T * B rows.
// TRAIN: [[DG2:%[[:alnum:]_]+]] = memref.collapse_shape [[DG]] {{\[\[}}0, 1], [2]] : memref<6x2x16xf32> into memref<12x16xf32>
// TRAIN: [[GX2:%[[:alnum:]_]+]] = memref.collapse_shape [[GX]] {{\[\[}}0, 1], [2]]
// TRAIN: linalg.matmul ins([[DG2]], [[WI]] : memref<12x16xf32>, memref<16x3xf32>) outs([[GX2]] : memref<12x3xf32>)
// TRAIN: [[X2:%[[:alnum:]_]+]] = memref.collapse_shape [[X]] {{\[\[}}0, 1], [2]]
// TRAIN: linalg.matmul indexing_maps = {{\[}}[[KM]], [[KN]], [[MN]]] ins([[DG2]], [[X2]] : memref<12x16xf32>, memref<12x3xf32>) outs([[GWI]] : memref<16x3xf32>)
// TRAIN: linalg.matmul indexing_maps = {{\[}}[[KM]], [[KN]], [[MN]]] ins([[DG2]], {{%[[:alnum:]_]+}} : memref<12x16xf32>, memref<12x4xf32>) outs([[GWH]] : memref<16x4xf32>)
// TRAIN-NOT: linalg.matmul
// TRAIN: memref.dealloc [[DG]]
// TRAIN: return

// VEC-LABEL: func.func @lstm(
func.func @lstm(%x: tensor<6x2x3xf32>, %is_init: tensor<6x2xi1>,
    %h0: tensor<2x4xf32>, %c0: tensor<2x4xf32>,
    %w_ih: tensor<16x3xf32>, %w_hh: tensor<16x4xf32>,
    %b_ih: tensor<16xf32>, %b_hh: tensor<16xf32>)
    -> (tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<6x2x3xf32>, tensor<6x2xi1>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<16x3xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y, %h_n, %c_n : tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// GRU forward: the same loop nest with 3 gates; the saved hn_proj and gates
// are stored at step t.

// CHECK-LABEL: func.func @gru(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>, [[R:%[[:alnum:]_]+]]: memref<6x2xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<2x4xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<12x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<12x4xf32>,
// CHECK-DAG: [[Y:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "y"} : memref<6x2x4xf32>
// CHECK-DAG: [[GATES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "gates"} : memref<6x2x12xf32>
// CHECK-DAG: [[HNP:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "hn_proj"} : memref<6x2x4xf32>
// CHECK: linalg.matmul {{.*}}ins({{%[[:alnum:]_]+}}, [[WI]] : memref<12x3xf32>, memref<12x3xf32>) outs({{%[[:alnum:]_]+}} : memref<12x12xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: scf.for [[T:%[[:alnum:]_]+]] =
// CHECK: linalg.matmul {{.*}}ins({{%[[:alnum:]_]+}}, [[WH]] : memref<2x4xf32>, memref<12x4xf32>) outs({{%[[:alnum:]_]+}} : memref<2x12xf32>)
// CHECK: scf.parallel
// CHECK-DAG: math.exp
// CHECK-DAG: math.exp
// CHECK-DAG: math.tanh
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[Y]]{{\[}}[[T]],
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[HNP]]{{\[}}[[T]],
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GATES]]{{\[}}[[T]],
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GATES]]{{\[}}[[T]],
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GATES]]{{\[}}[[T]],
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: linalg.matmul
// CHECK: return [[Y]],

// GRU backward: reversed loop with one GEMM (dhidden[t] W_hh); after it,
// grad_x from the input-side gradients and the weight gradients, all over
// T * B rows.

// TRAIN-LABEL: func.func @gru_grad(
// TRAIN-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>, [[R:%[[:alnum:]_]+]]: memref<6x2xi1>,
// TRAIN-SAME: {{%[[:alnum:]_]+}}: memref<2x4xf32>,
// TRAIN-SAME: [[WI:%[[:alnum:]_]+]]: memref<12x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<12x4xf32>,
// TRAIN: call @rnnrt_begin_phase(
// TRAIN: [[DIN:%[[:alnum:]_]+]] = memref.alloc() {rnn.role = "dxproj"} : memref<6x2x12xf32>
// TRAIN-NEXT: [[DHID:%[[:alnum:]_]+]] = memref.alloc() {rnn.role = "dhproj"} : memref<6x2x12xf32>
// TRAIN: scf.for [[I:%[[:alnum:]_]+]] =
// TRAIN-NEXT: [[LAST:%[[:alnum:]_]+]] = arith.constant 5 : index
// TRAIN-NEXT: [[T:%[[:alnum:]_]+]] = arith.subi [[LAST]], [[I]] : index
// TRAIN-NOT: linalg.matmul
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DIN]]{{\[}}[[T]],
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DIN]]{{\[}}[[T]],
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DIN]]{{\[}}[[T]],
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DHID]]{{\[}}[[T]],
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DHID]]{{\[}}[[T]],
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DHID]]{{\[}}[[T]],
// TRAIN: [[DHT:%[[:alnum:]_]+]] = memref.subview [[DHID]]{{\[}}[[T]], 0, 0]
// TRAIN: linalg.matmul ins([[DHT]], [[WH]] :
// TRAIN-NOT: linalg.matmul
// TRAIN: scf.reduce
// TRAIN-NEXT: }
// TRAIN-NEXT: }
// TRAIN: [[DIN2:%[[:alnum:]_]+]] = memref.collapse_shape [[DIN]]
// TRAIN: [[DHID2:%[[:alnum:]_]+]] = memref.collapse_shape [[DHID]]
// TRAIN: linalg.matmul ins([[DIN2]], [[WI]] : memref<12x12xf32>, memref<12x3xf32>) outs({{%[[:alnum:]_]+}} : memref<12x3xf32>)
// TRAIN: linalg.matmul indexing_maps = {{.*}} ins([[DIN2]], {{%[[:alnum:]_]+}} : memref<12x12xf32>, memref<12x3xf32>) outs({{%[[:alnum:]_]+}} : memref<12x3xf32>)
// TRAIN: linalg.matmul indexing_maps = {{.*}} ins([[DHID2]], {{%[[:alnum:]_]+}} : memref<12x12xf32>, memref<12x4xf32>) outs({{%[[:alnum:]_]+}} : memref<12x4xf32>)
// TRAIN-NOT: linalg.matmul
// TRAIN: return

// VEC-LABEL: func.func @gru(
func.func @gru(%x: tensor<6x2x3xf32>, %is_init: tensor<6x2xi1>,
    %h0: tensor<2x4xf32>, %w_ih: tensor<12x3xf32>, %w_hh: tensor<12x4xf32>,
    %b_ih: tensor<12xf32>, %b_hh: tensor<12xf32>)
    -> (tensor<6x2x4xf32>, tensor<2x4xf32>) {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<6x2x3xf32>, tensor<6x2xi1>, tensor<2x4xf32>,
         tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>)
      -> (tensor<6x2x4xf32>, tensor<2x4xf32>)
  return %y, %h_n : tensor<6x2x4xf32>, tensor<2x4xf32>
}

// -----

// vector-width=4 with H = 6: each elementwise loop runs lanes [0, 4) four
// at a time on vector<4xf32>, then the remainder [4, 6) one at a time.

// VEC-LABEL: func.func @lstm_wide(
// VEC: scf.for [[T:%[[:alnum:]_]+]] =
// VEC: [[UB:%[[:alnum:]_]+]] = arith.constant 4 : index
// VEC-NEXT: [[W:%[[:alnum:]_]+]] = arith.constant 4 : index
// VEC-NEXT: scf.parallel ({{%[[:alnum:]_]+}}, [[J:%[[:alnum:]_]+]]) = ({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}) to ({{%[[:alnum:]_]+}}, [[UB]]) step ({{%[[:alnum:]_]+}}, [[W]])
// VEC: vector.load {{%[[:alnum:]_]+}}{{\[}}{{%[[:alnum:]_]+}}, [[J]]] : memref<1x6xf32>, vector<4xf32>
// VEC: arith.select {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : vector<4xf32>
// VEC: scf.reduce
// VEC: [[LO:%[[:alnum:]_]+]] = arith.constant 4 : index
// VEC-NEXT: [[HI:%[[:alnum:]_]+]] = arith.constant 6 : index
// VEC-NEXT: [[ONE:%[[:alnum:]_]+]] = arith.constant 1 : index
// VEC-NEXT: scf.parallel ({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}) = ({{%[[:alnum:]_]+}}, [[LO]]) to ({{%[[:alnum:]_]+}}, [[HI]]) step ({{%[[:alnum:]_]+}}, [[ONE]])
// VEC: memref.load
// VEC: arith.select {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : f32
// VEC: linalg.matmul
//   Gate math, vector part then scalar remainder.
// VEC: scf.parallel
// VEC: math.exp {{%[[:alnum:]_]+}} : vector<4xf32>
// VEC: math.tanh {{%[[:alnum:]_]+}} : vector<4xf32>
// VEC: vector.store {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}{{\[}}[[T]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}] : memref<2x1x6xf32>, vector<4xf32>
// VEC: scf.reduce
// VEC: scf.parallel
// VEC: math.exp {{%[[:alnum:]_]+}} : f32
// VEC: math.tanh {{%[[:alnum:]_]+}} : f32
// VEC: memref.store {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}{{\[}}[[T]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}] : memref<2x1x6xf32>
// VEC: scf.reduce
// VEC: return
func.func @lstm_wide(%x: tensor<2x1x2xf32>, %is_init: tensor<2x1xi1>,
    %h0: tensor<1x6xf32>, %c0: tensor<1x6xf32>,
    %w_ih: tensor<24x2xf32>, %w_hh: tensor<24x6xf32>,
    %b_ih: tensor<24xf32>, %b_hh: tensor<24xf32>)
    -> (tensor<2x1x6xf32>, tensor<1x6xf32>, tensor<1x6xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x1x2xf32>, tensor<2x1xi1>, tensor<1x6xf32>, tensor<1x6xf32>,
         tensor<24x2xf32>, tensor<24x6xf32>, tensor<24xf32>, tensor<24xf32>)
      -> (tensor<2x1x6xf32>, tensor<1x6xf32>, tensor<1x6xf32>)
  return %y, %h_n, %c_n : tensor<2x1x6xf32>, tensor<1x6xf32>, tensor<1x6xf32>
}
