// RUN: rm -rf %t && mkdir -p %t
// RUN: rnn-opt %s --rnn-train-to-buffers-pipeline --rnn-memory-report=- --rnn-memory-report-shape=9x64 -o %t/ir.mlir | FileCheck %s
// RUN: FileCheck %s --check-prefix=IR --input-file=%t/ir.mlir
// RUN: rnn-opt %s --rnn-train-to-buffers-pipeline --rnn-memory-report=%t/plan.json --rnn-memory-report-shape=9x5 -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/plan.json
// RUN: not rnn-opt %s --rnn-train-to-buffers-pipeline --rnn-memory-report=- -o %t/none.mlir 2>&1 | FileCheck %s --check-prefix=NOSHAPE --implicit-check-not="see current operation"
// RUN: not ls %t/none.mlir
// RUN: not rnn-opt %s --rnn-memory-report=- --rnn-memory-report-shape=9x0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not rnn-opt %s --rnn-memory-report=- --rnn-memory-report-shape=9 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not rnn-opt %s --rnn-memory-report-shape=9x5 2>&1 | FileCheck %s --check-prefix=ALONE

// rnn-opt --rnn-memory-report-shape=TxB: the memory plan of a function of
// every T and B (sizes in T, B and the GEMM block's steps P) evaluated at
// one call shape. At T=9, B=64 a block of rows(256) is P=4 steps (the
// smallest power of two with P*B >= 256); the LSTM has H=5, I=3, 4-byte
// floats, so y is 4*5*T*B bytes, the saved gates 4*20*T*B, the block's
// input projection 4*20*B*P. At T=9, B=5 the block is the whole sequence
// (P=T).

// CHECK: memory plan of @lstm at T=9, B=64 (P=4; sizes in T, B and P)
// CHECK: memory plan of @lstm_grad at T=9, B=64 (P=4; sizes in T, B and P)
// CHECK-NEXT: y L0 11520 bytes {{.*}} = 20*T*B
// CHECK: gates L0 46080 bytes {{.*}} = 80*T*B
// CHECK: xproj L0 20480 bytes {{.*}} = 80*B*P

// The module is printed as without a report.
// IR-LABEL: func.func @lstm_grad(

// JSON: "name": "lstm",
// JSON: "shape": {
// JSON-NEXT: "B": 5,
// JSON-NEXT: "P": 9,
// JSON-NEXT: "T": 9
// JSON: "name": "lstm_grad",

// Without a shape the report of such a function is an error naming it, in
// one line, and nothing is written.
// NOSHAPE: error: @lstm is planned for every T and B: its memory report needs a shape to evaluate the plan at (rnn-opt --rnn-memory-report-shape=TxB)
// ZERO: rnn-opt: --rnn-memory-report-shape expects TxB with T and B at least 1 (e.g. 32x64), got '9x0'
// MALFORMED: rnn-opt: --rnn-memory-report-shape expects TxB with T and B at least 1 (e.g. 32x64), got '9'
// ALONE: rnn-opt: --rnn-memory-report-shape needs --rnn-memory-report or --rnn-memory-svg

func.func @lstm(%x: tensor<?x?x3xf32>, %is_init: tensor<?x?xi1>,
                %h0: tensor<?x5xf32>, %c0: tensor<?x5xf32>,
                %w_ih: tensor<20x3xf32>, %w_hh: tensor<20x5xf32>,
                %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>)
    -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<?x?x3xf32>, tensor<?x?xi1>, tensor<?x5xf32>, tensor<?x5xf32>,
         tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
  return %y, %h_n, %c_n : tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>
}
