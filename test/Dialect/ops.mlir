// RUN: rnn-opt %s | rnn-opt | FileCheck %s
// RUN: rnn-opt %s --mlir-print-op-generic | rnn-opt | FileCheck %s

// Round trip of every rnn op, through the custom and the generic form. The
// op bodies are the examples of the op descriptions in RNNOps.td; the
// kernels appear in tensor form (one result per destination) and in memref
// form (no results).

// CHECK-LABEL: func.func @lstm(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: tensor<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<4x5xf32>, [[C0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<20x3xf32>, [[WH:%[[:alnum:]_]+]]: tensor<20x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<20xf32>, [[BH:%[[:alnum:]_]+]]: tensor<20xf32>)
// CHECK: [[Y:%[[:alnum:]_]+]], [[HN:%[[:alnum:]_]+]], [[CN:%[[:alnum:]_]+]] = rnn.lstm [[X]] reset [[R]] state([[H0]], [[C0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
// CHECK-SAME: -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
// CHECK: return [[Y]], [[HN]], [[CN]]
func.func @lstm(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
                %h0: tensor<4x5xf32>, %c0: tensor<4x5xf32>,
                %w_ih: tensor<20x3xf32>, %w_hh: tensor<20x5xf32>,
                %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>)
    -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
         tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
  return %y, %h_n, %c_n : tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}

// -----
// rnn.gru: one state, three gates.

// CHECK-LABEL: func.func @gru(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: tensor<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<15x3xf32>, [[WH:%[[:alnum:]_]+]]: tensor<15x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<15xf32>, [[BH:%[[:alnum:]_]+]]: tensor<15xf32>)
// CHECK: [[Y:%[[:alnum:]_]+]], [[HN:%[[:alnum:]_]+]] = rnn.gru [[X]] reset [[R]] state([[H0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
// CHECK-SAME: -> (tensor<8x4x5xf32>, tensor<4x5xf32>)
// CHECK: return [[Y]], [[HN]]
func.func @gru(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
               %h0: tensor<4x5xf32>,
               %w_ih: tensor<15x3xf32>, %w_hh: tensor<15x5xf32>,
               %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>)
    -> (tensor<8x4x5xf32>, tensor<4x5xf32>) {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
         tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<8x4x5xf32>, tensor<4x5xf32>)
  return %y, %h_n : tensor<8x4x5xf32>, tensor<4x5xf32>
}

// -----
// rnn.mgu: one state, two gates.

// CHECK-LABEL: func.func @mgu(
// CHECK: [[Y:%[[:alnum:]_]+]], [[HN:%[[:alnum:]_]+]] = rnn.mgu {{%[[:alnum:]_]+}} reset {{%[[:alnum:]_]+}} state({{%[[:alnum:]_]+}}) weights(
// CHECK-SAME: : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<10x3xf32>, tensor<10x5xf32>, tensor<10xf32>, tensor<10xf32>)
// CHECK-SAME: -> (tensor<8x4x5xf32>, tensor<4x5xf32>)
// CHECK: return [[Y]], [[HN]]
func.func @mgu(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
               %h0: tensor<4x5xf32>,
               %w_ih: tensor<10x3xf32>, %w_hh: tensor<10x5xf32>,
               %b_ih: tensor<10xf32>, %b_hh: tensor<10xf32>)
    -> (tensor<8x4x5xf32>, tensor<4x5xf32>) {
  %y, %h_n = rnn.mgu %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
         tensor<10x3xf32>, tensor<10x5xf32>, tensor<10xf32>, tensor<10xf32>)
      -> (tensor<8x4x5xf32>, tensor<4x5xf32>)
  return %y, %h_n : tensor<8x4x5xf32>, tensor<4x5xf32>
}

// -----
// rnn.cifg: two states, three gates (the example of its description).

