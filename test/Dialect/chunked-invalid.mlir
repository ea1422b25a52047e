// RUN: rnn-opt %s -split-input-file -verify-diagnostics

// Verifier cases of chunk(K) and block(P): K >= 1 and P >= 1 (attribute
// constraints), K <= T, P <= T, K a multiple of P unless K = T, and the
// checkpointed cells of the LSTM kernels, [ceil(T / K), B, H]. The rules
// shared with the other kernels are covered in invalid.mlir.
// Shapes: T = 8, B = 4, I = 3, H = 5.

// chunk(3) over 8 steps has 3 chunks: cells of 8 checkpoints are rejected.

func.func @fwd_cells_count(%x: tensor<8x4x3xf32>, %r: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>, %c0: tensor<4x5xf32>, %wi: tensor<20x3xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y0: tensor<8x4x5xf32>, %hn0: tensor<4x5xf32>, %cn0: tensor<4x5xf32>,
    %g0: tensor<8x4x20xf32>, %ck0: tensor<8x4x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op chunk count 8 of cells != 3 (sequence length 8 of x in chunks of 3)}}
  %0:5 = rnn.cell_fwd #rnn.lstm block(1) chunk(3) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      outs(%y0, %hn0, %cn0) saved(gates %g0, cells %ck0)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x20xf32>, tensor<8x4x5xf32>
      -> tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
         tensor<8x4x20xf32>, tensor<8x4x5xf32>
  return
}

// -----

// Without chunk, the cells are one per step: 3 are rejected.

func.func @fwd_cells_unchunked(%x: tensor<8x4x3xf32>, %r: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>, %c0: tensor<4x5xf32>, %wi: tensor<20x3xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y0: tensor<8x4x5xf32>, %hn0: tensor<4x5xf32>, %cn0: tensor<4x5xf32>,
    %g0: tensor<8x4x20xf32>, %ck0: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op sequence length 3 of cells != 8 of x}}
  %0:5 = rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      outs(%y0, %hn0, %cn0) saved(gates %g0, cells %ck0)
      : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<8x4x20xf32>, tensor<3x4x5xf32>
      -> tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
         tensor<8x4x20xf32>, tensor<3x4x5xf32>
  return
}

// -----

// A chunk longer than the sequence is rejected (the pass clamps K to T).

func.func @chunk_too_long(%x: memref<8x4x3xf32>, %r: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %wi: memref<15x3xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>, %o0: memref<8x4x3xf32>,
    %o1: memref<4x5xf32>, %o2: memref<15x3xf32>, %o3: memref<15x5xf32>,
    %o4: memref<15xf32>, %o5: memref<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op chunk 9 exceeds the sequence length 8 of x}}
  rnn.cell_bwd #rnn.gru block(1) chunk(9) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) cotangents(%dy, %dhn) outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>, memref<15x3xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// A chunk must be whole GEMM blocks, so that its replay issues the
// forward's GEMMs: chunk 6 is not a multiple of block 4.

func.func @chunk_not_whole_blocks(%x: memref<8x4x3xf32>, %r: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %wi: memref<15x3xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>, %o0: memref<8x4x3xf32>,
    %o1: memref<4x5xf32>, %o2: memref<15x3xf32>, %o3: memref<15x5xf32>,
    %o4: memref<15xf32>, %o5: memref<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op chunk 6 is not a multiple of block 4 (nor the sequence length 8)}}
  rnn.cell_bwd #rnn.gru block(4) chunk(6) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) cotangents(%dy, %dhn) outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>, memref<15x3xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// ... unless it is the whole sequence: block 3 and chunk 8 = T verify.

func.func @chunk_is_sequence(%x: memref<8x4x3xf32>, %r: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %wi: memref<15x3xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>, %o0: memref<8x4x3xf32>,
    %o1: memref<4x5xf32>, %o2: memref<15x3xf32>, %o3: memref<15x5xf32>,
    %o4: memref<15xf32>, %o5: memref<15xf32>) {
  rnn.cell_bwd #rnn.gru block(3) chunk(8) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) cotangents(%dy, %dhn) outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>, memref<15x3xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// A block longer than the sequence is rejected.

func.func @block_too_long(%x: memref<8x4x3xf32>, %r: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %wi: memref<15x3xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>, %o0: memref<8x4x3xf32>,
    %o1: memref<4x5xf32>, %o2: memref<15x3xf32>, %o3: memref<15x5xf32>,
    %o4: memref<15xf32>, %o5: memref<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op block 16 exceeds the sequence length 8 of x}}
  rnn.cell_bwd #rnn.gru block(16) chunk(8) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) cotangents(%dy, %dhn) outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>, memref<15x3xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// block(0) violates the attribute constraint.

