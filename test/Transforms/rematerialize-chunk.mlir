// RUN: rnn-opt %s -split-input-file --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=chunk:2" | FileCheck %s
// RUN: rnn-opt %s -split-input-file --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=chunk:64" | FileCheck %s --check-prefix=LONG
// RUN: rnn-opt %s -split-input-file --rnn-autodiff="gemm-rows=6" --rnn-rematerialize="policy=chunk:3" | FileCheck %s --check-prefix=ROUND
// RUN: rnn-opt %s -split-input-file --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=chunk:2" --rnn-expand-forward --rnn-kernels-to-loops | FileCheck %s --check-prefix=LOOPS
// RUN: rnn-opt %s -split-input-file --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=chunk:2" --rnn-expand-forward --rnn-kernels-to-loops --rnn-plan-memory --rnn-memory-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// rnn-rematerialize with policy=chunk:K (T = 5 steps, K = 2: chunks of 2, 2
// and 1 steps). The forward kernel runs with chunk(2); for LSTM its cells
// output shrinks to the 3 cell states entering the chunks. The backward
// becomes the chunked kernel, which reads y and those checkpoints (LSTM) or
// y alone (GRU) and also takes the biases, to replay each chunk. The
// training function records the plan applied. K beyond T is taken as T
// (LONG), and K is rounded up to whole GEMM blocks (prefix ROUND; blocks of 2
// steps with gemm-rows=6, chunk:3 becomes chunk:4), so that a replayed
// chunk issues the forward's GEMMs.
// After lowering (LOOPS), the forward's gates are gone (rnn-dse) and the
// backward holds K = 2 steps of replayed gates, computed in place of their
// input projection (no xproj buffer in the backward); the memory report
// names the plan (REPORT).

// CHECK-LABEL: func.func @lstm_grad(
// CHECK-SAME: attributes {rnn.remat = "chunk:2"}
// CHECK: [[CK:%[[:alnum:]_]+]] = tensor.empty() : tensor<3x3x5xf32>
// CHECK-NEXT: [[FWD:%[[:alnum:]_]+]]:5 = rnn.cell_fwd #rnn.lstm block(1) chunk(2) ins(
// CHECK-SAME: saved(gates {{%[[:alnum:]_]+}}, cells [[CK]])
// CHECK-SAME: -> tensor<5x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<5x3x20xf32>, tensor<3x3x5xf32>
// CHECK: rnn.begin_backward
// CHECK-NOT: rnn.cell_bwd #rnn.lstm block(1)
// CHECK: rnn.cell_bwd #rnn.lstm block(1) chunk(2)
// CHECK-SAME: saved(y [[FWD]]#0, cells [[FWD]]#4)
// CHECK-NOT: rnn.cell_bwd #rnn.lstm block(1)

// LONG-LABEL: func.func @lstm_grad(
// LONG-SAME: attributes {rnn.remat = "chunk:5"}
// LONG: rnn.cell_fwd #rnn.lstm block(1) chunk(5)
// LONG-SAME: tensor<1x3x5xf32>
// LONG: rnn.cell_bwd #rnn.lstm block(1) chunk(5)

// ROUND-LABEL: func.func @lstm_grad(
// ROUND-SAME: attributes {rnn.remat = "chunk:4"}
// ROUND: rnn.cell_fwd #rnn.lstm block(2) chunk(4)
// ROUND-SAME: tensor<2x3x5xf32>
// ROUND: rnn.cell_bwd #rnn.lstm block(2) chunk(4)
// ROUND-LABEL: func.func @gru_grad(
// ROUND-SAME: attributes {rnn.remat = "chunk:4"}
// ROUND: rnn.cell_bwd #rnn.gru block(2) chunk(4)

// LOOPS-LABEL: func.func @lstm_grad(
// LOOPS-NOT: rnn.role = "gates"
// LOOPS: memref.alloc() {{.*}}rnn.role = "cells"{{.*}} : memref<3x3x5xf32>
// LOOPS-NOT: rnn.role = "gates"
// LOOPS: rnn.begin_backward
// LOOPS: memref.alloc() {{.*}}rnn.role = "gates"{{.*}} : memref<2x3x20xf32>
// LOOPS-NEXT: memref.alloc() {{.*}}rnn.role = "cells"{{.*}} : memref<2x3x5xf32>
// LOOPS-NOT: rnn.role = "{{gates|xproj}}"
// LOOPS: return

// REPORT: memory plan of @lstm_grad
// REPORT-NEXT: remat chunk:2
// REPORT: memory plan of @gru_grad
// REPORT-NEXT: remat chunk:2

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

// -----

// CHECK-LABEL: func.func @gru_grad(
// CHECK-SAME: attributes {rnn.remat = "chunk:2"}
// CHECK: [[FWD:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(1) ins(
// CHECK-SAME: -> tensor<5x3x5xf32>, tensor<3x5xf32>, tensor<5x3x15xf32>, tensor<5x3x5xf32>
// CHECK: rnn.begin_backward
// CHECK-NOT: rnn.cell_bwd #rnn.gru block(1)
// CHECK: rnn.cell_bwd #rnn.gru block(1) chunk(2)
// CHECK-SAME: saved(y [[FWD]]#0)
// CHECK-NOT: rnn.cell_bwd #rnn.gru block(1)

// LOOPS-LABEL: func.func @gru_grad(
// LOOPS-NOT: rnn.role = "{{gates|hn_proj}}"
// LOOPS: rnn.begin_backward
// LOOPS: memref.alloc() {{.*}}rnn.role = "gates"{{.*}} : memref<2x3x15xf32>
// LOOPS-NEXT: memref.alloc() {{.*}}rnn.role = "hn_proj"{{.*}} : memref<2x3x5xf32>
// LOOPS-NOT: rnn.role = "{{gates|hn_proj}}"
// LOOPS: return


func.func @gru(%x: tensor<5x3x4xf32>, %is_init: tensor<5x3xi1>,
    %h0: tensor<3x5xf32>, %w_ih: tensor<15x4xf32>, %w_hh: tensor<15x5xf32>,
    %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>)
    -> (tensor<5x3x5xf32>, tensor<3x5xf32>) {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<5x3x4xf32>, tensor<5x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<5x3x5xf32>, tensor<3x5xf32>)
  return %y, %h_n : tensor<5x3x5xf32>, tensor<3x5xf32>
}
