// REQUIRES: ptxas
// RUN: rnn-opt %s --rnn-infer-pipeline=target=cuda | FileCheck %s

// A function that returns its argument gets a copy from bufferization; on
// the GPU that is a device-to-device copy through the runtime, not a loop
// on the host.

// CHECK-LABEL: llvm.func @gru(
// CHECK: gpu.launch_func <%{{[0-9]+}} : !llvm.ptr> @rnn_kernels::@gru_kernel
// CHECK: llvm.call @mgpuMemcpy(
// CHECK: llvm.return
// CHECK: llvm.func @mgpuMemcpy(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr)
func.func @gru(%x: tensor<3x2x3xf32>, %is_init: tensor<3x2xi1>,
    %h0: tensor<2x4xf32>, %w_ih: tensor<12x3xf32>, %w_hh: tensor<12x4xf32>,
    %b_ih: tensor<12xf32>, %b_hh: tensor<12xf32>)
    -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<3x2x3xf32>, tensor<3x2xi1>, tensor<2x4xf32>,
         tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>)
  return %y, %h_n, %h0 : tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
