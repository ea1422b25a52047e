// RUN: rnn-opt %s -split-input-file --rnn-autodiff > %t.autodiff.mlir
// RUN: rnn-opt %s -split-input-file --rnn-autodiff --rnn-rematerialize="policy=none" > %t.none.mlir
// RUN: diff %t.autodiff.mlir %t.none.mlir
// RUN: rnn-opt %s -split-input-file --rnn-autodiff --rnn-rematerialize | diff %t.autodiff.mlir -
// RUN: FileCheck %s --input-file=%t.none.mlir --check-prefix=NONE
// RUN: FileCheck %s --input-file=%t.none.mlir --check-prefix=NOREPLAY
// RUN: rnn-opt %s -split-input-file --rnn-autodiff --rnn-rematerialize="policy=gates" | FileCheck %s
// RUN: rnn-opt %s -split-input-file --rnn-autodiff --rnn-rematerialize="policy=gates" --rnn-rematerialize="policy=gates" | FileCheck %s
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=gates" --rnn-rematerialize="policy=chunk:2" 2>&1 | FileCheck %s --check-prefix=TWICE --implicit-check-not="see current operation"
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=chunk:0" 2>&1 | FileCheck %s --check-prefix=CHUNK0
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=budget:lots" 2>&1 | FileCheck %s --check-prefix=BUDGETX
// RUN: not rnn-opt %s --rnn-autodiff --rnn-rematerialize="policy=bogus" 2>&1 | FileCheck %s --check-prefix=BOGUS
// RUN: not rnn-opt %s -split-input-file --rnn-rematerialize="policy=gates" 2>&1 | FileCheck %s --check-prefix=NOTRAINING
// RUN: not rnn-opt %s -split-input-file --rnn-rematerialize="policy=chunk:2" 2>&1 | FileCheck %s --check-prefix=NOTRAININGCHUNK

// The same policy twice changes nothing (above); another one after it is
// refused, since it would rewrite kernels the first one rewrote.
// TWICE: rnn-rematerialize: @{{[a-z0-9_]+}}_grad has a remat policy already (gates), not chunk:2

// rnn-rematerialize runs on the output of rnn-autodiff. Under policy=none
// (the default) it changes nothing: the output is identical to
// rnn-autodiff's (the diff lines) and no replay kernel appears. Under
// policy=gates, an rnn.cell_replay #rnn.lstm block(2) / rnn.cell_replay #rnn.gru block(2) placed right before each
// backward kernel recomputes the gates (and hn_proj) from the states the
// forward saved (y, and cells for LSTM), the backward reads them from the
// replay and is tagged rnn.remat = "gates"; the forward kernel still writes
// its saved outputs (rnn-dse deletes them after lowering). Running the pass
// twice gives the same IR (second gates RUN line); the training function
// records the policy as rnn.remat. Malformed policies fail with a
// diagnostic. chunk:K and budget:BYTES: rematerialize-chunk.mlir and
// rematerialize-budget.mlir.

// NOREPLAY-NOT: _replay
// NOREPLAY-NOT: rnn.remat

// CHUNK0: error: rnn-rematerialize: bad remat policy 'chunk:0': K must be a positive integer
// BUDGETX: error: rnn-rematerialize: bad remat policy 'budget:lots': BYTES must be a positive integer
// BOGUS: error: rnn-rematerialize: unknown remat policy 'bogus' (expected none, gates, chunk:K or budget:BYTES)
// A policy other than none on a module without training functions (no
// rnn-autodiff before it; the last input has one of its own) would rewrite
// nothing: an error naming it.
// NOTRAINING: error: rnn-rematerialize: policy gates rewrites the backward kernels of training functions, and the module has none (rnn-autodiff makes them)
// NOTRAININGCHUNK: error: rnn-rematerialize: policy chunk:2 rewrites the backward kernels of training functions, and the module has none (rnn-autodiff makes them)