// CHECK-LABEL: func.func @cifg(
// CHECK: [[Y:%[[:alnum:]_]+]], [[HN:%[[:alnum:]_]+]], [[CN:%[[:alnum:]_]+]] = rnn.cifg {{%[[:alnum:]_]+}} reset {{%[[:alnum:]_]+}} state({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}) weights(
// CHECK-SAME: : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
// CHECK-SAME: -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
// CHECK: return [[Y]], [[HN]], [[CN]]
func.func @cifg(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
                %h0: tensor<4x5xf32>, %c0: tensor<4x5xf32>,
                %w_ih: tensor<15x3xf32>, %w_hh: tensor<15x5xf32>,
                %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>)
    -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
  %y, %h_n, %c_n = rnn.cifg %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
         tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
  return %y, %h_n, %c_n : tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}

// -----
// rnn.cell_fwd #rnn.lstm block(1) on tensors: one result per destination (y, h_n, c_n, gates,
// cells).

// CHECK-LABEL: func.func @lstm_fwd_tensor(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: tensor<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<4x5xf32>, [[C0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<20x3xf32>, [[WH:%[[:alnum:]_]+]]: tensor<20x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<20xf32>, [[BH:%[[:alnum:]_]+]]: tensor<20xf32>,
// CHECK-SAME: [[Y0:%[[:alnum:]_]+]]: tensor<8x4x5xf32>, [[HN0:%[[:alnum:]_]+]]: tensor<4x5xf32>, [[CN0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[G0:%[[:alnum:]_]+]]: tensor<8x4x20xf32>, [[CS0:%[[:alnum:]_]+]]: tensor<8x4x5xf32>)
// CHECK: [[RES:%[[:alnum:]_]+]]:5 = rnn.cell_fwd #rnn.lstm block(1) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: outs([[Y0]], [[HN0]], [[CN0]]) saved(gates [[G0]], cells [[CS0]])
// CHECK-SAME: : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>, tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<8x4x20xf32>, tensor<8x4x5xf32>
// CHECK-SAME: -> tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<8x4x20xf32>, tensor<8x4x5xf32>
// CHECK: return [[RES]]#0, [[RES]]#1, [[RES]]#2, [[RES]]#3, [[RES]]#4
func.func @lstm_fwd_tensor(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>, %c0: tensor<4x5xf32>,
    %w_ih: tensor<20x3xf32>, %w_hh: tensor<20x5xf32>,
    %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>,
    %y0: tensor<8x4x5xf32>, %hn0: tensor<4x5xf32>, %cn0: tensor<4x5xf32>,
    %g0: tensor<8x4x20xf32>, %c0s: tensor<8x4x5xf32>)
    -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x20xf32>, tensor<8x4x5xf32>) {
  %y, %h_n, %c_n, %gates, %cells = rnn.cell_fwd #rnn.lstm block(1)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y0, %hn0, %cn0) saved(gates %g0, cells %c0s)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x20xf32>, tensor<8x4x5xf32>
      -> tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
         tensor<8x4x20xf32>, tensor<8x4x5xf32>
  return %y, %h_n, %c_n, %gates, %cells
      : tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x20xf32>, tensor<8x4x5xf32>
}

// -----
// rnn.cell_fwd #rnn.lstm block(1) on memrefs: writes its destinations, returns nothing.

