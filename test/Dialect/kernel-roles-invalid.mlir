// RUN: rnn-opt %s -split-input-file -verify-diagnostics

// The cell fixes how many operands each group of a kernel has and, for the
// saved values, their roles (kernelOperandGroups); the verifier and the
// parser check both and name the group, the cell and the roles.

// A GRU has one state.

func.func @gru_fwd_two_states(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %b: tensor<15xf32>, %y0: tensor<2x3x5xf32>, %hn0: tensor<3x5xf32>,
    %g0: tensor<2x3x15xf32>, %p0: tensor<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op expected 1 operands in states for #rnn.gru (h0), got 2}}
  %y, %hn, %g, %p = rnn.cell_fwd #rnn.gru block(1) ins(%x, %r)
      states(%h0, %h0) weights(%wi, %wh, %b, %b) outs(%y0, %hn0)
      saved(gates %g0, hn_proj %p0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>,
        tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<2x3x15xf32>,
        tensor<2x3x5xf32>
      -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<2x3x15xf32>,
         tensor<2x3x5xf32>
  return
}

// -----

// The backward of saved values reads no bias.

func.func @gru_bwd_biases(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %b: memref<15xf32>, %y: memref<2x3x5xf32>, %g: memref<2x3x15xf32>,
    %p: memref<2x3x5xf32>, %dh: memref<3x5xf32>, %gx: memref<2x3x4xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op expected 2 operands in weights for #rnn.gru (weight_ih, weight_hh), got 4}}
  rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h0)
      weights(%wi, %wh, %b, %b) saved(y %y, gates %g, hn_proj %p)
      cotangents(%y, %dh) outs(%gx, %dh, %wi, %wh, %b, %b)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>,
        memref<15x4xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<2x3x5xf32>, memref<2x3x15xf32>, memref<2x3x5xf32>,
        memref<2x3x5xf32>, memref<3x5xf32>, memref<2x3x4xf32>,
        memref<3x5xf32>, memref<15x4xf32>, memref<15x5xf32>,
        memref<15xf32>, memref<15xf32>
  return
}

// -----

// One cotangent per output: y and h_n.

func.func @gru_bwd_cotangents(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %b: memref<15xf32>, %y: memref<2x3x5xf32>, %g: memref<2x3x15xf32>,
    %p: memref<2x3x5xf32>, %dh: memref<3x5xf32>, %gx: memref<2x3x4xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op expected 2 operands in cotangents for #rnn.gru (grad_y, grad_h_n), got 3}}
  rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h0)
      weights(%wi, %wh) saved(y %y, gates %g, hn_proj %p)
      cotangents(%y, %dh, %dh) outs(%gx, %dh, %wi, %wh, %b, %b)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>,
        memref<15x4xf32>, memref<15x5xf32>,
        memref<2x3x5xf32>, memref<2x3x15xf32>, memref<2x3x5xf32>,
        memref<2x3x5xf32>, memref<3x5xf32>, memref<3x5xf32>,
        memref<2x3x4xf32>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// The gradients: x, h0, the weights and both biases.

func.func @gru_bwd_gradients(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %b: memref<15xf32>, %y: memref<2x3x5xf32>, %g: memref<2x3x15xf32>,
    %p: memref<2x3x5xf32>, %dh: memref<3x5xf32>, %gx: memref<2x3x4xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op expected 6 operands in outs for #rnn.gru (grad_x, grad_h0, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh), got 5}}
  rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h0)
      weights(%wi, %wh) saved(y %y, gates %g, hn_proj %p)
      cotangents(%y, %dh) outs(%gx, %dh, %wi, %wh, %b)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>,
        memref<15x4xf32>, memref<15x5xf32>,
        memref<2x3x5xf32>, memref<2x3x15xf32>, memref<2x3x5xf32>,
        memref<2x3x5xf32>, memref<3x5xf32>,
        memref<2x3x4xf32>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>
  return
}

// -----

// Saved values are written after their role, in the cell's order.

