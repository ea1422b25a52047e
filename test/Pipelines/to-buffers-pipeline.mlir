// RUN: rnn-opt %s --rnn-to-buffers-pipeline | FileCheck %s
// RUN: rnn-opt %s --rnn-to-buffers-pipeline | FileCheck %s --check-prefix=BUFFERS
// RUN: rnn-opt %s --rnn-to-buffers-pipeline | %python -c "import re, sys; a = re.findall(r'memref[.]alloc[(][)].*', sys.stdin.read()); assert a and all('rnn.offset' in x for x in a), a"

// rnn-to-buffers-pipeline is rnn-infer-pipeline up to planned buffers: the
// model function on memrefs, its kernels as loops and GEMM calls, every
// buffer placed in the arena (rnn.offset) with the arena and the peak on
// the function, and nothing lowered to the LLVM dialect yet. No training
// function.

// CHECK-LABEL: func.func @gru(%{{[^:]+}}: memref<3x2x3xf32>
// CHECK-SAME: rnn.arena_bytes = {{[0-9]+}} : i64
// CHECK-SAME: rnn.predicted_peak_bytes = {{[0-9]+}} : i64
// CHECK: memref.alloc() {{.*}}rnn.offset = 0 : i64
// CHECK: call @rnnrt_sgemm(
// CHECK: scf.for
// CHECK: memref.dealloc
// CHECK: return

// Every allocation is planned; no tensor and no LLVM dialect remain.
// BUFFERS-NOT: tensor<
// BUFFERS-NOT: llvm.func
// BUFFERS-NOT: @gru_grad

func.func @gru(%x: tensor<3x2x3xf32>, %is_init: tensor<3x2xi1>,
    %h0_0: tensor<2x4xf32>, %w_ih0: tensor<12x3xf32>, %w_hh0: tensor<12x4xf32>,
    %b_ih0: tensor<12xf32>, %b_hh0: tensor<12xf32>,
    %h0_1: tensor<2x4xf32>, %w_ih1: tensor<12x4xf32>, %w_hh1: tensor<12x4xf32>,
    %b_ih1: tensor<12xf32>, %b_hh1: tensor<12xf32>)
    -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y0, %h_n0 = rnn.gru %x reset %is_init state(%h0_0)
      weights(%w_ih0, %w_hh0, %b_ih0, %b_hh0)
      : (tensor<3x2x3xf32>, tensor<3x2xi1>, tensor<2x4xf32>,
         tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>)
  %y1, %h_n1 = rnn.gru %y0 reset %is_init state(%h0_1)
      weights(%w_ih1, %w_hh1, %b_ih1, %b_hh1)
      : (tensor<3x2x4xf32>, tensor<3x2xi1>, tensor<2x4xf32>,
         tensor<12x4xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>)
  return %y1, %h_n0, %h_n1 : tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