// CHECK-LABEL: func.func @lstm_fwd_memref(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: memref<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<4x5xf32>, [[C0:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<20x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<20x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: memref<20xf32>, [[BH:%[[:alnum:]_]+]]: memref<20xf32>,
// CHECK-SAME: [[Y0:%[[:alnum:]_]+]]: memref<8x4x5xf32>, [[HN0:%[[:alnum:]_]+]]: memref<4x5xf32>, [[CN0:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[G0:%[[:alnum:]_]+]]: memref<8x4x20xf32>, [[CS0:%[[:alnum:]_]+]]: memref<8x4x5xf32>)
// CHECK-NEXT: rnn.cell_fwd #rnn.lstm block(1) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: outs([[Y0]], [[HN0]], [[CN0]]) saved(gates [[G0]], cells [[CS0]])
// CHECK-SAME: : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<4x5xf32>, memref<20x3xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>, memref<8x4x5xf32>, memref<4x5xf32>, memref<4x5xf32>, memref<8x4x20xf32>, memref<8x4x5xf32>{{$}}
// CHECK-NEXT: return
func.func @lstm_fwd_memref(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %c0: memref<4x5xf32>,
    %w_ih: memref<20x3xf32>, %w_hh: memref<20x5xf32>,
    %b_ih: memref<20xf32>, %b_hh: memref<20xf32>,
    %y0: memref<8x4x5xf32>, %hn0: memref<4x5xf32>, %cn0: memref<4x5xf32>,
    %g0: memref<8x4x20xf32>, %c0s: memref<8x4x5xf32>) {
  rnn.cell_fwd #rnn.lstm block(1)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y0, %hn0, %cn0) saved(gates %g0, cells %c0s)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<4x5xf32>,
        memref<20x3xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<8x4x5xf32>, memref<4x5xf32>, memref<4x5xf32>,
        memref<8x4x20xf32>, memref<8x4x5xf32>
  return
}

// -----
// rnn.cell_bwd #rnn.lstm block(1) on tensors: seven gradients.

// CHECK-LABEL: func.func @lstm_bwd_tensor(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: tensor<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<4x5xf32>, [[C0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<20x3xf32>, [[WH:%[[:alnum:]_]+]]: tensor<20x5xf32>,
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: tensor<8x4x5xf32>, [[G:%[[:alnum:]_]+]]: tensor<8x4x20xf32>, [[CS:%[[:alnum:]_]+]]: tensor<8x4x5xf32>,
// CHECK-SAME: [[DY:%[[:alnum:]_]+]]: tensor<8x4x5xf32>, [[DH:%[[:alnum:]_]+]]: tensor<4x5xf32>, [[DC:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[O0:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[O1:%[[:alnum:]_]+]]: tensor<4x5xf32>, [[O2:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[O3:%[[:alnum:]_]+]]: tensor<20x3xf32>, [[O4:%[[:alnum:]_]+]]: tensor<20x5xf32>, [[O5:%[[:alnum:]_]+]]: tensor<20xf32>, [[O6:%[[:alnum:]_]+]]: tensor<20xf32>)
// CHECK: [[RES:%[[:alnum:]_]+]]:7 = rnn.cell_bwd #rnn.lstm block(1) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]])
// CHECK-SAME: saved(y [[Y]], gates [[G]], cells [[CS]]) cotangents([[DY]], [[DH]], [[DC]])
// CHECK-SAME: outs([[O0]], [[O1]], [[O2]], [[O3]], [[O4]], [[O5]], [[O6]])
// CHECK-SAME: : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<8x4x5xf32>, tensor<8x4x20xf32>, tensor<8x4x5xf32>, tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
// CHECK-SAME: -> tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
// CHECK: return [[RES]]#0, [[RES]]#1, [[RES]]#2, [[RES]]#3, [[RES]]#4, [[RES]]#5, [[RES]]#6
func.func @lstm_bwd_tensor(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>, %c0: tensor<4x5xf32>,
    %w_ih: tensor<20x3xf32>, %w_hh: tensor<20x5xf32>,
    %y: tensor<8x4x5xf32>, %gates: tensor<8x4x20xf32>,
    %cells: tensor<8x4x5xf32>,
    %dy: tensor<8x4x5xf32>, %dhn: tensor<4x5xf32>, %dcn: tensor<4x5xf32>,
    %o0: tensor<8x4x3xf32>, %o1: tensor<4x5xf32>, %o2: tensor<4x5xf32>,
    %o3: tensor<20x3xf32>, %o4: tensor<20x5xf32>, %o5: tensor<20xf32>,
    %o6: tensor<20xf32>)
    -> (tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>) {
  %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh = rnn.cell_bwd #rnn.lstm block(1)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh)
      saved(y %y, gates %gates, cells %cells)
      cotangents(%dy, %dhn, %dcn)
      outs(%o0, %o1, %o2, %o3, %o4, %o5, %o6)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>,
        tensor<8x4x5xf32>, tensor<8x4x20xf32>, tensor<8x4x5xf32>,
        tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
      -> tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
         tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
  return %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh
      : tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
}

