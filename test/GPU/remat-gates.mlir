// REQUIRES: ptxas
// RUN: rnn-opt %s --rnn-train-pipeline="target=cuda remat=none gemm-rows=2" --mlir-print-ir-after=rnn-device-buffers -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: rnn-opt %s --rnn-train-pipeline="target=cuda remat=gates gemm-rows=2" --mlir-print-ir-after=rnn-device-buffers -o /dev/null 2>&1 | FileCheck %s --check-prefix=GATES
// RUN: rnn-opt %s --rnn-train-pipeline="target=cuda remat=chunk:2 gemm-rows=2" --mlir-print-ir-after=rnn-device-buffers -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNK

// Recompute policies on the GPU: the forward of @lstm_grad stores no gates. With
// remat=none the forward allocates the [T, B, 4H] gates buffer, its gate
// kernel writes it and the backward reads it; with remat=gates no buffer
// of role "gates" exists before the backward begins (rnnrt_begin_phase),
// and the gates are recomputed there, into a buffer the backward allocates.
// With remat=chunk:2 that buffer holds 2 steps, and the forward saves the
// cell state entering each chunk (ceil(3 / 2) = 2 of them).

// NONE-LABEL: func.func @lstm_grad(
// NONE: gpu.alloc async {{.*}}rnn.role = "gates"{{.*}} : memref<3x2x16xf32>
// NONE: scf.for
// NONE: call @rnnrt_begin_phase(
// NONE-NOT: rnn.role = "gates"
// NONE: gpu.module @rnn_kernels

// GATES-LABEL: func.func @lstm_grad(
// GATES-NOT: rnn.role = "gates"
// GATES: call @rnnrt_begin_phase(
// GATES: gpu.alloc async {{.*}}rnn.role = "gates"{{.*}} : memref<3x2x16xf32>
// GATES: gpu.module @rnn_kernels

// CHUNK-LABEL: func.func @lstm_grad(
// CHUNK-NOT: rnn.role = "gates"
// CHUNK: gpu.alloc async {{.*}}rnn.role = "cells"{{.*}} : memref<2x2x4xf32>
// CHUNK-NOT: rnn.role = "gates"
// CHUNK: call @rnnrt_begin_phase(
// CHUNK: gpu.alloc async {{.*}}rnn.role = "gates"{{.*}} : memref<2x2x16xf32>
// CHUNK-NOT: rnn.role = "gates"
// CHUNK: gpu.module @rnn_kernels

func.func @lstm(%x: tensor<3x2x3xf32> {rnn.name = "x"},
    %is_init: tensor<3x2xi1> {rnn.name = "is_init"},
    %h0: tensor<2x4xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %c0: tensor<2x4xf32> {rnn.name = "c0", rnn.layer = 0 : i64},
    %w_ih: tensor<16x3xf32> {rnn.name = "weight_ih_l0"},
    %w_hh: tensor<16x4xf32> {rnn.name = "weight_hh_l0"},
    %b_ih: tensor<16xf32> {rnn.name = "bias_ih_l0"},
    %b_hh: tensor<16xf32> {rnn.name = "bias_hh_l0"})
    -> (tensor<3x2x4xf32> {rnn.name = "y"},
        tensor<2x4xf32> {rnn.name = "h_n", rnn.layer = 0 : i64},
        tensor<2x4xf32> {rnn.name = "c_n", rnn.layer = 0 : i64}) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<3x2x3xf32>, tensor<3x2xi1>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<16x3xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y, %h_n, %c_n : tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
