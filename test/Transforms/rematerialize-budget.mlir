// RUN: rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=budget:3500" | FileCheck %s
// RUN: rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=budget:100000" | FileCheck %s --check-prefix=LARGE
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=budget:3000" 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=budget:3500" --rnn-expand-forward --rnn-kernels-to-loops --rnn-plan-memory=report -o /dev/null | FileCheck %s --check-prefix=REPORT

// rnn-rematerialize with policy=budget:BYTES on a 1-layer LSTM (T = 5,
// B = 3, I = 4, H = 5). The memory planner predicts, for the training
// function: none 3640 bytes, gates 3640, chunk:1 3100, chunk:2 3280,
// chunk:4 3820, chunk:5 4060 (at this size the per-step scratch weighs as
// much as the saved values). Under 3500 bytes chunk:1 and chunk:2 fit, and
// chunk:2 recomputes the same FLOPs in fewer chunks; with room for
// everything the pass keeps none, which recomputes nothing; under 3000
// bytes nothing fits and the diagnostic names the smallest feasible budget.
// The chosen plan fits: its predicted peak is at most the budget (REPORT).

// CHECK-LABEL: func.func @lstm_grad(
// CHECK-SAME: attributes {rnn.remat = "chunk:2", rnn.remat_budget = 3500 : i64}
// CHECK: rnn.lstm_fwd chunk(2)
// CHECK: rnn.lstm_chunked_bwd chunk(2)

// LARGE-LABEL: func.func @lstm_grad(
// LARGE-SAME: attributes {rnn.remat = "none", rnn.remat_budget = 100000 : i64}
// LARGE-NOT: chunk
// LARGE: rnn.lstm_bwd

// SMALL: error: rnn-rematerialize: no plan fits budget:3000; the smallest feasible budget is 3100 bytes (chunk:1)

// REPORT: memory plan of @lstm_grad
// REPORT-NEXT: remat chunk:2 (chosen under budget 3500 bytes)
// REPORT: predicted peak 3280 bytes

func.func @lstm(%x: tensor<5x3x4xf32>, %is_init: tensor<5x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>,
    %w_ih: tensor<20x4xf32>, %w_hh: tensor<20x5xf32>,
    %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>)
    -> (tensor<5x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<5x3x4xf32>, tensor<5x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<5x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y, %h_n, %c_n : tensor<5x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

