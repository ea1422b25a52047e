// RUN: rnn-opt %s -split-input-file -verify-diagnostics

// Verifier cases of the replay kernels (rnn.cell_replay #rnn.lstm block(1), rnn.cell_replay #rnn.gru block(1)):
// the kernel form (tensors or memrefs, one result per destination in
// tensor form, none in memref form, result types equal to the
// destinations') and the shapes of the states and the recomputed outputs.
// The rules shared with the other kernels are covered in invalid.mlir.
// Shapes: T = 2, B = 3, I = 4, H = 5.

// The gates of an LSTM replay have 4H rows: 3H (a GRU's) is rejected.

func.func @lstm_replay_gates_rows(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y: tensor<2x3x5xf32>, %cells: tensor<2x3x5xf32>,
    %g0: tensor<2x3x15xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op gate rows 15 of gates != 20 (4 gates x hidden size 5 of weight_hh)}}
  %g = rnn.cell_replay #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %cells) outs(gates %g0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x15xf32>
      -> tensor<2x3x15xf32>
  return
}

// -----

// The gates are [T, B, 4H]: a gates buffer of one step (rank 2) is rejected.

func.func @lstm_replay_gates_rank(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %bi: memref<20xf32>, %bh: memref<20xf32>,
    %y: memref<2x3x5xf32>, %cells: memref<2x3x5xf32>,
    %g0: memref<3x20xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op gates must have rank 3 [T, B, G*H], got 'memref<3x20xf32>'}}
  rnn.cell_replay #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %cells) outs(gates %g0)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<2x3x5xf32>, memref<2x3x5xf32>, memref<3x20xf32>
  return
}

// -----

// The gates cover every step: a sequence length other than x's is rejected.

func.func @lstm_replay_gates_steps(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %bi: memref<20xf32>, %bh: memref<20xf32>,
    %y: memref<2x3x5xf32>, %cells: memref<2x3x5xf32>,
    %g0: memref<1x3x20xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op sequence length 1 of gates != 2 of x}}
  rnn.cell_replay #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %cells) outs(gates %g0)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<2x3x5xf32>, memref<2x3x5xf32>, memref<1x3x20xf32>
  return
}

// -----

// The state y the replay reads has the hidden size of weight_hh.

func.func @lstm_replay_y_hidden(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %bi: memref<20xf32>, %bh: memref<20xf32>,
    %y: memref<2x3x4xf32>, %cells: memref<2x3x5xf32>,
    %g0: memref<2x3x20xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op hidden size 4 of y != 5 of weight_hh}}
  rnn.cell_replay #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %cells) outs(gates %g0)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<2x3x4xf32>, memref<2x3x5xf32>, memref<2x3x20xf32>
  return
}

// -----

// So does the state cells, and its batch size is x's.

func.func @lstm_replay_cells_batch(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %bi: memref<20xf32>, %bh: memref<20xf32>,
    %y: memref<2x3x5xf32>, %cells: memref<2x6x5xf32>,
    %g0: memref<2x3x20xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op batch size 6 of cells != 3 of x}}
  rnn.cell_replay #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %cells) outs(gates %g0)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<2x3x5xf32>, memref<2x6x5xf32>, memref<2x3x20xf32>
  return
}

// -----

// In tensor form the LSTM replay has exactly one result (gates); one
// without a result would drop the recomputed gates.

func.func @lstm_replay_no_result(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y: tensor<2x3x5xf32>, %cells: tensor<2x3x5xf32>,
    %g0: tensor<2x3x20xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op expected 1 results in tensor form, got 0}}
  rnn.cell_replay #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %cells) outs(gates %g0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x20xf32>
  return
}

// -----

// Two results (as if it also returned the cells) are rejected as well.

func.func @lstm_replay_two_results(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y: tensor<2x3x5xf32>, %cells: tensor<2x3x5xf32>,
    %g0: tensor<2x3x20xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op expected 1 results in tensor form, got 2}}
  %g, %c = rnn.cell_replay #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %cells) outs(gates %g0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x20xf32>
      -> tensor<2x3x20xf32>, tensor<2x3x5xf32>
  return
}

// -----

// The result has the type of its destination.

func.func @lstm_replay_result_type(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y: tensor<2x3x5xf32>, %cells: tensor<2x3x5xf32>,
    %g0: tensor<2x3x20xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op result #0 type 'tensor<2x3x20xf64>' != 'tensor<2x3x20xf32>' of its destination}}
  %g = rnn.cell_replay #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %cells) outs(gates %g0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x20xf32>
      -> tensor<2x3x20xf64>
  return
}

