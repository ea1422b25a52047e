// RUN: rnn-opt %s -split-input-file --rnn-expand-forward | FileCheck %s
// RUN: rnn-opt %s -split-input-file --rnn-expand-forward="gemm-rows=3" | FileCheck %s --check-prefix=ROWS3
// RUN: not rnn-opt %s --rnn-expand-forward="gemm-rows=0" 2>&1 | FileCheck %s --check-prefix=ROWS0

// rnn-expand-forward replaces each model op by its forward kernel, with
// tensor.empty destinations for the results and for the saved values that
// nothing reads in inference. The kernels get the GEMM block of
// rnn-autodiff's rule (here T = 2, B = 3: block(2) for the default 256
// rows, block(1) for gemm-rows=3) and no chunk: inference saves nothing.

// CHECK-NOT: chunk(
// ROWS3-NOT: chunk(
// ROWS3: rnn.cell_fwd #rnn.lstm block(1) ins(
// ROWS3: rnn.cell_fwd #rnn.gru block(1) ins(
// ROWS3: rnn.cell_fwd #rnn.gru block(1) ins(

// An LSTM layer becomes rnn.cell_fwd #rnn.lstm: destinations y [T, B, H], h_n and c_n
// [B, H], saved gates [T, B, 4H] and cells [T, B, H]; the op's results are
// the kernel's first three.

// CHECK-LABEL: func.func @lstm(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<2x3x4xf32>, [[R:%[[:alnum:]_]+]]: tensor<2x3xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<3x5xf32>, [[C0:%[[:alnum:]_]+]]: tensor<3x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<20x4xf32>, [[WH:%[[:alnum:]_]+]]: tensor<20x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<20xf32>, [[BH:%[[:alnum:]_]+]]: tensor<20xf32>)
// CHECK-NOT: rnn.lstm {{%}}
// CHECK-DAG: [[Y:%[[:alnum:]_]+]] = tensor.empty() : tensor<2x3x5xf32>
// CHECK-DAG: [[HN:%[[:alnum:]_]+]] = tensor.empty() : tensor<3x5xf32>
// CHECK-DAG: [[CN:%[[:alnum:]_]+]] = tensor.empty() : tensor<3x5xf32>
// CHECK-DAG: [[G:%[[:alnum:]_]+]] = tensor.empty() : tensor<2x3x20xf32>
// CHECK-DAG: [[CS:%[[:alnum:]_]+]] = tensor.empty() : tensor<2x3x5xf32>
// CHECK: [[K:%[[:alnum:]_]+]]:5 = rnn.cell_fwd #rnn.lstm block(2) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: outs([[Y]], [[HN]], [[CN]]) saved(gates [[G]], cells [[CS]])
// CHECK-SAME: -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x3x20xf32>, tensor<2x3x5xf32>
// CHECK-NEXT: return [[K]]#0, [[K]]#1, [[K]]#2 :
// CHECK-NOT: rnn.lstm {{%}}
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

// Two GRU layers: saved gates [T, B, 3H] and hn_proj [T, B, H]; layer 1
// reads y of layer 0 from the first kernel (a saved output is never used in
// place of y).

// CHECK-LABEL: func.func @gru2(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<2x3x4xf32>, [[R:%[[:alnum:]_]+]]: tensor<2x3xi1>,
// CHECK-NOT: rnn.gru {{%}}
// CHECK-DAG: [[G0:%[[:alnum:]_]+]] = tensor.empty() : tensor<2x3x15xf32>
// CHECK: [[K0:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2) ins([[X]], [[R]])
// CHECK-SAME: saved(gates [[G0]], hn_proj {{%[[:alnum:]_]+}})
// CHECK-SAME: -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<2x3x15xf32>, tensor<2x3x5xf32>
// CHECK: [[K1:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2) ins([[K0]]#0, [[R]])
// CHECK-SAME: : tensor<2x3x5xf32>, tensor<2x3xi1>, tensor<3x6xf32>, tensor<18x5xf32>, tensor<18x6xf32>, tensor<18xf32>, tensor<18xf32>, tensor<2x3x6xf32>, tensor<3x6xf32>, tensor<2x3x18xf32>, tensor<2x3x6xf32>
// CHECK-NEXT: return [[K1]]#0, [[K0]]#1, [[K1]]#1 :
// CHECK-NOT: rnn.gru {{%}}
func.func @gru2(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0_0: tensor<3x5xf32>, %w_ih0: tensor<15x4xf32>, %w_hh0: tensor<15x5xf32>,
    %b_ih0: tensor<15xf32>, %b_hh0: tensor<15xf32>,
    %h0_1: tensor<3x6xf32>, %w_ih1: tensor<18x5xf32>, %w_hh1: tensor<18x6xf32>,
    %b_ih1: tensor<18xf32>, %b_hh1: tensor<18xf32>)
    -> (tensor<2x3x6xf32>, tensor<3x5xf32>, tensor<3x6xf32>) {
  %y0, %h_n0 = rnn.gru %x reset %is_init state(%h0_0)
      weights(%w_ih0, %w_hh0, %b_ih0, %b_hh0)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  %y1, %h_n1 = rnn.gru %y0 reset %is_init state(%h0_1)
      weights(%w_ih1, %w_hh1, %b_ih1, %b_hh1)
      : (tensor<2x3x5xf32>, tensor<2x3xi1>, tensor<3x6xf32>,
         tensor<18x5xf32>, tensor<18x6xf32>, tensor<18xf32>, tensor<18xf32>)
      -> (tensor<2x3x6xf32>, tensor<3x6xf32>)
  return %y1, %h_n0, %h_n1 : tensor<2x3x6xf32>, tensor<3x5xf32>, tensor<3x6xf32>
}

