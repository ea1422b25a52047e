// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-autodiff | FileCheck %s
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-autodiff="gemm-rows=12" | FileCheck %s --check-prefix=ROWS12
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-autodiff="gemm-rows=1" | FileCheck %s --check-prefix=ROWS1
// RUN: not rnn-opt %s --rnn-autodiff="gemm-rows=0" 2>&1 | FileCheck %s --check-prefix=ROWS0

// rnn-autodiff adds @f_grad next to every function @f made of rnn.lstm and
// rnn.gru: the forward kernels, rnn.begin_backward, then the backward
// kernels in reverse order, with the cotangents of values used twice summed
// and those of unreturned values zero. The error cases at the end are
// checked by -verify-diagnostics (their split produces no output).

// A 1-layer LSTM: the primal is kept; @lstm_grad takes one cotangent per
// result (named grad_<result>, layer kept) and returns the results, then
// the gradient of every float argument (none for the i1 mask).

// CHECK-LABEL: func.func @lstm(
// CHECK: rnn.lstm
// CHECK-LABEL: func.func @lstm_grad(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<2x3x4xf32> {rnn.name = "x"},
// CHECK-SAME: [[R:%[[:alnum:]_]+]]: tensor<2x3xi1> {rnn.name = "is_init"},
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<3x5xf32> {rnn.layer = 0 : i64, rnn.name = "h0"},
// CHECK-SAME: [[C0:%[[:alnum:]_]+]]: tensor<3x5xf32> {rnn.layer = 0 : i64, rnn.name = "c0"},
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<20x4xf32> {rnn.name = "weight_ih_l0"},
// CHECK-SAME: [[WH:%[[:alnum:]_]+]]: tensor<20x5xf32> {rnn.name = "weight_hh_l0"},
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<20xf32> {rnn.name = "bias_ih_l0"},
// CHECK-SAME: [[BH:%[[:alnum:]_]+]]: tensor<20xf32> {rnn.name = "bias_hh_l0"},
// CHECK-SAME: [[DY:%[[:alnum:]_]+]]: tensor<2x3x5xf32> {rnn.name = "grad_y"},
// CHECK-SAME: [[DH:%[[:alnum:]_]+]]: tensor<3x5xf32> {rnn.layer = 0 : i64, rnn.name = "grad_h_n"},
// CHECK-SAME: [[DC:%[[:alnum:]_]+]]: tensor<3x5xf32> {rnn.layer = 0 : i64, rnn.name = "grad_c_n"})
// CHECK-SAME: -> (tensor<2x3x5xf32> {rnn.name = "y"},
// CHECK-SAME: tensor<3x5xf32> {rnn.layer = 0 : i64, rnn.name = "h_n"},
// CHECK-SAME: tensor<3x5xf32> {rnn.layer = 0 : i64, rnn.name = "c_n"},
// CHECK-SAME: tensor<2x3x4xf32> {rnn.name = "grad_x"},
// CHECK-SAME: tensor<3x5xf32> {rnn.layer = 0 : i64, rnn.name = "grad_h0"},
// CHECK-SAME: tensor<3x5xf32> {rnn.layer = 0 : i64, rnn.name = "grad_c0"},
// CHECK-SAME: tensor<20x4xf32> {rnn.name = "grad_weight_ih_l0"},
// CHECK-SAME: tensor<20x5xf32> {rnn.name = "grad_weight_hh_l0"},
// CHECK-SAME: tensor<20xf32> {rnn.name = "grad_bias_ih_l0"},
// CHECK-SAME: tensor<20xf32> {rnn.name = "grad_bias_hh_l0"}) {
// CHECK-DAG: [[EY:%[[:alnum:]_]+]] = tensor.empty() : tensor<2x3x5xf32>
// CHECK-DAG: [[EG:%[[:alnum:]_]+]] = tensor.empty() : tensor<2x3x20xf32>
// CHECK: [[FWD:%[[:alnum:]_]+]]:5 = rnn.cell_fwd #rnn.lstm block(2) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: outs([[EY]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}) saved(gates [[EG]], cells {{%[[:alnum:]_]+}})
// CHECK-NEXT: rnn.begin_backward
// CHECK-NOT: rnn.cell_fwd #rnn.lstm block(2)
// CHECK: [[BWD:%[[:alnum:]_]+]]:7 = rnn.cell_bwd #rnn.lstm block(2) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]])
// CHECK-SAME: saved(y [[FWD]]#0, gates [[FWD]]#3, cells [[FWD]]#4)
// CHECK-SAME: cotangents([[DY]], [[DH]], [[DC]])
// CHECK-NOT: arith.addf
// CHECK: return [[FWD]]#0, [[FWD]]#1, [[FWD]]#2, [[BWD]]#0, [[BWD]]#1, [[BWD]]#2, [[BWD]]#3, [[BWD]]#4, [[BWD]]#5, [[BWD]]#6 :
func.func @lstm(%x: tensor<2x3x4xf32> {rnn.name = "x"},
    %is_init: tensor<2x3xi1> {rnn.name = "is_init"},
    %h0: tensor<3x5xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %c0: tensor<3x5xf32> {rnn.name = "c0", rnn.layer = 0 : i64},
    %w_ih: tensor<20x4xf32> {rnn.name = "weight_ih_l0"},
    %w_hh: tensor<20x5xf32> {rnn.name = "weight_hh_l0"},
    %b_ih: tensor<20xf32> {rnn.name = "bias_ih_l0"},
    %b_hh: tensor<20xf32> {rnn.name = "bias_hh_l0"})
    -> (tensor<2x3x5xf32> {rnn.name = "y"},
        tensor<3x5xf32> {rnn.name = "h_n", rnn.layer = 0 : i64},
        tensor<3x5xf32> {rnn.name = "c_n", rnn.layer = 0 : i64}) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y, %h_n, %c_n : tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// A 2-layer GRU whose layer-0 output is both returned and fed to layer 1:
// backward kernels run in reverse (layer 1 first), the cotangent of y0 is
// the returned one plus grad_x of layer 1, and h_n of layer 0, unreturned,
// gets a zero cotangent.

// CHECK-LABEL: func.func @gru2_grad(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<2x3x4xf32>, [[R:%[[:alnum:]_]+]]: tensor<2x3xi1>,
// CHECK-SAME: [[H00:%[[:alnum:]_]+]]: tensor<3x5xf32>, [[WI0:%[[:alnum:]_]+]]: tensor<15x4xf32>, [[WH0:%[[:alnum:]_]+]]: tensor<15x5xf32>,
// CHECK-SAME: {{%[[:alnum:]_]+}}: tensor<15xf32>, {{%[[:alnum:]_]+}}: tensor<15xf32>,
// CHECK-SAME: [[H01:%[[:alnum:]_]+]]: tensor<3x5xf32>, [[WI1:%[[:alnum:]_]+]]: tensor<15x5xf32>, [[WH1:%[[:alnum:]_]+]]: tensor<15x5xf32>,
// CHECK-SAME: {{%[[:alnum:]_]+}}: tensor<15xf32>, {{%[[:alnum:]_]+}}: tensor<15xf32>,
// CHECK-SAME: [[DY1:%[[:alnum:]_]+]]: tensor<2x3x5xf32>, [[DY0:%[[:alnum:]_]+]]: tensor<2x3x5xf32>, [[DHN1:%[[:alnum:]_]+]]: tensor<3x5xf32>)
// CHECK: [[F0:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2) ins([[X]], [[R]]) states([[H00]]) weights([[WI0]], [[WH0]],
// CHECK: [[F1:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2) ins([[F0]]#0, [[R]]) states([[H01]]) weights([[WI1]], [[WH1]],
// CHECK-NEXT: rnn.begin_backward
// CHECK: [[B1:%[[:alnum:]_]+]]:6 = rnn.cell_bwd #rnn.gru block(2) ins([[F0]]#0, [[R]]) states([[H01]]) weights([[WI1]], [[WH1]])
// CHECK-SAME: saved(y [[F1]]#0, gates [[F1]]#2, hn_proj [[F1]]#3) cotangents([[DY1]], [[DHN1]])
// CHECK: [[DY0SUM:%[[:alnum:]_]+]] = arith.addf [[DY0]], [[B1]]#0 : tensor<2x3x5xf32>
// CHECK: [[ZERO:%[[:alnum:]_]+]] = arith.constant 0.000000e+00 : f32
// CHECK: [[ZEROS:%[[:alnum:]_]+]] = linalg.fill ins([[ZERO]] : f32) outs({{%[[:alnum:]_]+}} : tensor<3x5xf32>)
// CHECK: [[B0:%[[:alnum:]_]+]]:6 = rnn.cell_bwd #rnn.gru block(2) ins([[X]], [[R]]) states([[H00]]) weights([[WI0]], [[WH0]])
// CHECK-SAME: saved(y [[F0]]#0, gates [[F0]]#2, hn_proj [[F0]]#3) cotangents([[DY0SUM]], [[ZEROS]])
// CHECK-NOT: rnn.cell_bwd #rnn.gru block(2)
// CHECK: return [[F1]]#0, [[F0]]#0, [[F1]]#1, [[B0]]#0, [[B0]]#1, [[B0]]#2, [[B0]]#3, [[B0]]#4, [[B0]]#5, [[B1]]#1, [[B1]]#2, [[B1]]#3, [[B1]]#4, [[B1]]#5 :
func.func @gru2(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0_0: tensor<3x5xf32>, %w_ih0: tensor<15x4xf32>, %w_hh0: tensor<15x5xf32>,
    %b_ih0: tensor<15xf32>, %b_hh0: tensor<15xf32>,
    %h0_1: tensor<3x5xf32>, %w_ih1: tensor<15x5xf32>, %w_hh1: tensor<15x5xf32>,
    %b_ih1: tensor<15xf32>, %b_hh1: tensor<15xf32>)
    -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3x5xf32>) {
  %y0, %h_n0 = rnn.gru %x reset %is_init state(%h0_0)
      weights(%w_ih0, %w_hh0, %b_ih0, %b_hh0)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  %y1, %h_n1 = rnn.gru %y0 reset %is_init state(%h0_1)
      weights(%w_ih1, %w_hh1, %b_ih1, %b_hh1)
      : (tensor<2x3x5xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x5xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return %y1, %y0, %h_n1 : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3x5xf32>
}

// -----

// The same x feeds two independent layers, and one bias feeds both bias
// operands of the second: both gradients are sums, accumulated in the order
// the backward kernels run (the second layer first).

// CHECK-LABEL: func.func @shared_grad(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<2x3x4xf32>
// CHECK: [[FA:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2) ins([[X]],
// CHECK: [[FB:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2) ins([[X]],
// CHECK: rnn.begin_backward
// CHECK: [[BB:%[[:alnum:]_]+]]:6 = rnn.cell_bwd #rnn.gru block(2)
// CHECK-SAME: saved(y [[FB]]#0,
// CHECK: [[DBIAS:%[[:alnum:]_]+]] = arith.addf [[BB]]#4, [[BB]]#5 : tensor<15xf32>
// CHECK: [[BA:%[[:alnum:]_]+]]:6 = rnn.cell_bwd #rnn.gru block(2)
// CHECK-SAME: saved(y [[FA]]#0,
// CHECK: [[DX:%[[:alnum:]_]+]] = arith.addf [[BB]]#0, [[BA]]#0 : tensor<2x3x4xf32>
// CHECK: return [[FA]]#0, [[FB]]#0, [[DX]], [[BA]]#1, [[BA]]#2, [[BA]]#3, [[BA]]#4, [[BA]]#5, [[BB]]#1, [[BB]]#2, [[BB]]#3, [[DBIAS]] :
func.func @shared(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0_a: tensor<3x5xf32>, %w_ih_a: tensor<15x4xf32>, %w_hh_a: tensor<15x5xf32>,
    %b_ih_a: tensor<15xf32>, %b_hh_a: tensor<15xf32>,
    %h0_b: tensor<3x5xf32>, %w_ih_b: tensor<15x4xf32>, %w_hh_b: tensor<15x5xf32>,
    %b_b: tensor<15xf32>)
    -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %ya, %h_na = rnn.gru %x reset %is_init state(%h0_a)
      weights(%w_ih_a, %w_hh_a, %b_ih_a, %b_hh_a)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  %yb, %h_nb = rnn.gru %x reset %is_init state(%h0_b)
      weights(%w_ih_b, %w_hh_b, %b_b, %b_b)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return %ya, %yb : tensor<2x3x5xf32>, tensor<2x3x5xf32>
}

