// RUN: rnn-opt %s --test-rnn-cell-facts -o /dev/null | FileCheck %s

// The cell interface (#rnn.lstm, #rnn.gru) and the layer interface of the
// model ops against the ops' definitions: LSTM has gates i, f, g, o and
// states h, c, saves its gates [T, B, 4H] and cell states [T, B, H], replays
// the gates and checkpoints the cell states; GRU has gates r, z, n and state
// h, saves its gates [T, B, 3H] and W_hn h + b_hn [T, B, H], and replays
// both. Weights as PyTorch: [G*H, I], [G*H, H], [G*H], [G*H].

// CHECK:      rnn.lstm: cell #rnn.lstm (lstm), 4 gates; T=2 B=3 I=4 H=5
// CHECK-NEXT:   states [h, c]
// CHECK-NEXT:   saved [gates 20, cells 5]
// CHECK-NEXT:   replayed [gates]
// CHECK-NEXT:   checkpoints [cells]
// CHECK-NEXT:   weights weight_ih [20, 4] weight_hh [20, 5] bias_ih [20] bias_hh [20]
// CHECK-NEXT:   x tensor<2x3x4xf32>, is_init tensor<2x3xi1>, h0 tensor<3x5xf32>, c0 tensor<3x5xf32>
// CHECK-NEXT:   y tensor<2x3x5xf32>, h_n tensor<3x5xf32>, c_n tensor<3x5xf32>
func.func @lstm(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>)
    -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y, %hn, %cn : tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

// CHECK:      rnn.gru: cell #rnn.gru (gru), 3 gates; T=6 B=2 I=7 H=3
// CHECK-NEXT:   states [h]
// CHECK-NEXT:   saved [gates 9, hn_proj 3]
// CHECK-NEXT:   replayed [gates, hn_proj]
// CHECK-NEXT:   checkpoints []
// CHECK-NEXT:   weights weight_ih [9, 7] weight_hh [9, 3] bias_ih [9] bias_hh [9]
// CHECK-NEXT:   x tensor<6x2x7xf32>, is_init tensor<6x2xi1>, h0 tensor<2x3xf32>
// CHECK-NEXT:   y tensor<6x2x3xf32>, h_n tensor<2x3xf32>
func.func @gru(%x: tensor<6x2x7xf32>, %r: tensor<6x2xi1>,
    %h0: tensor<2x3xf32>, %wi: tensor<9x7xf32>, %wh: tensor<9x3xf32>,
    %bi: tensor<9xf32>, %bh: tensor<9xf32>)
    -> (tensor<6x2x3xf32>, tensor<2x3xf32>) {
  %y, %hn = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<6x2x7xf32>, tensor<6x2xi1>, tensor<2x3xf32>,
         tensor<9x7xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<9xf32>)
      -> (tensor<6x2x3xf32>, tensor<2x3xf32>)
  return %y, %hn : tensor<6x2x3xf32>, tensor<2x3xf32>
}
