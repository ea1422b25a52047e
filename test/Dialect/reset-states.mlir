// RUN: rnn-opt %s | rnn-opt | FileCheck %s
// RUN: rnn-opt %s --mlir-print-op-generic | rnn-opt | FileCheck %s
// RUN: rnn-opt %s --test-rnn-cell-facts -o /dev/null | FileCheck %s --check-prefix=FACTS

// Reset to a given state: `to(...)` on the model ops, one state per state
// of the cell, per step [T, B, H] or per batch column [B, H] (the forms may
// differ between states), and `reset_states(...)` on the kernels, whose
// backward then writes the reset states' gradients after the initial
// states'. Round trip through the custom and the generic form; the layer
// and kernel interfaces find every reset state by its role.

// CHECK-LABEL: func.func @lstm_per_step(
// CHECK: rnn.lstm %{{.*}} reset %{{.*}} to(%{{.*}}, %{{.*}}) state(%{{.*}}, %{{.*}}) weights(
// CHECK-SAME: tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<20x4xf32>
// FACTS:      rnn.lstm: cell #rnn.lstm (lstm), 4 gates; T=2 B=3 I=4 H=5
// FACTS:        x tensor<2x3x4xf32>, is_init tensor<2x3xi1>, h0 tensor<3x5xf32>, c0 tensor<3x5xf32>, h_reset tensor<2x3x5xf32>, c_reset tensor<3x5xf32>
// FACTS:        fwd kernel (x) (is_init) (h0, c0) (h_reset, c_reset) (weight_ih, weight_hh, bias_ih, bias_hh) (y, h_n, c_n) (gates, cells)
// FACTS-NEXT:   bwd kernel (x) (is_init) (h0, c0) (h_reset, c_reset) (weight_ih, weight_hh) (y, gates, cells) (grad_y, grad_h_n, grad_c_n) (grad_x, grad_h0, grad_c0, grad_h_reset, grad_c_reset, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh)
// FACTS-NEXT:   chunked_bwd kernel (x) (is_init) (h0, c0) (h_reset, c_reset) (weight_ih, weight_hh, bias_ih, bias_hh) (y, cells)
// FACTS-NEXT:   replay kernel (x) (is_init) (h0, c0) (h_reset, c_reset) (weight_ih, weight_hh, bias_ih, bias_hh) (y, cells) (gates)
func.func @lstm_per_step(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %hr: tensor<2x3x5xf32>,
    %cr: tensor<3x5xf32>, %wi: tensor<20x4xf32>, %wh: tensor<20x5xf32>,
    %bi: tensor<20xf32>, %bh: tensor<20xf32>)
    -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %y, %hn, %cn = rnn.lstm %x reset %r to(%hr, %cr) state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<2x3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y, %hn, %cn : tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

// CHECK-LABEL: func.func @gru_per_column(
// CHECK: rnn.gru %{{.*}} reset %{{.*}} to(%{{.*}}) state(%{{.*}}) weights(
// FACTS:      rnn.gru: cell #rnn.gru (gru), 3 gates; T=2 B=3 I=4 H=5
// FACTS:        x tensor<2x3x4xf32>, is_init tensor<2x3xi1>, h0 tensor<3x5xf32>, h_reset tensor<3x5xf32>
func.func @gru_per_column(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %hr: tensor<3x5xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<15x5xf32>, %bi: tensor<15xf32>, %bh: tensor<15xf32>)
    -> (tensor<2x3x5xf32>, tensor<3x5xf32>) {
  %y, %hn = rnn.gru %x reset %r to(%hr) state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return %y, %hn : tensor<2x3x5xf32>, tensor<3x5xf32>
}

