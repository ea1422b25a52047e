// RUN: rnn-opt %s -split-input-file | rnn-opt -split-input-file | FileCheck %s

// Ops whose sequence length T and batch size B are dynamic (`?`): every
// size that equals one of them is `?` too, and a kernel's GEMM block is
// `rows` R, each call taking the block its shape would have.

// CHECK-LABEL: func.func @lstm(
// CHECK: rnn.lstm
// CHECK-SAME: -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
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

// -----
// Only T dynamic: B stays a constant wherever it appears.

// CHECK-LABEL: func.func @gru_fwd(
// CHECK: rnn.cell_fwd #rnn.gru rows(256) ins(
// CHECK-SAME: memref<?x4x3xf32>, memref<?x4xi1>, memref<4x5xf32>
func.func @gru_fwd(%x: memref<?x4x3xf32>, %is_init: memref<?x4xi1>,
    %h0: memref<4x5xf32>, %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>, %y: memref<?x4x5xf32>,
    %hn: memref<4x5xf32>, %g: memref<?x4x15xf32>, %p: memref<?x4x5xf32>) {
  rnn.cell_fwd #rnn.gru rows(256)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<?x4x3xf32>, memref<?x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<?x4x5xf32>, memref<4x5xf32>, memref<?x4x15xf32>,
        memref<?x4x5xf32>
  return
}

// -----
// Dropout takes any T and B.

// CHECK-LABEL: func.func @dropout(
// CHECK: rnn.dropout {{.*}} : tensor<?x?x5xf32>, tensor<2xi64>
func.func @dropout(%x: tensor<?x?x5xf32>, %rng: tensor<2xi64>)
    -> tensor<?x?x5xf32> {
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 0 : i64}
      : tensor<?x?x5xf32>, tensor<2xi64>
  return %y : tensor<?x?x5xf32>
}
