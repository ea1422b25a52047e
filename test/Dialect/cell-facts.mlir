// RUN: rnn-opt %s --test-rnn-cell-facts -o /dev/null | FileCheck %s

// The cell interface (#rnn.lstm, #rnn.gru, #rnn.mgu, #rnn.cifg) and the layer
// interface of the model ops against the ops' definitions: LSTM has gates i, f, g, o and
// states h, c, saves its gates [T, B, 4H] and cell states [T, B, H], replays
// the gates and checkpoints the cell states; GRU has gates r, z, n and state
// h, saves its gates [T, B, 3H] and W_hn h + b_hn [T, B, H], and replays
// both. Weights as PyTorch: [G*H, I], [G*H, H], [G*H], [G*H]. The operand
// groups of each kernel follow the cell: the backward without a chunk reads
// every saved value but no bias, the chunked one y and the checkpoints, a
// replay y and what it does not recompute.

// CHECK:      rnn.lstm: cell #rnn.lstm (lstm), 4 gates; T=2 B=3 I=4 H=5
// CHECK-NEXT:   states [h, c]
// CHECK-NEXT:   saved [gates 20, cells 5]
// CHECK-NEXT:   replayed [gates]
// CHECK-NEXT:   checkpoints [cells]
// CHECK-NEXT:   weights weight_ih [20, 4] weight_hh [20, 5] bias_ih [20] bias_hh [20]
// CHECK-NEXT:   x tensor<2x3x4xf32>, is_init tensor<2x3xi1>, h0 tensor<3x5xf32>, c0 tensor<3x5xf32>
// CHECK-NEXT:   y tensor<2x3x5xf32>, h_n tensor<3x5xf32>, c_n tensor<3x5xf32>
// CHECK-NEXT:   fwd kernel (x) (is_init) (h0, c0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y, h_n, c_n) (gates, cells)
// CHECK-NEXT:   bwd kernel (x) (is_init) (h0, c0) () (weight_ih, weight_hh) (y, gates, cells) (grad_y, grad_h_n, grad_c_n) (grad_x, grad_h0, grad_c0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh)
// CHECK-NEXT:   chunked_bwd kernel (x) (is_init) (h0, c0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y, cells) (grad_y, grad_h_n, grad_c_n) (grad_x, grad_h0, grad_c0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh)
// CHECK-NEXT:   replay kernel (x) (is_init) (h0, c0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y, cells) (gates)
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
// CHECK-NEXT:   fwd kernel (x) (is_init) (h0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y, h_n) (gates, hn_proj)
// CHECK-NEXT:   bwd kernel (x) (is_init) (h0) () (weight_ih, weight_hh) (y, gates, hn_proj) (grad_y, grad_h_n) (grad_x, grad_h0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh)
// CHECK-NEXT:   chunked_bwd kernel (x) (is_init) (h0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y) (grad_y, grad_h_n) (grad_x, grad_h0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh)
// CHECK-NEXT:   replay kernel (x) (is_init) (h0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y) (gates, hn_proj)
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

// MGU (rnn.mgu): gates f, n and state h; like the GRU it saves its gates
// [T, B, 2H] and W_hn h + b_hn [T, B, H] and replays both.
// CHECK:      rnn.mgu: cell #rnn.mgu (mgu), 2 gates; T=4 B=3 I=2 H=5
// CHECK-NEXT:   states [h]
// CHECK-NEXT:   saved [gates 10, hn_proj 5]
// CHECK-NEXT:   replayed [gates, hn_proj]
// CHECK-NEXT:   checkpoints []
// CHECK-NEXT:   weights weight_ih [10, 2] weight_hh [10, 5] bias_ih [10] bias_hh [10]
// CHECK-NEXT:   x tensor<4x3x2xf32>, is_init tensor<4x3xi1>, h0 tensor<3x5xf32>
// CHECK-NEXT:   y tensor<4x3x5xf32>, h_n tensor<3x5xf32>
// CHECK-NEXT:   fwd kernel (x) (is_init) (h0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y, h_n) (gates, hn_proj)
// CHECK-NEXT:   bwd kernel (x) (is_init) (h0) () (weight_ih, weight_hh) (y, gates, hn_proj) (grad_y, grad_h_n) (grad_x, grad_h0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh)
// CHECK-NEXT:   chunked_bwd kernel (x) (is_init) (h0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y) (grad_y, grad_h_n) (grad_x, grad_h0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh)
// CHECK-NEXT:   replay kernel (x) (is_init) (h0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y) (gates, hn_proj)
func.func @mgu(%x: tensor<4x3x2xf32>, %r: tensor<4x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<10x2xf32>, %wh: tensor<10x5xf32>,
    %bi: tensor<10xf32>, %bh: tensor<10xf32>)
    -> (tensor<4x3x5xf32>, tensor<3x5xf32>) {
  %y, %hn = rnn.mgu %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<4x3x2xf32>, tensor<4x3xi1>, tensor<3x5xf32>,
         tensor<10x2xf32>, tensor<10x5xf32>, tensor<10xf32>, tensor<10xf32>)
      -> (tensor<4x3x5xf32>, tensor<3x5xf32>)
  return %y, %hn : tensor<4x3x5xf32>, tensor<3x5xf32>
}

