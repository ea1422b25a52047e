// RUN: rnn-opt %s -split-input-file --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1" | FileCheck %s
// RUN: rnn-opt %s -split-input-file --rnn-autodiff="gemm-rows=4" --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1" | FileCheck %s --check-prefix=TRAIN
// RUN: rnn-opt %s -split-input-file --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=4" | FileCheck %s --check-prefix=VEC
// RUN: rnn-opt %s -split-input-file --rnn-expand-forward="gemm-rows=4" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1" | FileCheck %s --check-prefix=CHUNKED

// convert-rnn-to-loops on bufferized kernels: per GEMM block of P steps
// one input-projection GEMM, then an scf.for over the block's steps holding
// the recurrent GEMM and the fused gate math in scf.parallel; the backward
// runs the blocks and their steps backwards, with one GEMM per step (the
// recurrent gradient) and per block the GEMMs of grad_x, the weight
// gradients and the bias GEMV. The inference functions are checked with one
// block of all T steps (the default gemm-rows on this small batch; scalar
// bodies, and vector-width=4 for VEC), CHUNKED with blocks of 2 steps, the
// training functions (TRAIN) with blocks of 2 steps. Shapes: T = 6, B = 2,
// I = 3, H = 4 (LSTM 4H = 16, GRU 3H = 12).

// LSTM forward. The saved gates and cells are written at step t of the loop
// even though nothing reads them here.