// -----
// rnn.cell_bwd #rnn.lstm block(1) on memrefs.

// CHECK-LABEL: func.func @lstm_bwd_memref(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: memref<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<4x5xf32>, [[C0:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<20x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<20x5xf32>,
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: memref<8x4x5xf32>, [[G:%[[:alnum:]_]+]]: memref<8x4x20xf32>, [[CS:%[[:alnum:]_]+]]: memref<8x4x5xf32>,
// CHECK-SAME: [[DY:%[[:alnum:]_]+]]: memref<8x4x5xf32>, [[DH:%[[:alnum:]_]+]]: memref<4x5xf32>, [[DC:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[O0:%[[:alnum:]_]+]]: memref<8x4x3xf32>, [[O1:%[[:alnum:]_]+]]: memref<4x5xf32>, [[O2:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[O3:%[[:alnum:]_]+]]: memref<20x3xf32>, [[O4:%[[:alnum:]_]+]]: memref<20x5xf32>, [[O5:%[[:alnum:]_]+]]: memref<20xf32>, [[O6:%[[:alnum:]_]+]]: memref<20xf32>)
// CHECK-NEXT: rnn.cell_bwd #rnn.lstm block(1) ins([[X]], [[R]]) states([[H0]], [[C0]]) weights([[WI]], [[WH]])
// CHECK-SAME: saved(y [[Y]], gates [[G]], cells [[CS]]) cotangents([[DY]], [[DH]], [[DC]])
// CHECK-SAME: outs([[O0]], [[O1]], [[O2]], [[O3]], [[O4]], [[O5]], [[O6]])
// CHECK-SAME: : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<4x5xf32>, memref<20x3xf32>, memref<20x5xf32>, memref<8x4x5xf32>, memref<8x4x20xf32>, memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>, memref<4x5xf32>, memref<8x4x3xf32>, memref<4x5xf32>, memref<4x5xf32>, memref<20x3xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>{{$}}
// CHECK-NEXT: return
func.func @lstm_bwd_memref(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %c0: memref<4x5xf32>,
    %w_ih: memref<20x3xf32>, %w_hh: memref<20x5xf32>,
    %y: memref<8x4x5xf32>, %gates: memref<8x4x20xf32>,
    %cells: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>, %dcn: memref<4x5xf32>,
    %o0: memref<8x4x3xf32>, %o1: memref<4x5xf32>, %o2: memref<4x5xf32>,
    %o3: memref<20x3xf32>, %o4: memref<20x5xf32>, %o5: memref<20xf32>,
    %o6: memref<20xf32>) {
  rnn.cell_bwd #rnn.lstm block(1)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh)
      saved(y %y, gates %gates, cells %cells)
      cotangents(%dy, %dhn, %dcn)
      outs(%o0, %o1, %o2, %o3, %o4, %o5, %o6)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<4x5xf32>,
        memref<20x3xf32>, memref<20x5xf32>,
        memref<8x4x5xf32>, memref<8x4x20xf32>, memref<8x4x5xf32>,
        memref<8x4x5xf32>, memref<4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>, memref<4x5xf32>,
        memref<20x3xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>
  return
}

// -----
// rnn.cell_fwd #rnn.gru block(1) on tensors: y, h_n, gates, hn_proj.

