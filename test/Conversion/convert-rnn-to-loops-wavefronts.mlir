// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=4" --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1 wavefronts=1" | FileCheck %s
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=4" --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1" | FileCheck %s --check-prefix=OFF
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=64" --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1 wavefronts=1" | FileCheck %s --check-prefix=ONE-BLOCK

// convert-rnn-to-loops with wavefronts on a 2-layer LSTM, T = 6, B = 2,
// I = 3, H = 4, GEMM blocks of P = 2 steps (3 blocks). The forward is a
// wavefront: layer 0 on lane 0 signals the slot of block [t0, t0 + 2) once
// its y is written; layer 1 on lane 1 waits for that slot before its
// projection of the block. The backward is one too: layer 1 on lane 0
// signals once its block of grad_x is written, layer 0 on lane 1 waits
// before its steps. The kernels' scratch is freed after the join. The
// inference function @lstm2 has one block of 6 steps: no lanes.

// CHECK-LABEL: func.func @lstm2_grad(
//   Forward: fork, layer 0 on lane 0, each block signalled after its
//   steps; block [t0, t0 + 2) has slot t0 / 2 (blocks start 2 steps apart).
// CHECK: rnn.fork
// CHECK-NEXT: rnn.lane 0
// CHECK: scf.for [[B0:%[[:alnum:]_]+]] =
// CHECK-NEXT: [[TWO:%[[:alnum:]_]+]] = arith.constant 2 : index
// CHECK-NEXT: [[T0:%[[:alnum:]_]+]] = arith.muli [[B0]], [[TWO]]
// CHECK-NOT: rnn.wait
// CHECK: [[S0:%[[:alnum:]_]+]] = arith.divui [[T0]], %c2
// CHECK-NEXT: rnn.signal [[S0]]
// CHECK-NEXT: }
//   Layer 1 on lane 1: each block waits for layer 0's before its
//   projection.
// CHECK: rnn.lane 1
// CHECK-NOT: rnn.signal
// CHECK: scf.for [[B1:%[[:alnum:]_]+]] =
// CHECK-NEXT: [[TWO1:%[[:alnum:]_]+]] = arith.constant 2 : index
// CHECK-NEXT: [[T1:%[[:alnum:]_]+]] = arith.muli [[B1]], [[TWO1]]
// CHECK-NEXT: arith.constant 2 : index
// CHECK-NEXT: [[S1:%[[:alnum:]_]+]] = arith.divui [[T1]],
// CHECK-NEXT: rnn.wait [[S1]]
// CHECK-NOT: rnn.signal
// CHECK: rnn.join
// CHECK-NEXT: memref.dealloc
// CHECK: rnn.begin_backward
//   Backward: layer 1 on lane 0 signals each block once its grad_x is
//   written (slots 3 on: the forward's took 0 to 2), last block first; the
//   zero cotangents of layer 0's final states go on lane 1 with layer 0,
//   which waits for each block before its steps.
// CHECK: rnn.fork
// CHECK-NEXT: rnn.lane 0
// CHECK: [[SIGNAL:%[[:alnum:]_]+]] = arith.addi {{%[[:alnum:]_]+}}, %c3
// CHECK-NEXT: rnn.signal [[SIGNAL]]
// CHECK: rnn.lane 1
// CHECK-NEXT: linalg.fill
// CHECK: linalg.fill
// CHECK: [[WAIT:%[[:alnum:]_]+]] = arith.addi {{%[[:alnum:]_]+}}, %c3
// CHECK-NEXT: rnn.wait [[WAIT]]
// CHECK-NOT: rnn.signal
// CHECK: rnn.join
// CHECK-NEXT: memref.dealloc
// CHECK-NOT: rnn.fork
// CHECK: return

// Without the option, or with one block (nothing to overlap), no lanes.
// OFF-NOT: rnn.fork
// ONE-BLOCK-NOT: rnn.fork

func.func @lstm2(
    %x: tensor<6x2x3xf32>, %is_init: tensor<6x2xi1>,
    %h0_0: tensor<2x4xf32>, %c0_0: tensor<2x4xf32>,
    %w_ih0: tensor<16x3xf32>, %w_hh0: tensor<16x4xf32>,
    %b_ih0: tensor<16xf32>, %b_hh0: tensor<16xf32>,
    %h0_1: tensor<2x4xf32>, %c0_1: tensor<2x4xf32>,
    %w_ih1: tensor<16x4xf32>, %w_hh1: tensor<16x4xf32>,
    %b_ih1: tensor<16xf32>, %b_hh1: tensor<16xf32>)
    -> (tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y0, %h_n0, %c_n0 = rnn.lstm %x reset %is_init state(%h0_0, %c0_0)
      weights(%w_ih0, %w_hh0, %b_ih0, %b_hh0)
      : (tensor<6x2x3xf32>, tensor<6x2xi1>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<16x3xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  %y1, %h_n1, %c_n1 = rnn.lstm %y0 reset %is_init state(%h0_1, %c0_1)
      weights(%w_ih1, %w_hh1, %b_ih1, %b_hh1)
      : (tensor<6x2x4xf32>, tensor<6x2xi1>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y1, %h_n1, %c_n1 : tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