// CHECK-DAG: [[MK:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: [[NK:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: [[MN:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-NOT: rnn.begin_backward
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
// CHECK-DAG: [[XP:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "xproj"} : memref<6x2x16xf32>
// CHECK-DAG: [[C:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "c"} : memref<2x4xf32>
// CHECK: [[X2:%[[:alnum:]_]+]] = memref.collapse_shape [[X]] {{\[\[}}0, 1], [2]] : memref<6x2x3xf32> into memref<12x3xf32>
// CHECK: [[XP2:%[[:alnum:]_]+]] = memref.collapse_shape [[XP]] {{\[\[}}0, 1], [2]] : memref<6x2x16xf32> into memref<12x16xf32>
// CHECK: linalg.fill ins({{%[[:alnum:]_]+}} : f32) outs([[XP2]] : memref<12x16xf32>)
// CHECK-NEXT: linalg.matmul indexing_maps = {{\[}}[[MK]], [[NK]], [[MN]]] ins([[X2]], [[WI]] : memref<12x3xf32>, memref<16x3xf32>) outs([[XP2]] : memref<12x16xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: [[STEPS:%[[:alnum:]_]+]] = arith.constant 6 : index
// CHECK-NOT: linalg.matmul
// CHECK: scf.for [[I:%[[:alnum:]_]+]] = {{%[[:alnum:]_]+}} to [[STEPS]] step
// CHECK-NEXT: [[T:%[[:alnum:]_]+]] = arith.addi {{%[[:alnum:]_]+}}, [[I]] : index
//   The states entering step t as step t - 1 left them: y[t - 1] (h0 at
//   t = 0) and the carried c (c0 at t = 0).
// CHECK: [[HPREV:%[[:alnum:]_]+]] = arith.select {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : memref<2x4xf32, strided<[4, 1], offset: ?>>
// CHECK: [[CPREV:%[[:alnum:]_]+]] = arith.select {{%[[:alnum:]_]+}}, [[C0]], [[C]] : memref<2x4xf32>
//   Step t's views: its row of the input projection and of every output.
// CHECK-NEXT: [[XPT:%[[:alnum:]_]+]] = memref.subview [[XP]]{{\[}}[[I]], 0, 0] [1, 2, 16]
// CHECK-NEXT: [[GT:%[[:alnum:]_]+]] = memref.subview [[GATES]]{{\[}}[[T]], 0, 0] [1, 2, 16]
// CHECK-NEXT: [[CT:%[[:alnum:]_]+]] = memref.subview [[CELLS]]{{\[}}[[T]], 0, 0] [1, 2, 4]
// CHECK-NEXT: [[YT:%[[:alnum:]_]+]] = memref.subview [[Y]]{{\[}}[[T]], 0, 0] [1, 2, 4]
//   The recurrent GEMM of step t, on the unmasked state: no kernel before it.
// CHECK-NOT: scf.parallel
// CHECK: linalg.fill ins({{%[[:alnum:]_]+}} : f32) outs([[PRE:%[[:alnum:]_]+]] : memref<2x16xf32>)
// CHECK-NEXT: linalg.matmul indexing_maps = {{\[}}[[MK]], [[NK]], [[MN]]] ins([[HPREV]], [[WH]] : memref<2x4xf32, strided<[4, 1], offset: ?>>, memref<16x4xf32>) outs([[PRE]] : memref<2x16xf32>)
//   One kernel: where is_init[t, b], zero for the recurrent term of each
//   gate and the incoming cell state; the gate math, storing what the step
//   saves and the state it leaves.
// CHECK: scf.parallel
// CHECK-NEXT: [[RESET:%[[:alnum:]_]+]] = memref.load [[R]]{{\[}}[[T]], {{%[[:alnum:]_]+}}] : memref<6x2xi1>
// CHECK-DAG: memref.load [[XPT]]
// CHECK-DAG: memref.load [[CPREV]]
// CHECK-DAG: arith.select [[RESET]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : f32
// CHECK-DAG: arith.select [[RESET]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : f32
// CHECK-DAG: arith.select [[RESET]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : f32
// CHECK-DAG: arith.select [[RESET]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : f32
// CHECK-DAG: arith.select [[RESET]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : f32
// CHECK-DAG: math.exp
// CHECK-DAG: math.exp
// CHECK-DAG: math.exp
// CHECK-DAG: math.tanh
// CHECK-DAG: math.tanh
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[C]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[YT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[CT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-NOT: math.tanh
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: }
//   After the loop, one kernel: the final states (h is y's last step), and
//   the scratch is freed.
// CHECK-NOT: linalg.matmul
// CHECK: scf.parallel
// CHECK: memref.store {{%[[:alnum:]_]+}}, [[HN]]
// CHECK: memref.store {{%[[:alnum:]_]+}}, [[CN]]
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NOT: scf.parallel
// CHECK: memref.dealloc [[XP]]
// CHECK-NOT: linalg.matmul
// CHECK: return [[Y]], [[HN]], [[CN]] :

// TRAIN-DAG: [[KM:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// TRAIN-DAG: [[KN:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// TRAIN-DAG: [[MN:#map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// TRAIN-LABEL: func.func @lstm_grad(
// TRAIN-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>, [[R:%[[:alnum:]_]+]]: memref<6x2xi1>,
// TRAIN-SAME: [[WI:%[[:alnum:]_]+]]: memref<16x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<16x4xf32>,
// TRAIN: [[GATES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "gates"} : memref<6x2x16xf32>
// TRAIN: [[CELLS:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "cells"} : memref<6x2x4xf32>
// TRAIN: scf.for
// TRAIN: [[CT:%[[:alnum:]_]+]] = memref.subview [[CELLS]]
// TRAIN: math.tanh
// TRAIN: memref.store {{%[[:alnum:]_]+}}, [[CT]]
//   The phase marker, between the forward and the backward loops.
// TRAIN: rnn.begin_backward
// TRAIN-NOT: rnnrt_begin_phase
// TRAIN-DAG: [[GX:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "grad_x"} : memref<6x2x3xf32>
// TRAIN-DAG: [[GWI:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "grad_weight_ih"} : memref<16x3xf32>
// TRAIN-DAG: [[GWH:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "grad_weight_hh"} : memref<16x4xf32>
// TRAIN-DAG: [[GBI:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "grad_bias_ih"} : memref<16xf32>
// TRAIN-DAG: [[HIN:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "h_in"} : memref<2x2x4xf32>
// TRAIN-DAG: [[ONES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "ones"} : memref<1x4xf32>
// TRAIN-NOT: rnn.role = "dgates"
//   The weight and bias gradients are sums over the blocks, zeroed first.
// TRAIN: memref.store {{%[[:alnum:]_]+}}, [[GWI]]
// TRAIN: memref.store {{%[[:alnum:]_]+}}, [[GWH]]
// TRAIN: memref.store {{%[[:alnum:]_]+}}, [[GBI]]
//   Blocks of P = 2 steps run backwards, and the steps within a block.
// TRAIN: scf.for [[J:%[[:alnum:]_]+]] =
// TRAIN: scf.for [[I:%[[:alnum:]_]+]] =
// TRAIN-NOT: linalg.matmul
// TRAIN: [[HT:%[[:alnum:]_]+]] = memref.subview [[HIN]]
// TRAIN-NOT: linalg.matmul
// TRAIN: [[GT:%[[:alnum:]_]+]] = memref.subview [[GATES]]
// TRAIN-NOT: linalg.matmul
// TRAIN: scf.parallel
//   The gradient reaching h from step t + 1 is masked here with
//   is_init[t + 1] (nothing stops it after the last step), not by a kernel
//   after the GEMM that made it.
// TRAIN: [[NEXT:%[[:alnum:]_]+]] = arith.minui
// TRAIN-NEXT: [[RNEXT:%[[:alnum:]_]+]] = memref.load [[R]]{{\[}}[[NEXT]], {{%[[:alnum:]_]+}}] : memref<6x2xi1>
// TRAIN-NEXT: [[BEFORE:%[[:alnum:]_]+]] = arith.cmpi ult,
// TRAIN-NEXT: [[STOP:%[[:alnum:]_]+]] = arith.andi [[RNEXT]], [[BEFORE]] : i1
// TRAIN: arith.select [[STOP]],
// TRAIN-DAG: math.tanh
//   The gate gradients of step t take the place of its gates.
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[HT]]
// TRAIN: scf.reduce
//   The one GEMM of a step, the recurrent gradient, ends it.
// TRAIN-NOT: linalg.matmul
// TRAIN: linalg.matmul ins([[GT]], [[WH]] : memref<2x16xf32, strided<[16, 1], offset: ?>>, memref<16x4xf32>)
// TRAIN-NEXT: }
//   Per block, on its 4 rows of gate gradients: grad_x, the weight
//   gradients (accumulated: no fill before them) and the bias GEMV.
// TRAIN: [[DG:%[[:alnum:]_]+]] = memref.collapse_shape {{%[[:alnum:]_]+}} {{\[\[}}0, 1], [2]] : memref<2x2x16xf32, {{.*}}> into memref<4x16xf32, {{.*}}>
// TRAIN: [[HB:%[[:alnum:]_]+]] = memref.collapse_shape [[HIN]]
// TRAIN: [[BI:%[[:alnum:]_]+]] = memref.expand_shape [[GBI]] {{\[\[}}0, 1]] output_shape [1, 16]
// TRAIN: linalg.fill
// TRAIN-NEXT: linalg.matmul ins([[DG]], [[WI]] : memref<4x16xf32, {{.*}}>, memref<16x3xf32>) outs({{%[[:alnum:]_]+}} : memref<4x3xf32, {{.*}}>)
// TRAIN-NEXT: linalg.matmul indexing_maps = {{\[}}[[KM]], [[KN]], [[MN]]] ins([[DG]], {{%[[:alnum:]_]+}} : memref<4x16xf32, {{.*}}>, memref<4x3xf32, {{.*}}>) outs([[GWI]] : memref<16x3xf32>)
// TRAIN-NEXT: linalg.matmul indexing_maps = {{\[}}[[KM]], [[KN]], [[MN]]] ins([[DG]], [[HB]] : memref<4x16xf32, {{.*}}>, memref<4x4xf32>) outs([[GWH]] : memref<16x4xf32>)
// TRAIN-NEXT: linalg.matmul ins([[ONES]], [[DG]] : memref<1x4xf32>, memref<4x16xf32, {{.*}}>) outs([[BI]] : memref<1x16xf32>)
// TRAIN-NOT: linalg.matmul
// TRAIN-NOT: scf.for
// TRAIN: return

