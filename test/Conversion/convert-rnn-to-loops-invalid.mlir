// RUN: rnn-opt %s -split-input-file -verify-diagnostics --convert-rnn-to-loops
// RUN: not rnn-opt %s -split-input-file --convert-rnn-to-loops="vector-width=0" 2>&1 | FileCheck %s --check-prefix=WIDTH

// convert-rnn-to-loops lowers only bufferized f32 kernels and fails on any
// rnn op it leaves behind (the error names the op). A vector width below 1
// is rejected before anything is lowered.

// WIDTH: error: convert-rnn-to-loops: vector-width must be >= 1

// A kernel still in tensor form (one-shot-bufferize has not run).

func.func @tensor_kernel(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %w_ih: tensor<15x4xf32>, %w_hh: tensor<15x5xf32>,
    %b: tensor<15xf32>, %y0: tensor<2x3x5xf32>, %g0: tensor<2x3x15xf32>)
    -> tensor<2x3x5xf32> {
  // expected-error @+1 {{'rnn.cell_fwd' op was not lowered: convert-rnn-to-loops needs bufferized f32 kernels on identity-layout buffers of the default memory space (run rnn-expand-forward and one-shot-bufferize with identity layouts first)}}
  %y, %h_n, %gates, %hn = rnn.cell_fwd #rnn.gru block(1)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b, %b)
      outs(%y0, %h0) saved(gates %g0, hn_proj %y0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
        tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>,
        tensor<2x3x5xf32>, tensor<3x5xf32>,
        tensor<2x3x15xf32>, tensor<2x3x5xf32>
      -> tensor<2x3x5xf32>, tensor<3x5xf32>,
         tensor<2x3x15xf32>, tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// A model op (rnn-expand-forward has not run).

func.func @model_op(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>,
    %w_ih: tensor<20x4xf32>, %w_hh: tensor<20x5xf32>,
    %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{'rnn.lstm' op was not lowered: convert-rnn-to-loops needs bufferized f32 kernels on identity-layout buffers of the default memory space (run rnn-expand-forward and one-shot-bufferize with identity layouts first)}}
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y : tensor<2x3x5xf32>
}

// -----

// A bufferized kernel on f16: only f32 is lowered, so the verifier refuses
// it before the lowering sees it.

func.func @f16_kernel(%x: memref<2x3x4xf16>, %is_init: memref<2x3xi1>,
    %h0: memref<3x5xf16>, %w_ih: memref<15x4xf16>, %w_hh: memref<15x5xf16>,
    %b: memref<15xf16>, %y: memref<2x3x5xf16>, %g: memref<2x3x15xf16>) {
  // expected-error @+1 {{'rnn.cell_fwd' op x must have element type f32 or f64 (the types the lowering computes in), got 'f16'}}
  rnn.cell_fwd #rnn.gru block(1) ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b, %b)
      outs(%y, %h0) saved(gates %g, hn_proj %y)
      : memref<2x3x4xf16>, memref<2x3xi1>, memref<3x5xf16>,
        memref<15x4xf16>, memref<15x5xf16>, memref<15xf16>, memref<15xf16>,
        memref<2x3x5xf16>, memref<3x5xf16>,
        memref<2x3x15xf16>, memref<2x3x5xf16>
  return
}

// -----

// A buffer in another memory space than the default.

func.func @memory_space(%x: memref<3x2x3xf32, 1>, %i: memref<3x2xi1>,
    %h0: memref<2x4xf32>, %c0: memref<2x4xf32>, %w1: memref<16x3xf32>,
    %w2: memref<16x4xf32>, %b1: memref<16xf32>, %b2: memref<16xf32>,
    %y: memref<3x2x4xf32>, %hn: memref<2x4xf32>, %cn: memref<2x4xf32>,
    %g: memref<3x2x16xf32>, %cs: memref<3x2x4xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op was not lowered: convert-rnn-to-loops needs bufferized f32 kernels on identity-layout buffers of the default memory space}}
  rnn.cell_fwd #rnn.lstm block(2) ins(%x, %i) states(%h0, %c0)
      weights(%w1, %w2, %b1, %b2) outs(%y, %hn, %cn) saved(gates %g, cells %cs)
      : memref<3x2x3xf32, 1>, memref<3x2xi1>, memref<2x4xf32>,
        memref<2x4xf32>, memref<16x3xf32>, memref<16x4xf32>, memref<16xf32>,
        memref<16xf32>, memref<3x2x4xf32>, memref<2x4xf32>, memref<2x4xf32>,
        memref<3x2x16xf32>, memref<3x2x4xf32>
  return
}