func.func @lstm_fwd_role_order(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h: memref<3x5xf32>, %wi: memref<20x4xf32>, %wh: memref<20x5xf32>,
    %b: memref<20xf32>, %y: memref<2x3x5xf32>, %g: memref<2x3x20xf32>,
    %c: memref<2x3x5xf32>) {
  // expected-error @+2 {{expected role 'gates' of #rnn.lstm, got 'cells'}}
  rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r) states(%h, %h)
      weights(%wi, %wh, %b, %b) outs(%y, %h, %h) saved(cells %c, gates %g)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<2x3x5xf32>, memref<3x5xf32>, memref<3x5xf32>,
        memref<2x3x20xf32>, memref<2x3x5xf32>
  return
}

// -----

// A chunked LSTM backward reads y and the checkpointed cells only.

func.func @lstm_chunked_bwd_gates(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h: memref<3x5xf32>, %wi: memref<20x4xf32>, %wh: memref<20x5xf32>,
    %b: memref<20xf32>, %y: memref<2x3x5xf32>, %g: memref<2x3x20xf32>,
    %c: memref<1x3x5xf32>, %gx: memref<2x3x4xf32>) {
  // expected-error @+2 {{expected 2 operands (y, cells) in saved for #rnn.lstm}}
  rnn.cell_bwd #rnn.lstm block(1) chunk(2) ins(%x, %r) states(%h, %h)
      weights(%wi, %wh, %b, %b) saved(y %y, cells %c, gates %g)
      cotangents(%y, %h, %h) outs(%gx, %h, %h, %wi, %wh, %b, %b)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<2x3x5xf32>, memref<1x3x5xf32>, memref<2x3x20xf32>
  return
}

// -----

// A GRU replay recomputes the gates and hn_proj.

func.func @gru_replay_missing_output(%x: memref<2x3x4xf32>,
    %r: memref<2x3xi1>, %h0: memref<3x5xf32>, %wi: memref<15x4xf32>,
    %wh: memref<15x5xf32>, %b: memref<15xf32>, %y: memref<2x3x5xf32>,
    %g: memref<2x3x15xf32>) {
  // expected-error @+2 {{expected 2 operands (gates, hn_proj) in outs for #rnn.gru}}
  rnn.cell_replay #rnn.gru block(1) ins(%x, %r) states(%h0)
      weights(%wi, %wh, %b, %b) saved(y %y) outs(gates %g)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>,
        memref<15x4xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<2x3x5xf32>, memref<2x3x15xf32>
  return
}

// -----

// The cell attribute must be a cell.

func.func @not_a_cell(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %b: memref<15xf32>, %y: memref<2x3x5xf32>, %g: memref<2x3x15xf32>) {
  // expected-error @+1 {{invalid kind of attribute specified}}
  rnn.cell_replay 3 : i64 block(1) ins(%x, %r) states(%h0)
      weights(%wi, %wh, %b, %b) saved(y %y) outs(gates %g, hn_proj %y)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>,
        memref<15x4xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<2x3x5xf32>, memref<2x3x15xf32>, memref<2x3x5xf32>
  return
}

// -----

// A kernel's reset states are none or one per state of its cell.

func.func @lstm_fwd_one_reset_state(%x: memref<2x3x4xf32>,
    %r: memref<2x3xi1>, %h: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %b: memref<20xf32>, %y: memref<2x3x5xf32>,
    %g: memref<2x3x20xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op expected 0 or 2 reset_states for #rnn.lstm (h_reset, c_reset), got 1}}
  rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r) states(%h, %h)
      reset_states(%h) weights(%wi, %wh, %b, %b) outs(%y, %h, %h)
      saved(gates %g, cells %y)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<3x5xf32>, memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>,
        memref<20xf32>, memref<2x3x5xf32>, memref<3x5xf32>, memref<3x5xf32>,
        memref<2x3x20xf32>, memref<2x3x5xf32>
  return
}

// -----

// With reset states, a backward writes their gradients.

func.func @gru_bwd_missing_reset_gradient(%x: memref<2x3x4xf32>,
    %r: memref<2x3xi1>, %h: memref<3x5xf32>, %wi: memref<15x4xf32>,
    %wh: memref<15x5xf32>, %b: memref<15xf32>, %y: memref<2x3x5xf32>,
    %g: memref<2x3x15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op expected 7 operands in outs for #rnn.gru (grad_x, grad_h0, grad_h_reset, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh), got 6}}
  rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h) reset_states(%h)
      weights(%wi, %wh) saved(y %y, gates %g, hn_proj %y)
      cotangents(%y, %h) outs(%x, %h, %wi, %wh, %b, %b)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<15x4xf32>, memref<15x5xf32>, memref<2x3x5xf32>,
        memref<2x3x15xf32>, memref<2x3x5xf32>, memref<2x3x5xf32>,
        memref<3x5xf32>, memref<2x3x4xf32>, memref<3x5xf32>,
        memref<15x4xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// A reset state's gradient has its form.