// In GEMM blocks of P = 2 steps (gemm-rows=4): the projection of a block,
// one GEMM of 4 rows per block into a scratch of 2 steps, then the block's
// steps. Cells are saved per step: no chunk in inference.
// CHUNKED-LABEL: func.func @lstm(
// CHUNKED-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>
// CHUNKED-DAG: [[CELLS:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "cells"} : memref<6x2x4xf32>
// CHUNKED-DAG: [[XP:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "xproj"} : memref<2x2x16xf32>
// CHUNKED: scf.for [[W:%[[:alnum:]_]+]] =
// CHUNKED: [[XW:%[[:alnum:]_]+]] = memref.subview [[X]]{{\[}}{{%[[:alnum:]_]+}}, 0, 0] [2, 2, 3]
// CHUNKED: [[XW2:%[[:alnum:]_]+]] = memref.collapse_shape [[XW]]
// CHUNKED: linalg.matmul {{.*}}ins([[XW2]], {{.*}} : memref<4x3xf32, {{.*}}>, memref<16x3xf32>)
// CHUNKED: scf.for
// CHUNKED: memref.subview [[CELLS]]
// CHUNKED: linalg.matmul
// CHUNKED: return

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
// CHECK: scf.for [[I:%[[:alnum:]_]+]] =
// CHECK-NEXT: [[T:%[[:alnum:]_]+]] = arith.addi {{%[[:alnum:]_]+}}, [[I]] : index
// CHECK: [[HPREV:%[[:alnum:]_]+]] = arith.select {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : memref<2x4xf32, strided<[4, 1], offset: ?>>
// CHECK-NEXT: memref.subview
// CHECK-NEXT: [[GT:%[[:alnum:]_]+]] = memref.subview [[GATES]]{{\[}}[[T]], 0, 0] [1, 2, 12]
// CHECK-NEXT: [[HNT:%[[:alnum:]_]+]] = memref.subview [[HNP]]{{\[}}[[T]], 0, 0] [1, 2, 4]
// CHECK-NEXT: [[YT:%[[:alnum:]_]+]] = memref.subview [[Y]]{{\[}}[[T]], 0, 0] [1, 2, 4]
// CHECK-NOT: scf.parallel
// CHECK: linalg.matmul {{.*}}ins([[HPREV]], [[WH]] : memref<2x4xf32, strided<[4, 1], offset: ?>>, memref<12x4xf32>) outs({{%[[:alnum:]_]+}} : memref<2x12xf32>)
// CHECK: scf.parallel
// CHECK-NEXT: [[RESET:%[[:alnum:]_]+]] = memref.load [[R]]{{\[}}[[T]], {{%[[:alnum:]_]+}}] : memref<6x2xi1>
// CHECK-DAG: memref.load [[HPREV]]
// CHECK-DAG: arith.select [[RESET]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : f32
// CHECK-DAG: math.exp
// CHECK-DAG: math.exp
// CHECK-DAG: math.tanh
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[YT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[HNT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: linalg.matmul
// CHECK: return [[Y]],

// GRU backward: reversed loop whose steps write the gradients of the input
// and hidden projections of step t and turn them into the recurrent
// gradient (dhidden W_hh), grad_x[t] and the step's share of the weight
// gradients.

// TRAIN-LABEL: func.func @gru_grad(
// TRAIN-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>, [[R:%[[:alnum:]_]+]]: memref<6x2xi1>,
// TRAIN-SAME: {{%[[:alnum:]_]+}}: memref<2x4xf32>,
// TRAIN-SAME: [[WI:%[[:alnum:]_]+]]: memref<12x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<12x4xf32>,
// TRAIN: [[GATES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "gates"} : memref<6x2x12xf32>
// TRAIN: [[HNPROJ:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "hn_proj"} : memref<6x2x4xf32>
// TRAIN: rnn.begin_backward
// TRAIN: [[DHID:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "dhproj"} : memref<2x12xf32>
// TRAIN-NEXT: [[HIN:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "h_in"} : memref<2x2x4xf32>
// TRAIN-NEXT: [[ONES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "ones"} : memref<1x4xf32>
// TRAIN: scf.for [[J:%[[:alnum:]_]+]] =
// TRAIN: scf.for [[I:%[[:alnum:]_]+]] =
// TRAIN-NOT: linalg.matmul
// TRAIN: [[NT:%[[:alnum:]_]+]] = memref.subview [[HNPROJ]]
// TRAIN: [[GT:%[[:alnum:]_]+]] = memref.subview [[GATES]]
// TRAIN-NOT: linalg.matmul
//   The input projection's gradients over the gates, the n part of the
//   hidden projection's over hn_proj, all of them in dhproj.
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[NT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DHID]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DHID]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DHID]]
// TRAIN: linalg.matmul ins([[DHID]], [[WH]] :
// TRAIN-NEXT: }
//   Per block: grad_x, grad_W_ih, grad_W_hh in two parts (r, z from the
//   input projection's gradients, n from hn_proj's), two bias GEMVs.
// TRAIN: linalg.matmul ins({{%[[:alnum:]_]+}}, [[WI]] : memref<4x12xf32, {{.*}}>, memref<12x3xf32>) outs({{%[[:alnum:]_]+}} : memref<4x3xf32, {{.*}}>)
// TRAIN-NEXT: linalg.matmul indexing_maps = {{.*}} ins({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : memref<4x12xf32, {{.*}}>, memref<4x3xf32, {{.*}}>) outs({{%[[:alnum:]_]+}} : memref<12x3xf32>)
// TRAIN: linalg.matmul indexing_maps = {{.*}} ins({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : memref<4x8xf32, strided<[12, 1], offset: ?>>, memref<4x4xf32>) outs({{%[[:alnum:]_]+}} : memref<8x4xf32, strided<[4, 1]>>)
// TRAIN-NEXT: linalg.matmul indexing_maps = {{.*}} ins({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : memref<4x4xf32, {{.*}}>, memref<4x4xf32>) outs({{%[[:alnum:]_]+}} : memref<4x4xf32, strided<[4, 1], offset: 32>>)
// TRAIN: linalg.matmul ins([[ONES]], {{%[[:alnum:]_]+}} : memref<1x4xf32>, memref<4x12xf32, {{.*}}>) outs({{%[[:alnum:]_]+}} : memref<1x12xf32>)
// TRAIN-NEXT: linalg.matmul ins([[ONES]], {{%[[:alnum:]_]+}} : memref<1x4xf32>, memref<4x4xf32, {{.*}}>) outs({{%[[:alnum:]_]+}} : memref<1x4xf32, strided<[12, 1], offset: 8>>)
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