// -----

// Unreturned results (h_n, c_n) get zero cotangents, and a float argument
// that nothing reads gets a zero gradient; both are linalg.fill of 0.

// CHECK-LABEL: func.func @only_y_grad(
// CHECK-SAME: [[DY:%[[:alnum:]_]+]]: tensor<2x3x5xf32>)
// CHECK-SAME: -> (tensor<2x3x5xf32>, tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>, tensor<7xf32>)
// CHECK: rnn.begin_backward
// CHECK: [[Z1:%[[:alnum:]_]+]] = linalg.fill ins({{%[[:alnum:]_]+}} : f32) outs({{%[[:alnum:]_]+}} : tensor<3x5xf32>)
// CHECK: [[Z2:%[[:alnum:]_]+]] = linalg.fill ins({{%[[:alnum:]_]+}} : f32) outs({{%[[:alnum:]_]+}} : tensor<3x5xf32>)
// CHECK: [[BWD:%[[:alnum:]_]+]]:7 = rnn.cell_bwd #rnn.lstm block(2)
// CHECK-SAME: cotangents([[DY]], [[Z1]], [[Z2]])
// CHECK: [[ZU:%[[:alnum:]_]+]] = linalg.fill ins({{%[[:alnum:]_]+}} : f32) outs({{%[[:alnum:]_]+}} : tensor<7xf32>)
// CHECK: return {{%[[:alnum:]_]+}}#0, [[BWD]]#0, [[BWD]]#1, [[BWD]]#2, [[BWD]]#3, [[BWD]]#4, [[BWD]]#5, [[BWD]]#6, [[ZU]] :
func.func @only_y(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>,
    %w_ih: tensor<20x4xf32>, %w_hh: tensor<20x5xf32>,
    %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>, %unused: tensor<7xf32>)
    -> tensor<2x3x5xf32> {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y : tensor<2x3x5xf32>
}