// CHECK-LABEL: func.func @gru_fwd_tensor(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: tensor<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<15x3xf32>, [[WH:%[[:alnum:]_]+]]: tensor<15x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: tensor<15xf32>, [[BH:%[[:alnum:]_]+]]: tensor<15xf32>,
// CHECK-SAME: [[Y0:%[[:alnum:]_]+]]: tensor<8x4x5xf32>, [[HN0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[G0:%[[:alnum:]_]+]]: tensor<8x4x15xf32>, [[P0:%[[:alnum:]_]+]]: tensor<8x4x5xf32>)
// CHECK: [[RES:%[[:alnum:]_]+]]:4 = rnn.cell_fwd #rnn.gru block(1) ins([[X]], [[R]]) states([[H0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: outs([[Y0]], [[HN0]]) saved(gates [[G0]], hn_proj [[P0]])
// CHECK-SAME: : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>, tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<8x4x15xf32>, tensor<8x4x5xf32>
// CHECK-SAME: -> tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<8x4x15xf32>, tensor<8x4x5xf32>
// CHECK: return [[RES]]#0, [[RES]]#1, [[RES]]#2, [[RES]]#3
func.func @gru_fwd_tensor(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>,
    %w_ih: tensor<15x3xf32>, %w_hh: tensor<15x5xf32>,
    %b_ih: tensor<15xf32>, %b_hh: tensor<15xf32>,
    %y0: tensor<8x4x5xf32>, %hn0: tensor<4x5xf32>,
    %g0: tensor<8x4x15xf32>, %p0: tensor<8x4x5xf32>)
    -> (tensor<8x4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x15xf32>, tensor<8x4x5xf32>) {
  %y, %h_n, %gates, %hn = rnn.cell_fwd #rnn.gru block(1)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y0, %hn0) saved(gates %g0, hn_proj %p0)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
        tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>,
        tensor<8x4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x15xf32>, tensor<8x4x5xf32>
      -> tensor<8x4x5xf32>, tensor<4x5xf32>,
         tensor<8x4x15xf32>, tensor<8x4x5xf32>
  return %y, %h_n, %gates, %hn
      : tensor<8x4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x15xf32>, tensor<8x4x5xf32>
}

// -----
// rnn.cell_fwd #rnn.gru block(1) on memrefs.

// CHECK-LABEL: func.func @gru_fwd_memref(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: memref<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<15x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<15x5xf32>,
// CHECK-SAME: [[BI:%[[:alnum:]_]+]]: memref<15xf32>, [[BH:%[[:alnum:]_]+]]: memref<15xf32>,
// CHECK-SAME: [[Y0:%[[:alnum:]_]+]]: memref<8x4x5xf32>, [[HN0:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[G0:%[[:alnum:]_]+]]: memref<8x4x15xf32>, [[P0:%[[:alnum:]_]+]]: memref<8x4x5xf32>)
// CHECK-NEXT: rnn.cell_fwd #rnn.gru block(1) ins([[X]], [[R]]) states([[H0]]) weights([[WI]], [[WH]], [[BI]], [[BH]])
// CHECK-SAME: outs([[Y0]], [[HN0]]) saved(gates [[G0]], hn_proj [[P0]])
// CHECK-SAME: : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<8x4x5xf32>, memref<4x5xf32>, memref<8x4x15xf32>, memref<8x4x5xf32>{{$}}
// CHECK-NEXT: return
func.func @gru_fwd_memref(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>,
    %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>,
    %y0: memref<8x4x5xf32>, %hn0: memref<4x5xf32>,
    %g0: memref<8x4x15xf32>, %p0: memref<8x4x5xf32>) {
  rnn.cell_fwd #rnn.gru block(1)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y0, %hn0) saved(gates %g0, hn_proj %p0)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x15xf32>, memref<8x4x5xf32>
  return
}

// -----
// rnn.cell_bwd #rnn.gru block(1) on tensors: six gradients.