// MGU forward: the GRU's loop nest with 2 gates (f, n); the saved hn_proj
// and gates are stored at step t, with one exp (the sigmoid of f) and one
// tanh per element.

// CHECK-LABEL: func.func @mgu(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>, [[R:%[[:alnum:]_]+]]: memref<6x2xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<2x4xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<8x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<8x4xf32>,
// CHECK-DAG: [[Y:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "y"} : memref<6x2x4xf32>
// CHECK-DAG: [[GATES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "gates"} : memref<6x2x8xf32>
// CHECK-DAG: [[HNP:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "hn_proj"} : memref<6x2x4xf32>
// CHECK: linalg.matmul {{.*}}ins({{%[[:alnum:]_]+}}, [[WI]] : memref<12x3xf32>, memref<8x3xf32>) outs({{%[[:alnum:]_]+}} : memref<12x8xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: scf.for [[I:%[[:alnum:]_]+]] =
// CHECK-NEXT: [[T:%[[:alnum:]_]+]] = arith.addi {{%[[:alnum:]_]+}}, [[I]] : index
// CHECK: [[HPREV:%[[:alnum:]_]+]] = arith.select {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : memref<2x4xf32, strided<[4, 1], offset: ?>>
// CHECK: [[GT:%[[:alnum:]_]+]] = memref.subview [[GATES]]{{\[}}[[T]], 0, 0] [1, 2, 8]
// CHECK-NEXT: [[HNT:%[[:alnum:]_]+]] = memref.subview [[HNP]]{{\[}}[[T]], 0, 0] [1, 2, 4]
// CHECK-NEXT: [[YT:%[[:alnum:]_]+]] = memref.subview [[Y]]{{\[}}[[T]], 0, 0] [1, 2, 4]
// CHECK-NOT: scf.parallel
// CHECK: linalg.matmul {{.*}}ins([[HPREV]], [[WH]] : memref<2x4xf32, strided<[4, 1], offset: ?>>, memref<8x4xf32>) outs({{%[[:alnum:]_]+}} : memref<2x8xf32>)
// CHECK: scf.parallel
// CHECK-NEXT: [[RESET:%[[:alnum:]_]+]] = memref.load [[R]]{{\[}}[[T]], {{%[[:alnum:]_]+}}] : memref<6x2xi1>
// CHECK-DAG: memref.load [[HPREV]]
// CHECK-DAG: arith.select [[RESET]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : f32
// CHECK-DAG: math.exp
// CHECK-DAG: math.tanh
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[YT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[HNT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-NOT: math.exp
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: linalg.matmul
// CHECK: return [[Y]],

// MGU backward: per step the gradients of the input projection (over the
// gates) and of the n part of the hidden projection (over hn_proj), both
// gate parts in dhproj, and one GEMM for the recurrent gradient; per block
// grad_x, grad_W_ih, grad_W_hh in two parts (f from the input projection's
// gradients, n from hn_proj's) and two bias GEMVs, as the GRU's.

// TRAIN-LABEL: func.func @mgu_grad(
// TRAIN-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>, [[R:%[[:alnum:]_]+]]: memref<6x2xi1>,
// TRAIN-SAME: {{%[[:alnum:]_]+}}: memref<2x4xf32>,
// TRAIN-SAME: [[WI:%[[:alnum:]_]+]]: memref<8x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<8x4xf32>,
// TRAIN: [[GATES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "gates"} : memref<6x2x8xf32>
// TRAIN: [[HNPROJ:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "hn_proj"} : memref<6x2x4xf32>
// TRAIN: rnn.begin_backward
// TRAIN: [[DHID:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "dhproj"} : memref<2x8xf32>
// TRAIN-NEXT: [[HIN:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "h_in"} : memref<2x2x4xf32>
// TRAIN-NEXT: [[ONES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "ones"} : memref<1x4xf32>
// TRAIN: scf.for [[J:%[[:alnum:]_]+]] =
// TRAIN: scf.for [[I:%[[:alnum:]_]+]] =
// TRAIN-NOT: linalg.matmul
// TRAIN: [[NT:%[[:alnum:]_]+]] = memref.subview [[HNPROJ]]
// TRAIN: [[GT:%[[:alnum:]_]+]] = memref.subview [[GATES]]
// TRAIN-NOT: linalg.matmul
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[NT]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DHID]]
// TRAIN-DAG: memref.store {{%[[:alnum:]_]+}}, [[DHID]]
// TRAIN: linalg.matmul ins([[DHID]], [[WH]] :
// TRAIN-NEXT: }
// TRAIN: linalg.matmul ins({{%[[:alnum:]_]+}}, [[WI]] : memref<4x8xf32, {{.*}}>, memref<8x3xf32>) outs({{%[[:alnum:]_]+}} : memref<4x3xf32, {{.*}}>)
// TRAIN-NEXT: linalg.matmul indexing_maps = {{.*}} ins({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : memref<4x8xf32, {{.*}}>, memref<4x3xf32, {{.*}}>) outs({{%[[:alnum:]_]+}} : memref<8x3xf32>)
// TRAIN: linalg.matmul indexing_maps = {{.*}} ins({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : memref<4x4xf32, strided<[8, 1], offset: ?>>, memref<4x4xf32>) outs({{%[[:alnum:]_]+}} : memref<4x4xf32, strided<[4, 1]>>)
// TRAIN-NEXT: linalg.matmul indexing_maps = {{.*}} ins({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : memref<4x4xf32, {{.*}}>, memref<4x4xf32>) outs({{%[[:alnum:]_]+}} : memref<4x4xf32, strided<[4, 1], offset: 16>>)
// TRAIN: linalg.matmul ins([[ONES]], {{%[[:alnum:]_]+}} : memref<1x4xf32>, memref<4x8xf32, {{.*}}>) outs({{%[[:alnum:]_]+}} : memref<1x8xf32>)
// TRAIN-NEXT: linalg.matmul ins([[ONES]], {{%[[:alnum:]_]+}} : memref<1x4xf32>, memref<4x4xf32, {{.*}}>) outs({{%[[:alnum:]_]+}} : memref<1x4xf32, strided<[8, 1], offset: 4>>)
// TRAIN-NOT: linalg.matmul
// TRAIN: return