// CHECK-LABEL: func.func @kernels(
// CHECK: rnn.cell_fwd #rnn.gru block(1) chunk(2) ins(%{{.*}}, %{{.*}}) states(%{{.*}}) reset_states(%{{.*}}) weights(
// CHECK: rnn.cell_bwd #rnn.gru block(1) chunk(2) ins(%{{.*}}, %{{.*}}) states(%{{.*}}) reset_states(%{{.*}}) weights(
// CHECK: rnn.cell_replay #rnn.gru block(1) ins(%{{.*}}, %{{.*}}) states(%{{.*}}) reset_states(%{{.*}}) weights(
// FACTS:      rnn.cell_fwd #rnn.gru fwd: x=#0 is_init=#1 h0=#2 h_reset=#3 weight_ih=#4 weight_hh=#5 bias_ih=#6 bias_hh=#7 y=#8 h_n=#9 gates=#10 hn_proj=#11
// FACTS-NEXT:   saved gates=#10 hn_proj=#11
// FACTS-NEXT:   initial states 1, reset states 1, biases 2, outputs 2, cotangents 0, destinations y, h_n, gates, hn_proj
// FACTS-NEXT: rnn.cell_bwd #rnn.gru chunked_bwd: x=#0 is_init=#1 h0=#2 h_reset=#3 weight_ih=#4 weight_hh=#5 bias_ih=#6 bias_hh=#7 y=#8 grad_y=#9 grad_h_n=#10 grad_x=#11 grad_h0=#12 grad_h_reset=#13 grad_weight_ih=#14 grad_weight_hh=#15 grad_bias_ih=#16 grad_bias_hh=#17
// FACTS:        initial states 1, reset states 1, biases 2, outputs 0, cotangents 2, destinations grad_x, grad_h0, grad_h_reset, grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh
// FACTS-NEXT: rnn.cell_replay #rnn.gru replay: x=#0 is_init=#1 h0=#2 h_reset=#3 weight_ih=#4 weight_hh=#5 bias_ih=#6 bias_hh=#7 y=#8 gates=#9 hn_proj=#10
func.func @kernels(%x: memref<4x3x2xf32>, %r: memref<4x3xi1>,
    %h0: memref<3x5xf32>, %hr: memref<4x3x5xf32>, %wi: memref<15x2xf32>,
    %wh: memref<15x5xf32>, %b: memref<15xf32>, %y: memref<4x3x5xf32>,
    %h: memref<3x5xf32>, %g: memref<4x3x15xf32>, %n: memref<4x3x5xf32>,
    %gx: memref<4x3x2xf32>, %ghr: memref<4x3x5xf32>) {
  rnn.cell_fwd #rnn.gru block(1) chunk(2) ins(%x, %r) states(%h0)
      reset_states(%hr) weights(%wi, %wh, %b, %b) outs(%y, %h)
      saved(gates %g, hn_proj %n)
      : memref<4x3x2xf32>, memref<4x3xi1>, memref<3x5xf32>, memref<4x3x5xf32>,
        memref<15x2xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<4x3x5xf32>, memref<3x5xf32>, memref<4x3x15xf32>,
        memref<4x3x5xf32>
  rnn.cell_bwd #rnn.gru block(1) chunk(2) ins(%x, %r) states(%h0)
      reset_states(%hr) weights(%wi, %wh, %b, %b) saved(y %y)
      cotangents(%y, %h) outs(%gx, %h, %ghr, %wi, %wh, %b, %b)
      : memref<4x3x2xf32>, memref<4x3xi1>, memref<3x5xf32>, memref<4x3x5xf32>,
        memref<15x2xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<4x3x5xf32>, memref<4x3x5xf32>, memref<3x5xf32>,
        memref<4x3x2xf32>, memref<3x5xf32>, memref<4x3x5xf32>,
        memref<15x2xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  rnn.cell_replay #rnn.gru block(1) ins(%x, %r) states(%h0)
      reset_states(%hr) weights(%wi, %wh, %b, %b) saved(y %y)
      outs(gates %g, hn_proj %n)
      : memref<4x3x2xf32>, memref<4x3xi1>, memref<3x5xf32>, memref<4x3x5xf32>,
        memref<15x2xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<4x3x5xf32>, memref<4x3x15xf32>, memref<4x3x5xf32>
  return
}