// CHECK-LABEL: func.func @gru_bwd_tensor(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: tensor<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: tensor<15x3xf32>, [[WH:%[[:alnum:]_]+]]: tensor<15x5xf32>,
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: tensor<8x4x5xf32>, [[G:%[[:alnum:]_]+]]: tensor<8x4x15xf32>, [[P:%[[:alnum:]_]+]]: tensor<8x4x5xf32>,
// CHECK-SAME: [[DY:%[[:alnum:]_]+]]: tensor<8x4x5xf32>, [[DH:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[O0:%[[:alnum:]_]+]]: tensor<8x4x3xf32>, [[O1:%[[:alnum:]_]+]]: tensor<4x5xf32>,
// CHECK-SAME: [[O2:%[[:alnum:]_]+]]: tensor<15x3xf32>, [[O3:%[[:alnum:]_]+]]: tensor<15x5xf32>, [[O4:%[[:alnum:]_]+]]: tensor<15xf32>, [[O5:%[[:alnum:]_]+]]: tensor<15xf32>)
// CHECK: [[RES:%[[:alnum:]_]+]]:6 = rnn.cell_bwd #rnn.gru block(1) ins([[X]], [[R]]) states([[H0]]) weights([[WI]], [[WH]])
// CHECK-SAME: saved(y [[Y]], gates [[G]], hn_proj [[P]]) cotangents([[DY]], [[DH]])
// CHECK-SAME: outs([[O0]], [[O1]], [[O2]], [[O3]], [[O4]], [[O5]])
// CHECK-SAME: : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<8x4x5xf32>, tensor<8x4x15xf32>, tensor<8x4x5xf32>, tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
// CHECK-SAME: -> tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
// CHECK: return [[RES]]#0, [[RES]]#1, [[RES]]#2, [[RES]]#3, [[RES]]#4, [[RES]]#5
func.func @gru_bwd_tensor(%x: tensor<8x4x3xf32>, %is_init: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>,
    %w_ih: tensor<15x3xf32>, %w_hh: tensor<15x5xf32>,
    %y: tensor<8x4x5xf32>, %gates: tensor<8x4x15xf32>,
    %hn: tensor<8x4x5xf32>,
    %dy: tensor<8x4x5xf32>, %dhn: tensor<4x5xf32>,
    %o0: tensor<8x4x3xf32>, %o1: tensor<4x5xf32>,
    %o2: tensor<15x3xf32>, %o3: tensor<15x5xf32>, %o4: tensor<15xf32>,
    %o5: tensor<15xf32>)
    -> (tensor<8x4x3xf32>, tensor<4x5xf32>,
        tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>) {
  %gx, %gh0, %gwi, %gwh, %gbi, %gbh = rnn.cell_bwd #rnn.gru block(1)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh)
      saved(y %y, gates %gates, hn_proj %hn)
      cotangents(%dy, %dhn)
      outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
        tensor<15x3xf32>, tensor<15x5xf32>,
        tensor<8x4x5xf32>, tensor<8x4x15xf32>, tensor<8x4x5xf32>,
        tensor<8x4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x3xf32>, tensor<4x5xf32>,
        tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
      -> tensor<8x4x3xf32>, tensor<4x5xf32>,
         tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
  return %gx, %gh0, %gwi, %gwh, %gbi, %gbh
      : tensor<8x4x3xf32>, tensor<4x5xf32>,
        tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
}

// -----
// rnn.cell_bwd #rnn.gru block(1) on memrefs.