func.func @mgu(%x: tensor<6x2x3xf32>, %is_init: tensor<6x2xi1>,
    %h0: tensor<2x4xf32>, %w_ih: tensor<8x3xf32>, %w_hh: tensor<8x4xf32>,
    %b_ih: tensor<8xf32>, %b_hh: tensor<8xf32>)
    -> (tensor<6x2x4xf32>, tensor<2x4xf32>) {
  %y, %h_n = rnn.mgu %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<6x2x3xf32>, tensor<6x2xi1>, tensor<2x4xf32>,
         tensor<8x3xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<6x2x4xf32>, tensor<2x4xf32>)
  return %y, %h_n : tensor<6x2x4xf32>, tensor<2x4xf32>
}

// -----

// CIFG forward: the LSTM's loop nest with 3 gates (f, g, o): gates and
// input projections 3H wide, per element two exps (the sigmoids of f and
// o, none for the coupled input gate 1 - f) and two tanh (g and the cell
// state), three gate stores and the cell state stored at step t.

// CHECK-LABEL: func.func @cifg(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<6x2x3xf32>, [[R:%[[:alnum:]_]+]]: memref<6x2xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<2x4xf32>, [[C0:%[[:alnum:]_]+]]: memref<2x4xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<12x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<12x4xf32>,
// CHECK-DAG: [[Y:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "y"} : memref<6x2x4xf32>
// CHECK-DAG: [[GATES:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "gates"} : memref<6x2x12xf32>
// CHECK-DAG: [[CELLS:%[[:alnum:]_]+]] = memref.alloc() {{.*}}rnn.role = "cells"} : memref<6x2x4xf32>
// CHECK: linalg.matmul {{.*}}ins({{%[[:alnum:]_]+}}, [[WI]] : memref<12x3xf32>, memref<12x3xf32>) outs({{%[[:alnum:]_]+}} : memref<12x12xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: scf.for
// CHECK: [[GT:%[[:alnum:]_]+]] = memref.subview [[GATES]]{{\[}}{{%[[:alnum:]_]+}}, 0, 0] [1, 2, 12]
// CHECK-NEXT: [[CT:%[[:alnum:]_]+]] = memref.subview [[CELLS]]{{\[}}{{%[[:alnum:]_]+}}, 0, 0] [1, 2, 4]
// CHECK-NEXT: [[YT:%[[:alnum:]_]+]] = memref.subview [[Y]]{{\[}}{{%[[:alnum:]_]+}}, 0, 0] [1, 2, 4]
// CHECK: linalg.matmul {{.*}}ins({{%[[:alnum:]_]+}}, [[WH]] : memref<2x4xf32, strided<[4, 1], offset: ?>>, memref<12x4xf32>) outs({{%[[:alnum:]_]+}} : memref<2x12xf32>)
// CHECK: scf.parallel
// CHECK-DAG: math.exp
// CHECK-DAG: math.exp
// CHECK-DAG: math.tanh
// CHECK-DAG: math.tanh
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[GT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[CT]]
// CHECK-DAG: memref.store {{%[[:alnum:]_]+}}, [[YT]]
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK: scf.reduce
// CHECK: return [[Y]],