// A 1-layer LSTM: the replay takes the forward's inputs (x, is_init, h0,
// c0, both weights and both biases) and the states y and cells, and writes
// a fresh [T, B, 4H] tensor that becomes the gates of the backward; y and
// cells still come from the forward. The primal function is untouched.

// NONE-LABEL: func.func @lstm_grad(
// NONE: [[FWD:%[[:alnum:]_]+]]:5 = rnn.cell_fwd #rnn.lstm block(2)
// NONE: rnn.cell_bwd #rnn.lstm block(2)
// NONE-SAME: saved(y [[FWD]]#0, gates [[FWD]]#3, cells [[FWD]]#4)
// NONE-SAME: outs({{[^)]*}}) {{({rnn.layer = [0-9]+ : i64} )?}}:

// CHECK-LABEL: func.func @lstm(
// CHECK-NOT: rnn.cell_replay #rnn.lstm block(2)
// CHECK-LABEL: func.func @lstm_grad(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<2x3x4xf32>, [[R:%[[:alnum:]_]+]]: tensor<2x3xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<3x5xf32>, [[C0:%[[:alnum:]_]+]]: tensor<3x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<20x4xf32>, [[WH:%[[:alnum:]_]+]]: tensor<20x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<20xf32>, [[BH:%[[:alnum:]_]+]]: tensor<20xf32>,
// CHECK: [[FWD:%[[:alnum:]_]+]]:5 = rnn.cell_fwd #rnn.lstm block(2) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: saved(gates {{%[[:alnum:]_]+}}, cells {{%[[:alnum:]_]+}})
// CHECK-NEXT: rnn.begin_backward
// CHECK: [[EMPTY:%[[:alnum:]_]+]] = tensor.empty() : tensor<2x3x20xf32>
// CHECK-NEXT: [[GATES:%[[:alnum:]_]+]] = rnn.cell_replay #rnn.lstm block(2) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: saved(y [[FWD]]#0, cells [[FWD]]#4) outs(gates [[EMPTY]])
// CHECK-SAME: -> tensor<2x3x20xf32>
// CHECK-NEXT: [[BWD:%[[:alnum:]_]+]]:7 = rnn.cell_bwd #rnn.lstm block(2) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]])
// CHECK-SAME: saved(y [[FWD]]#0, gates [[GATES]], cells [[FWD]]#4)
// CHECK-SAME: {rnn.layer = 0 : i64, rnn.remat = "gates"}
// CHECK-NOT: rnn.cell_replay #rnn.lstm block(2)
// CHECK: return [[FWD]]#0, [[FWD]]#1, [[FWD]]#2, [[BWD]]#0,
func.func @lstm(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>,
    %w_ih: tensor<20x4xf32>, %w_hh: tensor<20x5xf32>,
    %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>)
    -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y, %h_n, %c_n : tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// A 1-layer GRU: rnn.cell_replay #rnn.gru block(2) recomputes both gates [T, B, 3H] and
// hn_proj [T, B, H] from y alone, and the backward reads both from it.

// NONE-LABEL: func.func @gru_grad(
// NONE: [[FWD:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2)
// NONE: rnn.cell_bwd #rnn.gru block(2)
// NONE-SAME: saved(y [[FWD]]#0, gates [[FWD]]#2, hn_proj [[FWD]]#3)
// NONE-SAME: outs({{[^)]*}}) {{({rnn.layer = [0-9]+ : i64} )?}}:

