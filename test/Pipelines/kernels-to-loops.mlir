// RUN: rnn-opt %s --rnn-expand-forward --rnn-kernels-to-loops | FileCheck %s --check-prefix=DEFAULT
// RUN: rnn-opt %s --rnn-expand-forward --rnn-kernels-to-loops="arena=true" | FileCheck %s --check-prefix=ARENA
// RUN: not rnn-opt %s --rnn-kernels-to-loops="remat=sometimes" 2>&1 | FileCheck %s --check-prefix=BAD

// rnn-kernels-to-loops takes the pipelines' options, checked as theirs
// are: kernels on tensors become planned loops on buffers, whose buffers
// are allocated one by one by default and views of one arena argument with
// `arena=true` (rnn-place-in-arena).

// DEFAULT-LABEL: func.func @gru(
// DEFAULT-NOT: rnn.name = "arena"
// DEFAULT: memref.alloc
// DEFAULT: return

// ARENA-LABEL: func.func @gru(
// ARENA-SAME: {rnn.name = "arena"}
// ARENA-NOT: memref.alloc
// ARENA: memref.view
// ARENA: return

// BAD: unknown remat policy 'sometimes'

func.func @gru(%x: tensor<3x2x3xf32>, %is_init: tensor<3x2xi1>,
    %h0_0: tensor<2x4xf32>, %w_ih0: tensor<12x3xf32>, %w_hh0: tensor<12x4xf32>,
    %b_ih0: tensor<12xf32>, %b_hh0: tensor<12xf32>)
    -> (tensor<3x2x4xf32>, tensor<2x4xf32>) {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0_0)
      weights(%w_ih0, %w_hh0, %b_ih0, %b_hh0)
      : (tensor<3x2x3xf32>, tensor<3x2xi1>, tensor<2x4xf32>,
         tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>)
  return %y, %h_n : tensor<3x2x4xf32>, tensor<2x4xf32>
}
