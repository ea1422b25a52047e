// RUN: rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=gates" | FileCheck %s
// RUN: rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=chunk:4" | FileCheck %s --check-prefix=CHUNK
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=budget:100000" 2>&1 | FileCheck %s --check-prefix=BUDGET

// rnn-rematerialize on a model for every T and B: `gates` does not depend
// on the shape (the replay takes the backward's `rows` and its
// destinations the saved values' sizes); `chunk:K` keeps the K asked for,
// which each call rounds to whole GEMM blocks (rnn.chunk_steps), with a
// checkpoint per chunk (ceil(T / K') of them); budgets depend on the shape
// and are refused naming the kernel.

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
// BUDGET: error: 'rnn.cell_fwd' op has a dynamic sequence length or batch size: rnn-rematerialize takes policy budget:100000 for static shapes only
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