// -----

// Replay states from the forward's buffers and a destination tensor cannot
// be mixed.

func.func @lstm_replay_mixed(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y: memref<2x3x5xf32>, %cells: tensor<2x3x5xf32>,
    %g0: tensor<2x3x20xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op operands must be all tensors or all memrefs}}
  %g = rnn.cell_replay #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %cells) outs(gates %g0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        memref<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x20xf32>
      -> tensor<2x3x20xf32>
  return
}

// -----

// The gates of a GRU replay have 3H rows: 4H (an LSTM's) is rejected.

func.func @gru_replay_gates_rows(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<2x3x5xf32>,
    %g0: memref<2x3x20xf32>, %p0: memref<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op gate rows 20 of gates != 15 (3 gates x hidden size 5 of weight_hh)}}
  rnn.cell_replay #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) outs(gates %g0, hn_proj %p0)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<2x3x5xf32>,
        memref<2x3x20xf32>, memref<2x3x5xf32>
  return
}

// -----

// hn_proj is [T, B, H] (W_hn h + b_hn of each step), not [T, B, 3H].

func.func @gru_replay_hn_proj(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<2x3x5xf32>,
    %g0: memref<2x3x15xf32>, %p0: memref<2x3x15xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op hidden size 15 of hn_proj != 5 of weight_hh}}
  rnn.cell_replay #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) outs(gates %g0, hn_proj %p0)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<2x3x5xf32>,
        memref<2x3x15xf32>, memref<2x3x15xf32>
  return
}

// -----

// The state y of a GRU replay covers every step of x.

func.func @gru_replay_y_steps(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<3x3x5xf32>,
    %g0: memref<2x3x15xf32>, %p0: memref<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op sequence length 3 of y != 2 of x}}
  rnn.cell_replay #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) outs(gates %g0, hn_proj %p0)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<3x3x5xf32>,
        memref<2x3x15xf32>, memref<2x3x5xf32>
  return
}

// -----

// The recomputed values have the element type of x.

func.func @gru_replay_element_type(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<2x3x5xf32>,
    %g0: memref<2x3x15xf16>, %p0: memref<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op element type 'f16' of gates != storage 'f32' (x's element type unless `storage` is given)}}
  rnn.cell_replay #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) outs(gates %g0, hn_proj %p0)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<2x3x5xf32>,
        memref<2x3x15xf16>, memref<2x3x5xf32>
  return
}

// -----

// In tensor form the GRU replay has two results (gates, hn_proj): one is
// rejected.

func.func @gru_replay_one_result(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>, %y: tensor<2x3x5xf32>,
    %g0: tensor<2x3x15xf32>, %p0: tensor<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op expected 2 results in tensor form, got 1}}
  %g = rnn.cell_replay #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) outs(gates %g0, hn_proj %p0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<15x4xf32>,
        tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>, tensor<2x3x5xf32>,
        tensor<2x3x15xf32>, tensor<2x3x5xf32>
      -> tensor<2x3x15xf32>
  return
}

// -----

// The results follow the destinations in order: gates then hn_proj.

func.func @gru_replay_result_order(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>, %y: tensor<2x3x5xf32>,
    %g0: tensor<2x3x15xf32>, %p0: tensor<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op result #0 type 'tensor<2x3x5xf32>' != 'tensor<2x3x15xf32>' of its destination}}
  %p, %g = rnn.cell_replay #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) outs(gates %g0, hn_proj %p0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<15x4xf32>,
        tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>, tensor<2x3x5xf32>,
        tensor<2x3x15xf32>, tensor<2x3x5xf32>
      -> tensor<2x3x5xf32>, tensor<2x3x15xf32>
  return
}

// -----

// In memref form the replay writes its destinations and has no results.

func.func @gru_replay_memref_result(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<2x3x5xf32>,
    %g0: memref<2x3x15xf32>, %p0: memref<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_replay' op expected 0 results in memref form, got 2}}
  %g, %p = rnn.cell_replay #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) outs(gates %g0, hn_proj %p0)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<2x3x5xf32>,
        memref<2x3x15xf32>, memref<2x3x5xf32>
      -> tensor<2x3x15xf32>, tensor<2x3x5xf32>
  return
}