func.func @gru_bwd_reset_gradient_form(%x: memref<2x3x4xf32>,
    %r: memref<2x3xi1>, %h: memref<3x5xf32>, %hr: memref<2x3x5xf32>,
    %wi: memref<15x4xf32>, %wh: memref<15x5xf32>, %b: memref<15xf32>,
    %y: memref<2x3x5xf32>, %g: memref<2x3x15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op grad_h_reset type 'memref<3x5xf32>' != 'memref<2x3x5xf32>' of h_reset}}
  rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h) reset_states(%hr)
      weights(%wi, %wh) saved(y %y, gates %g, hn_proj %y)
      cotangents(%y, %h) outs(%x, %h, %h, %wi, %wh, %b, %b)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<2x3x5xf32>,
        memref<15x4xf32>, memref<15x5xf32>, memref<2x3x5xf32>,
        memref<2x3x15xf32>, memref<2x3x5xf32>, memref<2x3x5xf32>,
        memref<3x5xf32>, memref<2x3x4xf32>, memref<3x5xf32>, memref<3x5xf32>,
        memref<15x4xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// Under `storage = bf16`, the saved values that are not states are bf16 and
// the states (the LSTM's cells) keep the element type of x.

func.func @gru_fwd_storage_f32_gates(%x: tensor<2x3x4xf32>,
    %r: tensor<2x3xi1>, %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<15x5xf32>, %b: tensor<15xf32>, %y0: tensor<2x3x5xf32>,
    %hn0: tensor<3x5xf32>, %g0: tensor<2x3x15xf32>, %p0: tensor<2x3x5xbf16>) {
  // expected-error @+1 {{'rnn.cell_fwd' op element type 'f32' of gates != storage 'bf16' (x's element type unless `storage` is given)}}
  %y, %hn, %g, %p = rnn.cell_fwd #rnn.gru block(1) ins(%x, %r)
      states(%h0) weights(%wi, %wh, %b, %b) outs(%y0, %hn0)
      saved(gates %g0, hn_proj %p0) {storage = bf16}
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
        tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>,
        tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<2x3x15xf32>,
        tensor<2x3x5xbf16>
      -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<2x3x15xf32>,
         tensor<2x3x5xbf16>
  return
}

// -----

func.func @lstm_fwd_bf16_cells(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<20x4xf32>, %wh: tensor<20x5xf32>,
    %b: tensor<20xf32>, %y0: tensor<2x3x5xf32>, %hn0: tensor<3x5xf32>,
    %g0: tensor<2x3x20xbf16>, %c0: tensor<2x3x5xbf16>) {
  // expected-error @+1 {{'rnn.cell_fwd' op element type 'bf16' of cells != 'f32' of x}}
  %y, %hn, %cn, %g, %c = rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r)
      states(%h0, %h0) weights(%wi, %wh, %b, %b) outs(%y0, %hn0, %hn0)
      saved(gates %g0, cells %c0) {storage = bf16}
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<2x3x20xbf16>, tensor<2x3x5xbf16>
      -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<2x3x20xbf16>, tensor<2x3x5xbf16>
  return
}

// -----

func.func @mgu_replay_storage_f16(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<10x4xf32>, %wh: memref<10x5xf32>,
    %bi: memref<10xf32>, %bh: memref<10xf32>, %y: memref<2x3x5xf32>,
    %g0: memref<2x3x10xf16>, %p0: memref<2x3x5xf16>) {
  // expected-error @+1 {{'rnn.cell_replay' op storage must be bf16 (with x of f32) or 'f32' of x, got 'f16'}}
  rnn.cell_replay #rnn.mgu block(1) ins(%x, %r) states(%h0)
      weights(%wi, %wh, %bi, %bh) saved(y %y) outs(gates %g0, hn_proj %p0)
      {storage = f16}
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<10x4xf32>,
        memref<10x5xf32>, memref<10xf32>, memref<10xf32>, memref<2x3x5xf32>,
        memref<2x3x10xf16>, memref<2x3x5xf16>
  return
}