func.func @block_zero(%x: memref<8x4x3xf32>, %r: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %wi: memref<15x3xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>, %o0: memref<8x4x3xf32>,
    %o1: memref<4x5xf32>, %o2: memref<15x3xf32>, %o3: memref<15x5xf32>,
    %o4: memref<15xf32>, %o5: memref<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op attribute 'block' failed to satisfy constraint}}
  rnn.cell_bwd #rnn.gru block(0) chunk(8) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) cotangents(%dy, %dhn) outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>, memref<15x3xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// chunk(0) violates the attribute constraint.

func.func @chunk_zero(%x: memref<8x4x3xf32>, %r: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %wi: memref<15x3xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>, %o0: memref<8x4x3xf32>,
    %o1: memref<4x5xf32>, %o2: memref<15x3xf32>, %o3: memref<15x5xf32>,
    %o4: memref<15xf32>, %o5: memref<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op attribute 'chunk' failed to satisfy constraint}}
  rnn.cell_bwd #rnn.gru block(1) chunk(0) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) cotangents(%dy, %dhn) outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>, memref<15x3xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// The checkpoints of the chunked LSTM backward: ceil(8 / 4) = 2, not 3.

func.func @bwd_cells_count(%x: tensor<8x4x3xf32>, %r: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>, %c0: tensor<4x5xf32>, %wi: tensor<20x3xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y: tensor<8x4x5xf32>, %ck: tensor<3x4x5xf32>, %dy: tensor<8x4x5xf32>,
    %dhn: tensor<4x5xf32>, %dcn: tensor<4x5xf32>, %o0: tensor<8x4x3xf32>,
    %o1: tensor<4x5xf32>, %o2: tensor<4x5xf32>, %o3: tensor<20x3xf32>,
    %o4: tensor<20x5xf32>, %o5: tensor<20xf32>, %o6: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op chunk count 3 of cells != 2 (sequence length 8 of x in chunks of 4)}}
  %0:7 = rnn.cell_bwd #rnn.lstm block(1) chunk(4)
      ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      saved(y %y, cells %ck) cotangents(%dy, %dhn, %dcn)
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

// The chunked GRU backward takes its biases: a bias of the wrong size is
// named.

func.func @bwd_bias(%x: memref<8x4x3xf32>, %r: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %wi: memref<15x3xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<20xf32>, %y: memref<8x4x5xf32>,
    %dy: memref<8x4x5xf32>, %dhn: memref<4x5xf32>, %o0: memref<8x4x3xf32>,
    %o1: memref<4x5xf32>, %o2: memref<15x3xf32>, %o3: memref<15x5xf32>,
    %o4: memref<15xf32>, %o5: memref<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op gate rows 20 of bias_hh != 15 (3 gates x hidden size 5 of weight_hh)}}
  rnn.cell_bwd #rnn.gru block(1) chunk(2) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      saved(y %y) cotangents(%dy, %dhn) outs(%o0, %o1, %o2, %o3, %o4, %o5)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<20xf32>,
        memref<8x4x5xf32>, memref<8x4x5xf32>, memref<4x5xf32>,
        memref<8x4x3xf32>, memref<4x5xf32>, memref<15x3xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// The step counts of a dynamic T: rows and chunk are positive too.
func.func @block_steps_rows_zero(%t: index, %b: index) -> index {
  // expected-error @below {{'rnn.block_steps' op attribute 'rows' failed to satisfy constraint}}
  %p = rnn.block_steps %t, %b rows(0)
  return %p : index
}

// -----

func.func @chunk_steps_chunk_zero(%t: index, %p: index) -> index {
  // expected-error @below {{'rnn.chunk_steps' op attribute 'chunk' failed to satisfy constraint}}
  %k = rnn.chunk_steps %t, %p chunk(0)
  return %k : index
}

// -----

// A kernel's rows (the GEMM block's target of a dynamic shape) are positive.
func.func @kernel_rows_zero(%x: memref<?x?x3xf32>, %is_init: memref<?x?xi1>,
    %h0: memref<?x5xf32>, %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>, %y: memref<?x?x5xf32>,
    %hn: memref<?x5xf32>, %g: memref<?x?x15xf32>, %p: memref<?x?x5xf32>) {
  // expected-error @below {{'rnn.cell_fwd' op attribute 'rows' failed to satisfy constraint}}
  rnn.cell_fwd #rnn.gru rows(0)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<?x?x3xf32>, memref<?x?xi1>, memref<?x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<?x?x5xf32>, memref<?x5xf32>, memref<?x?x15xf32>, memref<?x?x5xf32>
  return
}
