// RUN: not rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:3200" 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:3200 predict-pipeline=rnn-to-buffers-pipeline{target=cuda gemm-rows=3}" | FileCheck %s --check-prefix=CUDA
// RUN: rnn-opt %s --pass-pipeline='builtin.module(rnn-train-to-buffers-pipeline{target=cuda remat=budget:3200 gemm-rows=3})' | FileCheck %s --check-prefix=PIPELINE
// RUN: not rnn-opt %s --pass-pipeline='builtin.module(rnn-train-to-buffers-pipeline{target=cuda remat=budget:3159 gemm-rows=3})' 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: rnn-opt %s --pass-pipeline='builtin.module(rnn-train-to-buffers-pipeline{target=cuda remat=budget:3200 gemm-rows=3})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=budget:3200 predict-pipeline=no-such-pass" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=budget:3200 predict-pipeline=canonicalize" 2>&1 | FileCheck %s --check-prefix=NOPLAN
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:3200 fallback-predict-pipeline=rnn-to-buffers-pipeline{target=cuda gemm-rows=3}" | FileCheck %s --check-prefix=FALLBACK
// RUN: not rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:3200 fallback-predict-pipeline=no-such-pass" 2>&1 | FileCheck %s --check-prefix=BADFALLBACK
// RUN: not rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:3159 fallback-predict-pipeline=rnn-to-buffers-pipeline{target=cuda gemm-rows=3}" 2>&1 | FileCheck %s --check-prefix=TIGHTFALLBACK
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=gates predict-pipeline=no-such-pass" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:3200 predict-pipeline=rnn-to-buffers-pipeline{target=cuda gemm-rows=3} fallback-predict-pipeline=no-such-pass" 2>&1 | FileCheck %s --check-prefix=BADFALLBACK
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=none fallback-predict-pipeline=no-such-pass" 2>&1 | FileCheck %s --check-prefix=BADFALLBACK
// RUN: rnn-opt %s --pass-pipeline='builtin.module(rnn-train-to-buffers-pipeline{remat=budget:4000 gemm-rows=3 wavefront=1})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMPWAVE
// RUN: not rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=budget:3200 fallback-predict-pipeline=canonicalize" 2>&1 | FileCheck %s --check-prefix=NOPLANFALLBACK

// rnn-rematerialize's budget policy predicts peaks with the pipeline the
// module is compiled by (`predict-pipeline`). A 1-layer LSTM with bf16
// storage (T = 5, B = 3, I = 4, H = 5, GEMM blocks of one step) plans, for
// its training function, 3820 bytes under remat=none on the cpu target
// and 3160 on the cuda target (where the GEMMs read bf16 operands); at
// this size every remat plan holds more. A budget of 3200 bytes is thus
// infeasible on the cpu target and keeps remat=none on the cuda target,
// whose pipelines pass their own to-buffers stage to the pass, so the
// chosen plan's planned peak is the predicted one.

// CPU: error: rnn-rematerialize: no plan fits budget:3200; the smallest feasible budget is 3820 bytes (none)

// CUDA-LABEL: func.func @lstm_grad(
// CUDA-SAME: attributes {rnn.remat = "none", rnn.remat_budget = 3200 : i64}

// PIPELINE-LABEL: func.func @lstm_grad(
// PIPELINE-SAME: rnn.predicted_peak_bytes = 3160 : i64
// PIPELINE-SAME: rnn.remat = "none", rnn.remat_budget = 3200 : i64

// TIGHT: error: rnn-rematerialize: no plan fits budget:3159; the smallest feasible budget is 3160 bytes (none)

// DUMP: rnn-rematerialize{fallback-predict-pipeline= policy=budget:3200 predict-pipeline=rnn-to-buffers-pipeline{{[{]}}{{.*}} gemm-rows=3 {{.*}}out-params=false remat=none split=false target=cuda {{.*}}}}

// A pipeline that does not parse is an error whatever the policy, and the
// fallback is one also where the first pipeline's plans fit.
// BAD: error: rnn-rematerialize: bad predict-pipeline 'no-such-pass': {{.*}}no-such-pass
// A pipeline that plans no memory predicts no peak.
// NOPLAN: error: rnn-rematerialize: the predict-pipeline plans no training function's peak (rnn.predicted_peak_bytes); it must end with rnn-plan-memory, as rnn-train-to-buffers-pipeline does
// NOPLAN: error: rnn-rematerialize: could not plan the memory of none with the predict-pipeline 'canonicalize'

// `fallback-predict-pipeline` (the pipelines' own without the wavefront,
// when they form one) is searched when no plan fits `predict-pipeline`:
// here the cpu target's peaks do not fit, the cuda target's do, and every
// function is marked to run its layers in sequence. A budget that fits
// neither names the fallback's smallest.
// FALLBACK-LABEL: func.func @lstm(
// FALLBACK-SAME: attributes {rnn.sequential_layers}
// FALLBACK-LABEL: func.func @lstm_grad(
// FALLBACK-SAME: attributes {rnn.remat = "none", rnn.remat_budget = 3200 : i64, rnn.sequential_layers}
// BADFALLBACK: error: rnn-rematerialize: bad fallback-predict-pipeline 'no-such-pass': {{.*}}no-such-pass
// The errors of a search under the fallback name it.
// NOPLANFALLBACK: error: rnn-rematerialize: the fallback-predict-pipeline plans no training function's peak (rnn.predicted_peak_bytes); it must end with rnn-plan-memory, as rnn-train-to-buffers-pipeline does
// NOPLANFALLBACK: error: rnn-rematerialize: could not plan the memory of none with the fallback-predict-pipeline 'canonicalize'
// TIGHTFALLBACK: error: rnn-rematerialize: no plan fits budget:3159; the smallest feasible budget is 3160 bytes (none, layers in sequence)
// DUMPWAVE: rnn-rematerialize{fallback-predict-pipeline=rnn-to-buffers-pipeline{{[{]}}{{.*}} wavefront=false} policy=budget:4000 predict-pipeline=rnn-to-buffers-pipeline{{[{]}}{{.*}} wavefront=true}}

func.func @lstm(%x: tensor<5x3x4xf32>, %is_init: tensor<5x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>,
    %w_ih: tensor<20x4xf32>, %w_hh: tensor<20x5xf32>,
    %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>)
    -> (tensor<5x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh) {storage = bf16}
      : (tensor<5x3x4xf32>, tensor<5x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<5x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y, %h_n, %c_n : tensor<5x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}