func.func @cifg(%x: tensor<6x2x3xf32>, %is_init: tensor<6x2xi1>,
    %h0: tensor<2x4xf32>, %c0: tensor<2x4xf32>, %w_ih: tensor<12x3xf32>,
    %w_hh: tensor<12x4xf32>, %b_ih: tensor<12xf32>, %b_hh: tensor<12xf32>)
    -> (tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y, %h_n, %c_n = rnn.cifg %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<6x2x3xf32>, tensor<6x2xi1>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>)
      -> (tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y, %h_n, %c_n : tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// vector-width=4 with H = 6: each elementwise loop runs lanes [0, 4) four
// at a time on vector<4xf32>, then the remainder [4, 6) one at a time; the
// reset selects work on whole vectors (one mask per batch row).

// VEC-LABEL: func.func @lstm_wide(
// VEC: scf.for [[T:%[[:alnum:]_]+]] =
// VEC-NOT: scf.parallel
// VEC: linalg.matmul
//   Gate math, vector part then scalar remainder.
// VEC: [[UB:%[[:alnum:]_]+]] = arith.constant 4 : index
// VEC-NEXT: [[W:%[[:alnum:]_]+]] = arith.constant 4 : index
// VEC-NEXT: scf.parallel ({{%[[:alnum:]_]+}}, [[J:%[[:alnum:]_]+]]) = ({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}) to ({{%[[:alnum:]_]+}}, [[UB]]) step ({{%[[:alnum:]_]+}}, [[W]])
// VEC: vector.load {{%[[:alnum:]_]+}}{{\[}}{{%[[:alnum:]_]+}}, [[J]]] : memref<1x24xf32>, vector<4xf32>
// VEC: arith.select {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : vector<4xf32>
// VEC: math.exp {{%[[:alnum:]_]+}} : vector<4xf32>
// VEC: math.tanh {{%[[:alnum:]_]+}} : vector<4xf32>
// VEC: vector.store {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}{{\[}}{{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}] : memref<1x6xf32, strided<[6, 1], offset: ?>>, vector<4xf32>
// VEC: scf.reduce
// VEC: [[LO:%[[:alnum:]_]+]] = arith.constant 4 : index
// VEC-NEXT: [[HI:%[[:alnum:]_]+]] = arith.constant 6 : index
// VEC-NEXT: [[ONE:%[[:alnum:]_]+]] = arith.constant 1 : index
// VEC-NEXT: scf.parallel ({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}) = ({{%[[:alnum:]_]+}}, [[LO]]) to ({{%[[:alnum:]_]+}}, [[HI]]) step ({{%[[:alnum:]_]+}}, [[ONE]])
// VEC: memref.load
// VEC: arith.select {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : f32
// VEC: math.exp {{%[[:alnum:]_]+}} : f32
// VEC: math.tanh {{%[[:alnum:]_]+}} : f32
// VEC: memref.store {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}{{\[}}{{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}] : memref<1x6xf32, strided<[6, 1], offset: ?>>
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