// CHECK-LABEL: func.func @gru_grad(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<2x3x4xf32>, [[R:%[[:alnum:]_]+]]: tensor<2x3xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<3x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<15x4xf32>, [[WH:%[[:alnum:]_]+]]: tensor<15x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<15xf32>, [[BH:%[[:alnum:]_]+]]: tensor<15xf32>,
// CHECK: [[FWD:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2) ins([[X]], [[R]]) states([[H0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: saved(gates {{%[[:alnum:]_]+}}, hn_proj {{%[[:alnum:]_]+}})
// CHECK-NEXT: rnn.begin_backward
// CHECK: [[EG:%[[:alnum:]_]+]] = tensor.empty() : tensor<2x3x15xf32>
// CHECK-NEXT: [[EP:%[[:alnum:]_]+]] = tensor.empty() : tensor<2x3x5xf32>
// CHECK-NEXT: [[REP:%[[:alnum:]_]+]]:2 = rnn.cell_replay #rnn.gru block(2) ins([[X]], [[R]]) states([[H0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: saved(y [[FWD]]#0) outs(gates [[EG]], hn_proj [[EP]])
// CHECK-SAME: -> tensor<2x3x15xf32>, tensor<2x3x5xf32>
// CHECK-NEXT: [[BWD:%[[:alnum:]_]+]]:6 = rnn.cell_bwd #rnn.gru block(2) ins([[X]], [[R]]) states([[H0]]) weights([[WI]], [[WH]])
// CHECK-SAME: saved(y [[FWD]]#0, gates [[REP]]#0, hn_proj [[REP]]#1)
// CHECK-SAME: {rnn.layer = 0 : i64, rnn.remat = "gates"}
// CHECK-NOT: rnn.cell_replay #rnn.gru block(2)
// CHECK: return [[FWD]]#0, [[BWD]]#0,
func.func @gru(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %w_ih: tensor<15x4xf32>, %w_hh: tensor<15x5xf32>,
    %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>) -> tensor<2x3x5xf32> {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return %y : tensor<2x3x5xf32>
}

// -----

// A 2-layer LSTM: one replay per layer, each right before its layer's
// backward (layer 1 first), each replaying its own forward: layer 1 from
// layer 0's y as input and its own y and cells as states.

