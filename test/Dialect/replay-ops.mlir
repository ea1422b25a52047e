// RUN: rnn-opt %s -split-input-file | rnn-opt -split-input-file | FileCheck %s
// RUN: rnn-opt %s -split-input-file --mlir-print-op-generic | rnn-opt -split-input-file | FileCheck %s
// RUN: rnn-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of the replay kernels that rnn-rematerialize places before a
// backward kernel, through the custom and the generic form. The op bodies
// are the examples of the op descriptions in RNNOps.td; each op appears in
// tensor form (one result per destination) and in memref form (no
// results). The GENERIC prefix checks the generic form itself, which the
// second RUN line parses back.

// rnn.cell_replay #rnn.lstm block(1) on tensors: eight cell inputs, the states y and cells,
// one destination (gates) and one result of its type.

// CHECK-LABEL: func.func @lstm_replay_tensor(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: tensor<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<4x5xf32>, [[C0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<20x3xf32>, [[WH:%[[:alnum:]_]+]]: tensor<20x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<20xf32>, [[BH:%[[:alnum:]_]+]]: tensor<20xf32>,
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: tensor<8x4x5xf32>, [[CS:%[[:alnum:]_]+]]: tensor<8x4x5xf32>,
// CHECK-SAME: [[G0:%[[:alnum:]_]+]]: tensor<8x4x20xf32>)
// CHECK: [[RES:%[[:alnum:]_]+]] = rnn.cell_replay #rnn.lstm block(1) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: saved(y [[Y]], cells [[CS]]) outs(gates [[G0]])
// CHECK-SAME: : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>, tensor<8x4x5xf32>, tensor<8x4x5xf32>, tensor<8x4x20xf32>
// CHECK-SAME: -> tensor<8x4x20xf32>{{$}}
// CHECK: return [[RES]] : tensor<8x4x20xf32>

// GENERIC-LABEL: sym_name = "lstm_replay_tensor"
// GENERIC: %{{[[:alnum:]_]+}} = "rnn.cell_replay"(
// GENERIC-SAME: : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>, tensor<8x4x5xf32>, tensor<8x4x5xf32>, tensor<8x4x20xf32>) -> tensor<8x4x20xf32>
func.func @lstm_replay_tensor(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>, %c0: tensor<4x5xf32>,
    %w_ih: tensor<20x3xf32>, %w_hh: tensor<20x5xf32>,
    %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>,
    %y: tensor<8x4x5xf32>, %cells: tensor<8x4x5xf32>,
    %g0: tensor<8x4x20xf32>) -> tensor<8x4x20xf32> {
  %gates = rnn.cell_replay #rnn.lstm block(1)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      saved(y %y, cells %cells) outs(gates %g0)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<8x4x5xf32>, tensor<8x4x5xf32>, tensor<8x4x20xf32>
      -> tensor<8x4x20xf32>
  return %gates : tensor<8x4x20xf32>
}

// -----

// rnn.cell_replay #rnn.lstm block(1) on memrefs: writes gates, returns nothing (no `->`).

// CHECK-LABEL: func.func @lstm_replay_memref(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: memref<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<4x5xf32>, [[C0:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<20x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<20x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: memref<20xf32>, [[BH:%[[:alnum:]_]+]]: memref<20xf32>,
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: memref<8x4x5xf32>, [[CS:%[[:alnum:]_]+]]: memref<8x4x5xf32>,
// CHECK-SAME: [[G0:%[[:alnum:]_]+]]: memref<8x4x20xf32>)
// CHECK-NEXT: rnn.cell_replay #rnn.lstm block(1) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: saved(y [[Y]], cells [[CS]]) outs(gates [[G0]])
// CHECK-SAME: : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<4x5xf32>, memref<20x3xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>, memref<8x4x5xf32>, memref<8x4x5xf32>, memref<8x4x20xf32>{{$}}
// CHECK-NEXT: return