// CHECK-LABEL: func.func @gru_bwd_memref(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<8x4x3xf32>, [[R:%[[:alnum:]_]+]]: memref<8x4xi1>,
// CHECK-SAME: [[H0:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[WI:%[[:alnum:]_]+]]: memref<15x3xf32>, [[WH:%[[:alnum:]_]+]]: memref<15x5xf32>,
// CHECK-SAME: [[Y:%[[:alnum:]_]+]]: memref<8x4x5xf32>, [[G:%[[:alnum:]_]+]]: memref<8x4x15xf32>, [[P:%[[:alnum:]_]+]]: memref<8x4x5xf32>,
// CHECK-SAME: [[DY:%[[:alnum:]_]+]]: memref<8x4x5xf32>, [[DH:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[O0:%[[:alnum:]_]+]]: memref<8x4x3xf32>, [[O1:%[[:alnum:]_]+]]: memref<4x5xf32>,
// CHECK-SAME: [[O2:%[[:alnum:]_]+]]: memref<15x3xf32>, [[O3:%[[:alnum:]_]+]]: memref<15x5xf32>, [[O4:%[[:alnum:]_]+]]: memref<15xf32>, [[O5:%[[:alnum:]_]+]]: memref<15xf32>)
// CHECK-NEXT: rnn.cell_bwd #rnn.gru block(1) ins([[X]], [[R]]) states([[H0]]) weights([[WI]], [[WH]])
// CHECK-SAME: saved(y [[Y]], gates [[G]], hn_proj [[P]]) cotangents([[DY]], [[DH]])
// CHECK-SAME: outs([[O0]], [[O1]], [[O2]], [[O3]], [[O4]], [[O5]])
// CHECK-SAME: : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>, memref<15x3xf32>, memref<15x5xf32>, memref<8x4x5xf32>, memref<8x4x15xf32>, memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>, memref<8x4x3xf32>, memref<4x5xf32>, memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>{{$}}
// CHECK-NEXT: return
func.func @gru_bwd_memref(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>,
    %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %y: memref<8x4x5xf32>, %gates: memref<8x4x15xf32>,
    %hn: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>,
    %o0: memref<8x4x3xf32>, %o1: memref<4x5xf32>,
    %o2: memref<15x3xf32>, %o3: memref<15x5xf32>, %o4: memref<15xf32>,
    %o5: memref<15xf32>) {
  rnn.cell_bwd #rnn.gru block(1)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh)
      saved(y %y, gates %gates, hn_proj %hn)
      cotangents(%dy, %dhn)
      outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>,
        memref<8x4x5xf32>, memref<8x4x15xf32>, memref<8x4x5xf32>,
        memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----
// rnn.begin_backward: no operands, no results; a discardable attribute
// survives the round trip.

// CHECK-LABEL: func.func @begin_backward()
// CHECK-NEXT: rnn.begin_backward{{$}}
// CHECK-NEXT: return
// CHECK-LABEL: func.func @begin_backward_tagged()
// CHECK-NEXT: rnn.begin_backward {rnn.tag = 1 : i64}
// CHECK-NEXT: return
func.func @begin_backward() {
  rnn.begin_backward
  return
}
func.func @begin_backward_tagged() {
  rnn.begin_backward {rnn.tag = 1 : i64}
  return
}

// -----
// rnn.dropout: the sequence, its rng and the attributes p and layer.

// CHECK-LABEL: func.func @dropout(
// CHECK-NEXT: %[[Y:.*]] = rnn.dropout %arg0 rng(%arg1) {layer = 1 : i64, p = 2.500000e-01 : f64} : tensor<8x4x5xf32>, tensor<2xi64>
// CHECK-NEXT: rnn.dropout %[[Y]] rng(%arg1) {layer = 0 : i64, p = 0.000000e+00 : f64} : tensor<8x4x5xf32>, tensor<2xi64>
func.func @dropout(%x: tensor<8x4x5xf32>, %rng: tensor<2xi64>)
    -> tensor<8x4x5xf32> {
  %y = rnn.dropout %x rng(%rng) {p = 0.25 : f64, layer = 1 : i64}
      : tensor<8x4x5xf32>, tensor<2xi64>
  %z = rnn.dropout %y rng(%rng) {p = 0.0 : f64, layer = 0 : i64}
      : tensor<8x4x5xf32>, tensor<2xi64>
  return %z : tensor<8x4x5xf32>
}
