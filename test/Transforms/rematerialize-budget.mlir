// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:3300" | FileCheck %s
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:100000" | FileCheck %s --check-prefix=LARGE
// RUN: not rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:2600" 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:3300" --rnn-expand-forward --rnn-kernels-to-loops --rnn-plan-memory --rnn-memory-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: not rnn-opt %s --rnn-rematerialize="policy=budget:100000" 2>&1 | FileCheck %s --check-prefix=NOTRAINING --implicit-check-not=error

// rnn-rematerialize with policy=budget:BYTES on a 1-layer LSTM (T = 5,
// B = 3, I = 4, H = 5; GEMM blocks of one step, gemm-rows=3). The memory
// planner predicts, for the training function: none 3352 bytes, gates
// 3400, chunk:1 2692, chunk:2 2872, chunk:4 3412, chunk:5 3652 (at this
// size the per-step scratch weighs as much as the saved values). Under
// 3300 bytes chunk:1 and chunk:2 fit; both recompute the same FLOPs with
// the same GEMMs and their scratch fits in the cache, so the one holding
// fewer bytes wins. With room for everything the pass keeps none, which
// recomputes nothing; under 2600 bytes nothing fits and the diagnostic
// names the smallest feasible budget. The chosen plan fits: its predicted
// peak is at most the budget (REPORT).

// CHECK-LABEL: func.func @lstm_grad(
// CHECK-SAME: attributes {rnn.remat = "chunk:1", rnn.remat_budget = 3300 : i64}
// CHECK: rnn.cell_fwd #rnn.lstm block(1) chunk(1)
// CHECK: rnn.cell_bwd #rnn.lstm block(1) chunk(1)

// LARGE-LABEL: func.func @lstm_grad(
// LARGE-SAME: attributes {rnn.remat = "none", rnn.remat_budget = 100000 : i64}
// LARGE-NOT: chunk
// LARGE: rnn.cell_bwd #rnn.lstm block(1)

// SMALL: error: rnn-rematerialize: no plan fits budget:2600; the smallest feasible budget is 2692 bytes (chunk:1)

// REPORT: memory plan of @lstm_grad
// REPORT-NEXT: remat chunk:1 (chosen under budget 3300 bytes)
// REPORT: predicted peak 2692 bytes

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

// A budget without a training function (no rnn-autodiff) has no plans to
// choose among: one error saying so.
// NOTRAINING: {{.*}}error: rnn-rematerialize: policy budget:100000 chooses among the plans of training functions, and the module has none (rnn-autodiff makes them)
