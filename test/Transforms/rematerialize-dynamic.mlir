// RUN: rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=gates" | FileCheck %s
// RUN: rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=chunk:4" | FileCheck %s --check-prefix=CHUNK
// RUN: rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=budget:100000" | FileCheck %s --check-prefix=BUDGET

// rnn-rematerialize on a model for every T and B: `gates` does not depend
// on the shape (the replay takes the backward's `rows` and its
// destinations the saved values' sizes); `chunk:K` keeps the K asked for,
// which each call rounds to whole GEMM blocks (rnn.chunk_steps), with a
// checkpoint per chunk (ceil(T / K') of them). The plan a budget lets a
// call run depends on its shape: the training function becomes a variant
// per plan (none, gates, chunks of 1, 2, ... 1024 steps asked for), each
// with the figures of its layer the cost model reads (I = 3, H = 5, 4H =
// 20 gate rows, 4-byte elements and stored gates), among which each call
// chooses (rnn-dispatch-remat).

// CHECK-LABEL: func.func @lstm_grad(
// CHECK: [[FWD:%.+]]:5 = rnn.cell_fwd #rnn.lstm rows(256)
// CHECK: [[T:%.+]] = tensor.dim [[FWD]]#3, %c0
// CHECK: [[B:%.+]] = tensor.dim [[FWD]]#3, %c1
// CHECK: [[DST:%.+]] = tensor.empty([[T]], [[B]]) : tensor<?x?x20xf32>
// CHECK: [[GATES:%.+]] = rnn.cell_replay #rnn.lstm rows(256)
// CHECK-SAME: outs(gates [[DST]])
// CHECK: rnn.cell_bwd #rnn.lstm rows(256)
// CHECK-SAME: saved(y [[FWD]]#0, gates [[GATES]], cells [[FWD]]#4)

// CHUNK-LABEL: func.func @lstm_grad(
// CHUNK-SAME: attributes {rnn.remat = "chunk:4"}
// CHUNK: [[P:%.+]] = rnn.block_steps [[T:%.+]], [[B:%.+]] rows(256)
// CHUNK: [[K:%.+]] = rnn.chunk_steps [[T]], [[P]] chunk(4)
// CHUNK: [[N:%.+]] = arith.ceildivui [[T]], [[K]] : index
// CHUNK: [[CHECKPOINTS:%.+]] = tensor.empty([[N]], [[B]]) : tensor<?x?x5xf32>
// CHUNK: [[FWD:%.+]]:5 = rnn.cell_fwd #rnn.lstm rows(256) chunk(4)
// CHUNK-SAME: cells [[CHECKPOINTS]]
// CHUNK: rnn.cell_bwd #rnn.lstm rows(256) chunk(4)
// CHUNK-SAME: saved(y [[FWD]]#0, cells [[FWD]]#4)
// BUDGET-NOT: func.func @lstm_grad(
// BUDGET-LABEL: func.func @lstm__remat0_grad(
// BUDGET-SAME: attributes {rnn.remat = "none", rnn.remat_budget = 100000 : i64, rnn.remat_variant = {index = 0 : i64, layers = [array<f64: 3.000000e+00, 5.000000e+00, 2.000000e+01, 4.000000e+00, 4.000000e+00>], of = "lstm_grad"}}
// BUDGET: rnn.cell_bwd #rnn.lstm rows(256) ins
// BUDGET-LABEL: func.func @lstm__remat1_grad(
// BUDGET-SAME: rnn.remat = "gates"
// BUDGET-SAME: index = 1
// BUDGET: rnn.cell_replay
// BUDGET-LABEL: func.func @lstm__remat2_grad(
// BUDGET-SAME: rnn.remat = "chunk:1"
// BUDGET-SAME: index = 2
// BUDGET: rnn.cell_bwd #rnn.lstm rows(256) chunk(1)
// BUDGET-LABEL: func.func @lstm__remat3_grad(
// BUDGET-SAME: rnn.remat = "chunk:2"
// BUDGET-LABEL: func.func @lstm__remat12_grad(
// BUDGET-SAME: rnn.remat = "chunk:1024"
// BUDGET-SAME: index = 12
// BUDGET: rnn.cell_bwd #rnn.lstm rows(256) chunk(1024)
// BUDGET-NOT: func.func
func.func @lstm(%x: tensor<?x?x3xf32>, %is_init: tensor<?x?xi1>,
                %h0: tensor<?x5xf32>, %c0: tensor<?x5xf32>,
                %w_ih: tensor<20x3xf32>, %w_hh: tensor<20x5xf32>,
                %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>)
    -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<?x?x3xf32>, tensor<?x?xi1>, tensor<?x5xf32>, tensor<?x5xf32>,
         tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
  return %y, %h_n, %c_n : tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>
}
