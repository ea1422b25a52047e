// RUN: rnn-opt %s --rnn-train-pipeline | FileCheck %s
// RUN: rnn-opt %s --rnn-train-pipeline | FileCheck %s --check-prefix=NOLIBM

// rnn-train-pipeline takes a model function to the LLVM dialect together
// with its training function @lstm_grad: buffers through the runtime's
// accounted allocator, GEMMs through its sgemm (C interface), the phase
// marker as a runtime call, and tanh/exp as polynomials (no libm).

// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_ciface_rnnrt_sgemm(i64, i64, f32, f32, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: llvm.func @rnnrt_begin_phase(i64)
// CHECK-DAG: llvm.func private @rnnrt_sgemm(
// CHECK-DAG: llvm.call @_mlir_ciface_rnnrt_sgemm(

//   The primal stays, as the inference function: no phase marker.
// CHECK-LABEL: llvm.func @lstm(
// CHECK-NOT: rnnrt_begin_phase
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc(
// CHECK-NOT: rnnrt_begin_phase
// CHECK: llvm.call @rnnrt_sgemm(
// CHECK-NOT: rnnrt_begin_phase
// CHECK: llvm.call @_mlir_memref_to_llvm_free(
// CHECK-NOT: rnnrt_begin_phase
// CHECK: llvm.return

//   The training function: forward GEMMs, then the phase marker (once),
//   then the backward GEMMs; scratch is freed.
// CHECK-LABEL: llvm.func @lstm_grad(
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc(
// CHECK: llvm.call @rnnrt_sgemm(
// CHECK-NOT: rnnrt_begin_phase
// CHECK: llvm.call @rnnrt_begin_phase({{%[[:alnum:]_]+}}) : (i64) -> ()
// CHECK-NOT: rnnrt_begin_phase
// CHECK: llvm.call @rnnrt_sgemm(
// CHECK-NOT: rnnrt_begin_phase
// CHECK: llvm.call @_mlir_memref_to_llvm_free(
// CHECK-NOT: rnnrt_begin_phase
// CHECK: llvm.return

// Nothing is left above the LLVM dialect, and no libm function is declared
// or called, directly or through an intrinsic that LLVM lowers to libm.
// NOLIBM-NOT: {{^ *(%[^=]+= )?(func|math|scf|memref|linalg|arith|rnn|vector|tensor|bufferization)\.}}
// NOLIBM-NOT: llvm.call @{{(tanh|exp|expm1|exp2|log|log1p|log2|pow|sqrt|sin|cos|erf|fma|floor)f?}}(
// NOLIBM-NOT: llvm.func @{{[[:alnum:]_]+}}(f32) -> f32
// NOLIBM-NOT: llvm.func @{{[[:alnum:]_]+}}(f64) -> f64
// NOLIBM-NOT: llvm.intr.{{(tanh|exp|exp2|log|log2|pow|sin|cos)}}(

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