// -----

// A private model function gets a private training function; a function
// without rnn ops gets none.

// CHECK-LABEL: func.func private @hidden(
// CHECK-LABEL: func.func private @hidden_grad(
// CHECK-LABEL: func.func @no_model(
// CHECK-NOT: @no_model_grad
func.func private @hidden(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %w_ih: tensor<15x4xf32>, %w_hh: tensor<15x5xf32>,
    %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>) -> tensor<2x3x5xf32> {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return %y : tensor<2x3x5xf32>
}

func.func @no_model(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// Only rnn.lstm and rnn.gru can be differentiated.

func.func @unsupported(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %w_ih: tensor<15x4xf32>, %w_hh: tensor<15x5xf32>,
    %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>) -> tensor<2x3x5xf32> {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  // expected-error @+1 {{'arith.addf' op cannot be differentiated by rnn-autodiff (only rnn.lstm, rnn.gru, rnn.mgu, rnn.cifg and rnn.dropout are supported)}}
  %z = arith.addf %y, %y : tensor<2x3x5xf32>
  return %z : tensor<2x3x5xf32>
}

// -----

// The training function's name must be free.

// expected-error @+1 {{'func.func' op cannot generate its training function: symbol @taken_grad already exists}}
func.func @taken(%x: tensor<2x3x4xf32>, %is_init: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %w_ih: tensor<15x4xf32>, %w_hh: tensor<15x5xf32>,
    %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>) -> tensor<2x3x5xf32> {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return %y : tensor<2x3x5xf32>
}

func.func @taken_grad() {
  return
}

// -----

// The GEMM block: the smallest power of two P with P * B >= gemm-rows, at
// most T, the same for the forward and the backward kernel. T = 8, B = 3:
// 256 rows ask for more than T (P = 8); 12 rows give P = 4; 1 row P = 1.

// CHECK-LABEL: func.func @blocks_grad(
// CHECK: rnn.cell_fwd #rnn.gru block(8)
// CHECK: rnn.cell_bwd #rnn.gru block(8)
// ROWS12-LABEL: func.func @blocks_grad(
// ROWS12: rnn.cell_fwd #rnn.gru block(4)
// ROWS12: rnn.cell_bwd #rnn.gru block(4)
// ROWS1-LABEL: func.func @blocks_grad(
// ROWS1: rnn.cell_fwd #rnn.gru block(1)
// ROWS1: rnn.cell_bwd #rnn.gru block(1)
func.func @blocks(%x: tensor<8x3x4xf32>, %r: tensor<8x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>)
    -> (tensor<8x3x5xf32>, tensor<3x5xf32>) {
  %y, %h = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<8x3x4xf32>, tensor<8x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<8x3x5xf32>, tensor<3x5xf32>)
  return %y, %h : tensor<8x3x5xf32>, tensor<3x5xf32>
}