// -----

// Kernels already in the input are left alone: no second kernel, no new
// destinations.

// CHECK-LABEL: func.func @kernel(
// CHECK-NOT: tensor.empty
// CHECK: rnn.cell_fwd #rnn.gru block(1)
// CHECK-NOT: rnn.cell_fwd #rnn.gru block(1)
// CHECK: return
func.func @kernel(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %w_ih: tensor<15x4xf32>, %w_hh: tensor<15x5xf32>,
    %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>, %y0: tensor<2x3x5xf32>,
    %g0: tensor<2x3x15xf32>) -> tensor<2x3x5xf32> {
  %y, %h_n, %gates, %hn = rnn.cell_fwd #rnn.gru block(1)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y0, %h0) saved(gates %g0, hn_proj %y0)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
        tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>,
        tensor<2x3x5xf32>, tensor<3x5xf32>,
        tensor<2x3x15xf32>, tensor<2x3x5xf32>
      -> tensor<2x3x5xf32>, tensor<3x5xf32>,
         tensor<2x3x15xf32>, tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// A GEMM block needs at least one row.
// ROWS0: error: rnn-expand-forward: gemm-rows must be >= 1

// -----

// Outside a training function a dropout is its input.

// CHECK-LABEL: func.func @dropout(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x4xf32>
// CHECK-NOT: rnn.dropout
// CHECK-NOT: linalg.generic
// CHECK: rnn.cell_fwd #rnn.gru block({{[0-9]+}}) ins(%[[X]],
func.func @dropout(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %rng: tensor<2xi64>, %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<15x5xf32>, %bi: tensor<15xf32>, %bh: tensor<15xf32>)
    -> tensor<2x3x5xf32> {
  %d = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 0 : i64}
      : tensor<2x3x4xf32>, tensor<2xi64>
  %y, %h = rnn.gru %d reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return %y : tensor<2x3x5xf32>
}

// -----
// Dynamic T and B: the destinations take x's sizes (tensor.dim), and the
// kernel's GEMM block is `rows`, chosen per call.

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<?x?x3xf32>
// CHECK: [[T:%.+]] = tensor.dim [[X]], %c0
// CHECK: [[B:%.+]] = tensor.dim [[X]], %c1
// CHECK: [[Y:%.+]] = tensor.empty([[T]], [[B]]) : tensor<?x?x5xf32>
// CHECK: [[B2:%.+]] = tensor.dim [[X]], %c1
// CHECK: [[HN:%.+]] = tensor.empty([[B2]]) : tensor<?x5xf32>
// CHECK: rnn.cell_fwd #rnn.gru rows(256) ins([[X]],
// CHECK-SAME: outs([[Y]], [[HN]])
func.func @dynamic(%x: tensor<?x?x3xf32>, %is_init: tensor<?x?xi1>,
                   %h0: tensor<?x5xf32>, %w_ih: tensor<15x3xf32>,
                   %w_hh: tensor<15x5xf32>, %b_ih: tensor<15xf32>,
                   %b_hh: tensor<15xf32>) -> tensor<?x?x5xf32> {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<?x?x3xf32>, tensor<?x?xi1>, tensor<?x5xf32>,
         tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<?x?x5xf32>, tensor<?x5xf32>)
  return %y : tensor<?x?x5xf32>
}
