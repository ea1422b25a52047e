// REQUIRES: ptxas
// RUN: rnn-opt %s --rnn-infer-pipeline="target=cuda chip=sm_80 features=+ptx70" | FileCheck %s
// RUN: rnn-opt %s --rnn-infer-pipeline=target=cuda --mlir-print-ir-after=rnn-device-buffers -o /dev/null 2>&1 | FileCheck %s --check-prefix=HOST

// rnn-infer-pipeline{target=cuda} on a two-layer GRU: one gpu.binary for
// the chip and PTX version asked for, launches and GEMM calls on the host,
// and no buffer access outside the kernels.

// CHECK-LABEL: llvm.func @gru(
// CHECK: llvm.call @mgpuMemAlloc(
// CHECK: llvm.call @rnnrt_cuda_sgemm(
// CHECK: gpu.launch_func <%{{[0-9]+}} : !llvm.ptr> @rnn_kernels::@gru_kernel
// CHECK: llvm.call @mgpuMemFree(
// CHECK-NOT: rnnrt_begin_phase
// CHECK: gpu.binary @rnn_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">, {{.*}}assembly = "{{.*}}.version 7.0{{.*}}.target sm_80{{.*}}.entry gru_kernel(
// CHECK-NOT: __nv_

// HOST: IR Dump After DeviceBuffersPass
// HOST-NOT: memref.load
// HOST-NOT: memref.store
// HOST-NOT: vector.
// HOST-NOT: linalg.
// HOST-NOT: scf.parallel
// HOST-NOT: {{memref\.alloc\(}}
// HOST: gpu.module @rnn_kernels

func.func @gru(%x: tensor<3x2x3xf32>, %is_init: tensor<3x2xi1>,
    %h0_0: tensor<2x4xf32>, %w_ih0: tensor<12x3xf32>, %w_hh0: tensor<12x4xf32>,
    %b_ih0: tensor<12xf32>, %b_hh0: tensor<12xf32>,
    %h0_1: tensor<2x4xf32>, %w_ih1: tensor<12x4xf32>, %w_hh1: tensor<12x4xf32>,
    %b_ih1: tensor<12xf32>, %b_hh1: tensor<12xf32>)
    -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y0, %h_n0 = rnn.gru %x reset %is_init state(%h0_0)
      weights(%w_ih0, %w_hh0, %b_ih0, %b_hh0)
      : (tensor<3x2x3xf32>, tensor<3x2xi1>, tensor<2x4xf32>,
         tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>)
  %y1, %h_n1 = rnn.gru %y0 reset %is_init state(%h0_1)
      weights(%w_ih1, %w_hh1, %b_ih1, %b_hh1)
      : (tensor<3x2x4xf32>, tensor<3x2xi1>, tensor<2x4xf32>,
         tensor<12x4xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>)
  return %y1, %h_n0, %h_n1 : tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