// CHECK-LABEL: func.func @lstm2_grad(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<2x3x4xf32>, [[R:%[[:alnum:]_]+]]: tensor<2x3xi1>,
// CHECK-SAME: [[H00:%[[:alnum:]_]+]]: tensor<3x5xf32>, [[C00:%[[:alnum:]_]+]]: tensor<3x5xf32>,
// CHECK-SAME: [[WI0:%[[:alnum:]_]+]]: tensor<20x4xf32>,
// CHECK-SAME: [[H01:%[[:alnum:]_]+]]: tensor<3x5xf32>, [[C01:%[[:alnum:]_]+]]: tensor<3x5xf32>,
// CHECK-SAME: [[WI1:%[[:alnum:]_]+]]: tensor<20x5xf32>,
// CHECK: [[F0:%[[:alnum:]_]+]]:5 = rnn.cell_fwd #rnn.lstm block(2) ins([[X]], [[R]]) states([[H00]], [[C00]]) weights([[WI0]],
// CHECK: [[F1:%[[:alnum:]_]+]]:5 = rnn.cell_fwd #rnn.lstm block(2) ins([[F0]]#0, [[R]]) states([[H01]], [[C01]]) weights([[WI1]],
// CHECK-NEXT: rnn.begin_backward
// CHECK: [[G1:%[[:alnum:]_]+]] = rnn.cell_replay #rnn.lstm block(2) ins([[F0]]#0, [[R]]) states([[H01]], [[C01]]) weights([[WI1]],
// CHECK-SAME: saved(y [[F1]]#0, cells [[F1]]#4)
// CHECK-NEXT: [[B1:%[[:alnum:]_]+]]:7 = rnn.cell_bwd #rnn.lstm block(2) ins([[F0]]#0, [[R]]) states([[H01]], [[C01]]) weights([[WI1]],
// CHECK-SAME: saved(y [[F1]]#0, gates [[G1]], cells [[F1]]#4)
// CHECK-SAME: {rnn.layer = 1 : i64, rnn.remat = "gates"}
// CHECK: [[G0:%[[:alnum:]_]+]] = rnn.cell_replay #rnn.lstm block(2) ins([[X]], [[R]]) states([[H00]], [[C00]]) weights([[WI0]],
// CHECK-SAME: saved(y [[F0]]#0, cells [[F0]]#4)
// CHECK-NEXT: [[B0:%[[:alnum:]_]+]]:7 = rnn.cell_bwd #rnn.lstm block(2) ins([[X]], [[R]]) states([[H00]], [[C00]]) weights([[WI0]],
// CHECK-SAME: saved(y [[F0]]#0, gates [[G0]], cells [[F0]]#4)
// CHECK-SAME: {rnn.layer = 0 : i64, rnn.remat = "gates"}
// CHECK-NOT: rnn.cell_replay #rnn.lstm block(2)
// CHECK: return
func.func @lstm2(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0_0: tensor<3x5xf32>, %c0_0: tensor<3x5xf32>,
    %w_ih0: tensor<20x4xf32>, %w_hh0: tensor<20x5xf32>,
    %b_ih0: tensor<20xf32>, %b_hh0: tensor<20xf32>,
    %h0_1: tensor<3x5xf32>, %c0_1: tensor<3x5xf32>,
    %w_ih1: tensor<20x5xf32>, %w_hh1: tensor<20x5xf32>,
    %b_ih1: tensor<20xf32>, %b_hh1: tensor<20xf32>) -> tensor<2x3x5xf32> {
  %y0, %h_n0, %c_n0 = rnn.lstm %x reset %is_init state(%h0_0, %c0_0)
      weights(%w_ih0, %w_hh0, %b_ih0, %b_hh0)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  %y1, %h_n1, %c_n1 = rnn.lstm %y0 reset %is_init state(%h0_1, %c0_1)
      weights(%w_ih1, %w_hh1, %b_ih1, %b_hh1)
      : (tensor<2x3x5xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x5xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y1 : tensor<2x3x5xf32>
}

// -----

// A backward kernel whose gates do not come from a forward kernel (here,
// function arguments written by hand) has nothing to replay: it is left
// as it is, without the rnn.remat tag.

// CHECK-LABEL: func.func @bwd_only(
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: tensor<2x3x5xf32>, [[G:%[[:alnum:]_]+]]: tensor<2x3x20xf32>, [[CS:%[[:alnum:]_]+]]: tensor<2x3x5xf32>,
// CHECK-NOT: rnn.cell_replay #rnn.lstm block(2)
// CHECK: rnn.cell_bwd #rnn.lstm block(2)
// CHECK-SAME: saved(y [[Y]], gates [[G]], cells [[CS]])
// CHECK-NOT: rnn.remat
// CHECK: return
func.func @bwd_only(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>,
    %w_ih: tensor<20x4xf32>, %w_hh: tensor<20x5xf32>,
    %y: tensor<2x3x5xf32>, %gates: tensor<2x3x20xf32>,
    %cells: tensor<2x3x5xf32>,
    %dy: tensor<2x3x5xf32>, %dhn: tensor<3x5xf32>, %dcn: tensor<3x5xf32>,
    %o0: tensor<2x3x4xf32>, %o1: tensor<3x5xf32>, %o2: tensor<3x5xf32>,
    %o3: tensor<20x4xf32>, %o4: tensor<20x5xf32>, %o5: tensor<20xf32>,
    %o6: tensor<20xf32>) -> tensor<2x3x4xf32> {
  %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh = rnn.cell_bwd #rnn.lstm block(2)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh)
      saved(y %y, gates %gates, cells %cells)
      cotangents(%dy, %dhn, %dcn)
      outs(%o0, %o1, %o2, %o3, %o4, %o5, %o6)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>,
        tensor<2x3x5xf32>, tensor<2x3x20xf32>, tensor<2x3x5xf32>,
        tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
      -> tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
  return %gx : tensor<2x3x4xf32>
}