// A GEMM block needs at least one row.
// ROWS0: error: rnn-autodiff: gemm-rows must be >= 1

// -----

// A dropout becomes a linalg.generic that computes its mask (ten Philox
// rounds of two 32-bit products each) from the element's position and
// [seed, offset] and applies it, in the forward to its input and in the
// backward to its result's cotangent, which the layer's backward reads.

// CHECK-LABEL: func.func @dropped_grad(
// CHECK-SAME: %[[RNG:[^:]*]]: tensor<2xi64>
// CHECK-SAME: %[[DY:[^:]*]]: tensor<2x3x5xf32>)
// CHECK: %[[F:.*]]:4 = rnn.cell_fwd #rnn.gru
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[F]]#0, %[[RNG]], %[[RNG]] :
// CHECK-COUNT-20: arith.mului_extended
// CHECK: linalg.yield
// CHECK: rnn.begin_backward
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[RNG]], %[[RNG]] :
// CHECK-COUNT-20: arith.mului_extended
// CHECK: rnn.cell_bwd #rnn.gru {{.*}} cotangents(%[[G]],
// CHECK: return %[[D]],
func.func @dropped(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %rng: tensor<2xi64>, %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<15x5xf32>, %bi: tensor<15xf32>, %bh: tensor<15xf32>)
    -> tensor<2x3x5xf32> {
  %y, %h = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  %d = rnn.dropout %y rng(%rng) {p = 0.25 : f64, layer = 3 : i64}
      : tensor<2x3x5xf32>, tensor<2xi64>
  return %d : tensor<2x3x5xf32>
}

// -----

// p = 0 drops nothing: no mask is computed.

// CHECK-LABEL: func.func @kept_grad(
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @kept(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %rng: tensor<2xi64>, %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<15x5xf32>, %bi: tensor<15xf32>, %bh: tensor<15xf32>)
    -> tensor<2x3x5xf32> {
  %d = rnn.dropout %x rng(%rng) {p = 0.0 : f64, layer = 0 : i64}
      : tensor<2x3x4xf32>, tensor<2xi64>
  %y, %h = rnn.gru %d reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return %y : tensor<2x3x5xf32>
}