// CIFG (rnn.cifg): gates f, g, o and states h, c; it saves, replays and
// checkpoints as the LSTM, with gates [T, B, 3H].
// CHECK:      rnn.cifg: cell #rnn.cifg (cifg), 3 gates; T=2 B=3 I=4 H=5
// CHECK-NEXT:   states [h, c]
// CHECK-NEXT:   saved [gates 15, cells 5]
// CHECK-NEXT:   replayed [gates]
// CHECK-NEXT:   checkpoints [cells]
// CHECK-NEXT:   weights weight_ih [15, 4] weight_hh [15, 5] bias_ih [15] bias_hh [15]
// CHECK-NEXT:   x tensor<2x3x4xf32>, is_init tensor<2x3xi1>, h0 tensor<3x5xf32>, c0 tensor<3x5xf32>
// CHECK-NEXT:   y tensor<2x3x5xf32>, h_n tensor<3x5xf32>, c_n tensor<3x5xf32>
// CHECK-NEXT:   fwd kernel (x) (is_init) (h0, c0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y, h_n, c_n) (gates, cells)
// CHECK-NEXT:   bwd kernel (x) (is_init) (h0, c0) () (weight_ih, weight_hh) (y, gates, cells) (grad_y, grad_h_n, grad_c_n) (grad_x, grad_h0, grad_c0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh)
// CHECK-NEXT:   chunked_bwd kernel (x) (is_init) (h0, c0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y, cells) (grad_y, grad_h_n, grad_c_n) (grad_x, grad_h0, grad_c0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh)
// CHECK-NEXT:   replay kernel (x) (is_init) (h0, c0) () (weight_ih, weight_hh, bias_ih, bias_hh) (y, cells) (gates)
func.func @cifg(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<15x5xf32>, %bi: tensor<15xf32>, %bh: tensor<15xf32>)
    -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %y, %hn, %cn = rnn.cifg %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y, %hn, %cn : tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

// The kernels find each operand by its role: a chunked LSTM forward and
// backward (the backward reads y and the checkpoints, and the biases), and
// a GRU replay (reads y, writes the gates and hn_proj).

// CHECK:      rnn.cell_fwd #rnn.lstm fwd: x=#0 is_init=#1 h0=#2 c0=#3 weight_ih=#4 weight_hh=#5 bias_ih=#6 bias_hh=#7 y=#8 h_n=#9 c_n=#10 gates=#11 cells=#12
// CHECK-NEXT:   saved gates=#11 cells=#12
// CHECK-NEXT:   initial states 2, reset states 0, biases 2, outputs 3, cotangents 0, destinations y, h_n, c_n, gates, cells
// CHECK-NEXT: rnn.cell_bwd #rnn.lstm chunked_bwd: x=#0 is_init=#1 h0=#2 c0=#3 weight_ih=#4 weight_hh=#5 bias_ih=#6 bias_hh=#7 y=#8 cells=#9 grad_y=#10 grad_h_n=#11 grad_c_n=#12 grad_x=#13 grad_h0=#14 grad_c0=#15 grad_weight_ih=#16 grad_weight_hh=#17 grad_bias_ih=#18 grad_bias_hh=#19
// CHECK-NEXT:   saved cells=#9
// CHECK-NEXT:   initial states 2, reset states 0, biases 2, outputs 0, cotangents 3, destinations grad_x, grad_h0, grad_c0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh
func.func @lstm_chunked(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>, %c0: tensor<4x5xf32>, %w_ih: tensor<20x3xf32>,
    %w_hh: tensor<20x5xf32>, %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>,
    %y0: tensor<8x4x5xf32>, %hn0: tensor<4x5xf32>, %cn0: tensor<4x5xf32>,
    %g0: tensor<8x4x20xf32>, %ck0: tensor<3x4x5xf32>,
    %dy: tensor<8x4x5xf32>, %dhn: tensor<4x5xf32>, %dcn: tensor<4x5xf32>,
    %o0: tensor<8x4x3xf32>, %o1: tensor<4x5xf32>, %o2: tensor<4x5xf32>,
    %o3: tensor<20x3xf32>, %o4: tensor<20x5xf32>, %o5: tensor<20xf32>,
    %o6: tensor<20xf32>) {
  %y, %h_n, %c_n, %gates, %ck = rnn.cell_fwd #rnn.lstm block(1) chunk(3)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y0, %hn0, %cn0) saved(gates %g0, cells %ck0)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x20xf32>, tensor<3x4x5xf32>
      -> tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
         tensor<8x4x20xf32>, tensor<3x4x5xf32>
  %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh = rnn.cell_bwd #rnn.lstm block(1) chunk(3)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      saved(y %y, cells %ck)
      cotangents(%dy, %dhn, %dcn)
      outs(%o0, %o1, %o2, %o3, %o4, %o5, %o6)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<8x4x5xf32>, tensor<3x4x5xf32>,
        tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
      -> tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
         tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
  return
}

// CHECK:      rnn.cell_replay #rnn.gru replay: x=#0 is_init=#1 h0=#2 weight_ih=#3 weight_hh=#4 bias_ih=#5 bias_hh=#6 y=#7 gates=#8 hn_proj=#9
// CHECK-NEXT:   saved gates=#8 hn_proj=#9
// CHECK-NEXT:   initial states 1, reset states 0, biases 2, outputs 0, cotangents 0, destinations gates, hn_proj
func.func @gru_replay_tensor(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>,
    %w_ih: tensor<15x3xf32>, %w_hh: tensor<15x5xf32>,
    %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>,
    %y: tensor<8x4x5xf32>, %g0: tensor<8x4x15xf32>, %p0: tensor<8x4x5xf32>)
    -> (tensor<8x4x15xf32>, tensor<8x4x5xf32>) {
  %gates, %hn = rnn.cell_replay #rnn.gru block(1)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      saved(y %y) outs(gates %g0, hn_proj %p0)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
        tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>,
        tensor<8x4x5xf32>, tensor<8x4x15xf32>, tensor<8x4x5xf32>
      -> tensor<8x4x15xf32>, tensor<8x4x5xf32>
  return %gates, %hn : tensor<8x4x15xf32>, tensor<8x4x5xf32>
}
