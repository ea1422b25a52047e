// RUN: rnn-opt %s --rnn-train-to-buffers-pipeline="gemm-rows=8" --test-rnn-gemm-calls -o /dev/null | FileCheck %s
// RUN: rnn-opt %s --rnn-train-to-buffers-pipeline="gemm-rows=8 remat=gates" --test-rnn-gemm-calls -o /dev/null | FileCheck %s --check-prefix=GATES
// RUN: rnn-opt %s --rnn-train-to-buffers-pipeline="gemm-rows=8 remat=chunk:4" --test-rnn-gemm-calls -o /dev/null | FileCheck %s --check-prefix=CHUNK

// -test-rnn-gemm-calls counts the GEMMs of the compiled functions (after
// rnn-matmul-to-blas: calls to rnnrt_sgemm), per run and per loop
// iteration. T = 8, B = 4, I = 3, H = 5, gemm-rows=8: GEMM blocks of P = 2
// steps, 4 blocks.
//
// Inference and the training forward: per block the input projection, per
// step the recurrent product. The training backward, shaped like cuDNN's:
// per step one GEMM (the recurrent gradient); per block grad_x, the two
// weight gradients and the bias GEMV (LSTM: 4), or for GRU grad_x, grad_W_ih,
// grad_W_hh in two parts and two bias GEMVs (6).

// CHECK-LABEL: gemm calls of @lstm: 12
// CHECK-NEXT: loop of 4 iterations: 3 per iteration (1 directly)
// CHECK-NEXT: loop of 2 iterations: 1 per iteration (1 directly)
// CHECK-LABEL: gemm calls of @lstm_grad: 36
// CHECK-NEXT: loop of 4 iterations: 3 per iteration (1 directly)
// CHECK-NEXT: loop of 2 iterations: 1 per iteration (1 directly)
// CHECK-NEXT: loop of 4 iterations: 6 per iteration (4 directly)
// CHECK-NEXT: loop of 2 iterations: 1 per iteration (1 directly)
// CHECK-LABEL: gemm calls of @gru: 12
// CHECK-LABEL: gemm calls of @gru_grad: 44
// CHECK-NEXT: loop of 4 iterations: 3 per iteration (1 directly)
// CHECK-NEXT: loop of 2 iterations: 1 per iteration (1 directly)
// CHECK-NEXT: loop of 4 iterations: 8 per iteration (6 directly)
// CHECK-NEXT: loop of 2 iterations: 1 per iteration (1 directly)

// remat=gates replays the forward with the forward's GEMMs (12) before
// the same backward.

// GATES-LABEL: gemm calls of @lstm_grad: 48
// GATES-NEXT: loop of 4 iterations: 3 per iteration (1 directly)
// GATES-NEXT: loop of 2 iterations: 1 per iteration (1 directly)
// GATES-NEXT: loop of 4 iterations: 3 per iteration (1 directly)
// GATES-NEXT: loop of 2 iterations: 1 per iteration (1 directly)
// GATES-NEXT: loop of 4 iterations: 6 per iteration (4 directly)
// GATES-NEXT: loop of 2 iterations: 1 per iteration (1 directly)

// remat=chunk:4: the LSTM forward runs in 2 chunks of 2 blocks (saving the
// cell state entering each chunk), then for each chunk, last first, the
// replay of its 2 blocks and their backward: the same GEMMs again.

// CHUNK-LABEL: gemm calls of @lstm_grad: 48
// CHUNK-NEXT: loop of 2 iterations: 6 per iteration (0 directly)
// CHUNK-NEXT: loop of 2 iterations: 3 per iteration (1 directly)
// CHUNK-NEXT: loop of 2 iterations: 1 per iteration (1 directly)
// CHUNK-NEXT: loop of 2 iterations: 18 per iteration (0 directly)
// CHUNK-NEXT: loop of 2 iterations: 3 per iteration (1 directly)
// CHUNK-NEXT: loop of 2 iterations: 1 per iteration (1 directly)
// CHUNK-NEXT: loop of 2 iterations: 6 per iteration (4 directly)
// CHUNK-NEXT: loop of 2 iterations: 1 per iteration (1 directly)

func.func @lstm(%arg0: tensor<8x4x3xf32> {rnn.name = "x"}, %arg1: tensor<8x4xi1> {rnn.name = "is_init"}, %arg2: tensor<4x5xf32> {rnn.layer = 0 : i64, rnn.name = "h0"}, %arg3: tensor<4x5xf32> {rnn.layer = 0 : i64, rnn.name = "c0"}, %arg4: tensor<20x3xf32> {rnn.name = "weight_ih_l0"}, %arg5: tensor<20x5xf32> {rnn.name = "weight_hh_l0"}, %arg6: tensor<20xf32> {rnn.name = "bias_ih_l0"}, %arg7: tensor<20xf32> {rnn.name = "bias_hh_l0"}) -> (tensor<8x4x5xf32> {rnn.name = "y"}, tensor<4x5xf32> {rnn.layer = 0 : i64, rnn.name = "h_n"}, tensor<4x5xf32> {rnn.layer = 0 : i64, rnn.name = "c_n"}) {
  %y, %hN, %cN = rnn.lstm %arg0 reset %arg1 state(%arg2, %arg3) weights(%arg4, %arg5, %arg6, %arg7) : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>) -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
  return %y, %hN, %cN : tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}

func.func @gru(%arg0: tensor<8x4x3xf32> {rnn.name = "x"}, %arg1: tensor<8x4xi1> {rnn.name = "is_init"}, %arg2: tensor<4x5xf32> {rnn.layer = 0 : i64, rnn.name = "h0"}, %arg3: tensor<15x3xf32> {rnn.name = "weight_ih_l0"}, %arg4: tensor<15x5xf32> {rnn.name = "weight_hh_l0"}, %arg5: tensor<15xf32> {rnn.name = "bias_ih_l0"}, %arg6: tensor<15xf32> {rnn.name = "bias_hh_l0"}) -> (tensor<8x4x5xf32> {rnn.name = "y"}, tensor<4x5xf32> {rnn.layer = 0 : i64, rnn.name = "h_n"}) {
  %y, %hN = rnn.gru %arg0 reset %arg1 state(%arg2) weights(%arg3, %arg4, %arg5, %arg6) : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>) -> (tensor<8x4x5xf32>, tensor<4x5xf32>)
  return %y, %hN : tensor<8x4x5xf32>, tensor<4x5xf32>
}
