// RUN: rnn-opt %s -split-input-file | rnn-opt -split-input-file | FileCheck %s
// RUN: rnn-opt %s -split-input-file --mlir-print-op-generic | rnn-opt -split-input-file | FileCheck %s
// RUN: rnn-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of the chunked kernels of policy chunk:K, through the custom
// and the generic form: forward kernels with chunk(K) (LSTM cells holding
// one checkpoint per chunk: ceil(T / K) = 3 for T = 8, K = 3) and the
// chunked backward kernels, in tensor and memref form. The GENERIC prefix
// checks that chunk is an attribute of the op.

// CHECK-LABEL: func.func @lstm_chunked(
// CHECK: rnn.cell_fwd #rnn.lstm block(1) chunk(3) ins(
// CHECK-SAME: saved(gates {{%[[:alnum:]_]+}}, cells {{%[[:alnum:]_]+}})
// CHECK-SAME: tensor<8x4x20xf32>, tensor<3x4x5xf32>
// CHECK: rnn.cell_bwd #rnn.lstm block(1) chunk(3) ins(
// CHECK-SAME: saved(y {{%[^,]+}}, cells {{%[^)]+}})
// CHECK-SAME: cotangents(
// GENERIC-LABEL: sym_name = "lstm_chunked"
// GENERIC: "rnn.cell_fwd"({{.*}}) <{block = 1 : i64, cell = #rnn.lstm, chunk = 3 : i64, operandSegmentSizes = array<i32: 1, 1, 2, 0, 4, 3, 2>}>
// GENERIC: "rnn.cell_bwd"({{.*}}) <{block = 1 : i64, cell = #rnn.lstm, chunk = 3 : i64, operandSegmentSizes = array<i32: 1, 1, 2, 0, 4, 2, 3, 7>}>
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

// -----

// CHECK-LABEL: func.func @gru_chunked_memref(
// CHECK: rnn.cell_fwd #rnn.gru block(1) ins(
// CHECK: rnn.cell_bwd #rnn.gru block(1) chunk(2) ins(
// CHECK-SAME: saved(y {{%[[:alnum:]_]+}})
// CHECK-NOT: ->
// GENERIC-LABEL: sym_name = "gru_chunked_memref"
// GENERIC: "rnn.cell_fwd"({{.*}}) <{block = 1 : i64, cell = #rnn.gru, operandSegmentSizes = array<i32: 1, 1, 1, 0, 4, 2, 2>}>
// GENERIC: "rnn.cell_bwd"({{.*}}) <{block = 1 : i64, cell = #rnn.gru, chunk = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 4, 1, 2, 6>}>
func.func @gru_chunked_memref(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %hn: memref<4x5xf32>, %g: memref<8x4x15xf32>, %p: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>, %o0: memref<8x4x3xf32>,
    %o1: memref<4x5xf32>, %o2: memref<15x3xf32>, %o3: memref<15x5xf32>,
    %o4: memref<15xf32>, %o5: memref<15xf32>) {
  rnn.cell_fwd #rnn.gru block(1) ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<4x5xf32>, memref<8x4x15xf32>,
        memref<8x4x5xf32>
  rnn.cell_bwd #rnn.gru block(1) chunk(2)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      saved(y %y) cotangents(%dy, %dhn)
      outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>, memref<15x3xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}
