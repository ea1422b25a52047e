// RUN: rnn-opt %s --rnn-infer-pipeline | FileCheck %s
// RUN: rnn-opt %s --rnn-infer-pipeline | FileCheck %s --check-prefix=NOLIBM
// RUN: not rnn-opt %s --rnn-infer-pipeline=remat=budget:1 2>&1 | FileCheck %s --check-prefix=REMAT
// RUN: not rnn-opt %s --rnn-to-buffers-pipeline=remat=gates 2>&1 | FileCheck %s --check-prefix=REMAT-BUFFERS

// A pipeline that makes no training function takes no remat policy.
// REMAT: rnn-infer-pipeline: remat applies to the training pipelines (rnn-train-pipeline, rnn-train-to-buffers-pipeline); this one makes no training function
// REMAT-BUFFERS: rnn-to-buffers-pipeline: remat applies to the training pipelines

// rnn-infer-pipeline compiles the model function itself (no training
// function, no phase marker) to the LLVM dialect: buffers through the
// runtime's accounted allocator, GEMMs through its sgemm, tanh/exp as
// polynomials.

// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_ciface_rnnrt_sgemm(i64, i64, f32, f32, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-NOT: rnnrt_begin_phase
// CHECK-LABEL: llvm.func @gru(
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc(
// CHECK: llvm.call @rnnrt_sgemm(
// CHECK: llvm.call @rnnrt_sgemm(
// CHECK: llvm.call @_mlir_memref_to_llvm_free(
// CHECK: llvm.return
// CHECK-NOT: @gru_grad
// CHECK-NOT: rnnrt_begin_phase

// NOLIBM-NOT: {{^ *(%[^=]+= )?(func|math|scf|memref|linalg|arith|rnn|vector|tensor|bufferization)\.}}
// NOLIBM-NOT: llvm.call @{{(tanh|exp|expm1|exp2|log|log1p|log2|pow|sqrt|sin|cos|erf|fma|floor)f?}}(
// NOLIBM-NOT: llvm.func @{{[[:alnum:]_]+}}(f32) -> f32
// NOLIBM-NOT: llvm.func @{{[[:alnum:]_]+}}(f64) -> f64
// NOLIBM-NOT: llvm.intr.{{(tanh|exp|exp2|log|log2|pow|sin|cos)}}(

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