// GENERIC-LABEL: sym_name = "lstm_replay_memref"
// GENERIC: "rnn.cell_replay"(
// GENERIC-SAME: : (memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<4x5xf32>, memref<20x3xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>, memref<8x4x5xf32>, memref<8x4x5xf32>, memref<8x4x20xf32>) -> (){{$}}
func.func @lstm_replay_memref(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %c0: memref<4x5xf32>,
    %w_ih: memref<20x3xf32>, %w_hh: memref<20x5xf32>,
    %b_ih: memref<20xf32>, %b_hh: memref<20xf32>,
    %y: memref<8x4x5xf32>, %cells: memref<8x4x5xf32>,
    %g0: memref<8x4x20xf32>) {
  rnn.cell_replay #rnn.lstm block(1)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      saved(y %y, cells %cells) outs(gates %g0)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<4x5xf32>,
        memref<20x3xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<8x4x5xf32>, memref<8x4x5xf32>, memref<8x4x20xf32>
  return
}

// -----

// rnn.cell_replay #rnn.gru block(1) on tensors: seven cell inputs, the state y, and two
// destinations (gates, hn_proj) with one result each.

// CHECK-LABEL: func.func @gru_replay_tensor(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: tensor<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<15x3xf32>, [[WH:%[[:alnum:]_]+]]: tensor<15x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<15xf32>, [[BH:%[[:alnum:]_]+]]: tensor<15xf32>,
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: tensor<8x4x5xf32>,
// CHECK-SAME: [[G0:%[[:alnum:]_]+]]: tensor<8x4x15xf32>, [[P0:%[[:alnum:]_]+]]: tensor<8x4x5xf32>)
// CHECK: [[RES:%[[:alnum:]_]+]]:2 = rnn.cell_replay #rnn.gru block(1) ins([[X]], [[R]]) states([[H0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: saved(y [[Y]]) outs(gates [[G0]], hn_proj [[P0]])
// CHECK-SAME: : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>, tensor<8x4x5xf32>, tensor<8x4x15xf32>, tensor<8x4x5xf32>
// CHECK-SAME: -> tensor<8x4x15xf32>, tensor<8x4x5xf32>{{$}}
// CHECK: return [[RES]]#0, [[RES]]#1 : tensor<8x4x15xf32>, tensor<8x4x5xf32>

// GENERIC-LABEL: sym_name = "gru_replay_tensor"
// GENERIC: %{{[[:alnum:]_]+}}:2 = "rnn.cell_replay"(
// GENERIC-SAME: : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>, tensor<8x4x5xf32>, tensor<8x4x15xf32>, tensor<8x4x5xf32>) -> (tensor<8x4x15xf32>, tensor<8x4x5xf32>)
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

// -----

// rnn.cell_replay #rnn.gru block(1) on memrefs.

// CHECK-LABEL: func.func @gru_replay_memref(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: memref<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<15x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<15x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: memref<15xf32>, [[BH:%[[:alnum:]_]+]]: memref<15xf32>,
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: memref<8x4x5xf32>,
// CHECK-SAME: [[G0:%[[:alnum:]_]+]]: memref<8x4x15xf32>, [[P0:%[[:alnum:]_]+]]: memref<8x4x5xf32>)
// CHECK-NEXT: rnn.cell_replay #rnn.gru block(1) ins([[X]], [[R]]) states([[H0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: saved(y [[Y]]) outs(gates [[G0]], hn_proj [[P0]])
// CHECK-SAME: : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<8x4x5xf32>, memref<8x4x15xf32>, memref<8x4x5xf32>{{$}}
// CHECK-NEXT: return

// GENERIC-LABEL: sym_name = "gru_replay_memref"
// GENERIC: "rnn.cell_replay"(
// GENERIC-SAME: : (memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<8x4x5xf32>, memref<8x4x15xf32>, memref<8x4x5xf32>) -> (){{$}}
func.func @gru_replay_memref(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>,
    %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>,
    %y: memref<8x4x5xf32>, %g0: memref<8x4x15xf32>, %p0: memref<8x4x5xf32>) {
  rnn.cell_replay #rnn.gru block(1)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      saved(y %y) outs(gates %g0, hn_proj %p0)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<8x4x15xf32>, memref<8x4x5xf32>
  return
}