// -----

// Reset states: the kernels read them and the backward writes their
// gradients after the initial states'; a reset state two layers share gets
// the sum of their gradients.

// CHECK-LABEL: func.func @gru_shared_reset_state_grad(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<2x3x5xf32> {rnn.name = "x"},
// CHECK-SAME: [[R:%[[:alnum:]_]+]]: tensor<2x3xi1> {rnn.name = "is_init"},
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<3x5xf32> {rnn.name = "h0"},
// CHECK-SAME: [[HR:%[[:alnum:]_]+]]: tensor<3x5xf32> {rnn.name = "h_reset"},
// CHECK: [[F0:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2) ins([[X]], [[R]]) states([[H0]]) reset_states([[HR]])
// CHECK: [[F1:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(2) ins([[F0]]#0, [[R]]) states([[H0]]) reset_states([[HR]])
// CHECK: [[B1:%[[:alnum:]_]+]]:7 = rnn.cell_bwd #rnn.gru block(2) ins([[F0]]#0, [[R]]) states([[H0]]) reset_states([[HR]])
// CHECK: [[B0:%[[:alnum:]_]+]]:7 = rnn.cell_bwd #rnn.gru block(2) ins([[X]], [[R]]) states([[H0]]) reset_states([[HR]])
// CHECK-DAG: [[DH0:%[[:alnum:]_]+]] = arith.addf [[B1]]#1, [[B0]]#1
// CHECK-DAG: [[DHR:%[[:alnum:]_]+]] = arith.addf [[B1]]#2, [[B0]]#2
// CHECK: return [[F1]]#0, [[B0]]#0, [[DH0]], [[DHR]],
func.func @gru_shared_reset_state(%x: tensor<2x3x5xf32> {rnn.name = "x"},
    %is_init: tensor<2x3xi1> {rnn.name = "is_init"},
    %h0: tensor<3x5xf32> {rnn.name = "h0"},
    %hr: tensor<3x5xf32> {rnn.name = "h_reset"},
    %wi: tensor<15x5xf32> {rnn.name = "weight_ih"},
    %wh: tensor<15x5xf32> {rnn.name = "weight_hh"},
    %b: tensor<15xf32> {rnn.name = "bias"})
    -> (tensor<2x3x5xf32> {rnn.name = "y"}) {
  %y0, %h0n = rnn.gru %x reset %is_init to(%hr) state(%h0)
      weights(%wi, %wh, %b, %b)
      : (tensor<2x3x5xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<15x5xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  %y1, %h1n = rnn.gru %y0 reset %is_init to(%hr) state(%h0)
      weights(%wi, %wh, %b, %b)
      : (tensor<2x3x5xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<15x5xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return %y1 : tensor<2x3x5xf32>
}

// -----
// Dynamic T and B: the backward kernel takes the forward's `rows`, and the
// gradients' destinations their primals' sizes.

// CHECK-LABEL: func.func @dynamic_grad(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<?x?x3xf32>, {{%[[:alnum:]_]+}}: tensor<?x?xi1>, [[H0:%[[:alnum:]_]+]]: tensor<?x5xf32>
// CHECK: rnn.cell_fwd #rnn.gru rows(256)
// CHECK: rnn.begin_backward
// CHECK: [[T:%.+]] = tensor.dim [[X]], %c0
// CHECK: [[B:%.+]] = tensor.dim [[X]], %c1
// CHECK: tensor.empty([[T]], [[B]]) : tensor<?x?x3xf32>
// CHECK: [[BH:%.+]] = tensor.dim [[H0]], %c0
// CHECK: tensor.empty([[BH]]) : tensor<?x5xf32>
// CHECK: rnn.cell_bwd #rnn.gru rows(256)
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
