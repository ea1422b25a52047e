// RUN: rnn-opt %s --rnn-train-to-buffers-pipeline | FileCheck %s
// RUN: rnn-opt %s --rnn-train-to-buffers-pipeline | FileCheck %s --check-prefix=BUFFERS
// RUN: rnn-opt %s --rnn-train-to-buffers-pipeline | %python -c "import re, sys; a = re.findall(r'memref[.]alloc[(][)].*', sys.stdin.read()); assert a and all('rnn.offset' in x for x in a), a"

// rnn-train-to-buffers-pipeline is rnn-train-pipeline up to planned
// buffers: the model function and its training function on memrefs, each
// buffer placed in its arena, and the plan's figures on the training
// function. What the forward saves for the backward of this GRU (L=2, T=3,
// B=2, I=3, H=4, f32, remat none), by hand: per layer the gates [T, B, 3H]
// (288 bytes) and the hidden projection [T, B, H] (96 bytes), and layer 0's
// output y [T, B, H] (96 bytes), the input of layer 1's backward:
// 2 * (288 + 96) + 96 = 864 bytes.

// CHECK-LABEL: func.func @gru(%{{[^:]+}}: memref<3x2x3xf32>
// CHECK-LABEL: func.func @gru_grad(%{{[^:]+}}: memref<3x2x3xf32>
// CHECK-SAME: rnn.predicted_saved_bytes = 864 : i64
// CHECK: memref.alloc() {{.*}}rnn.offset = 0 : i64
// CHECK: call @rnnrt_sgemm(
// CHECK: return

// BUFFERS-NOT: tensor<
// BUFFERS-NOT: llvm.func

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
