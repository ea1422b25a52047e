// RUN: rnn-opt %s -split-input-file -verify-diagnostics

// The verifier's rules for dynamic T and B (dynamic-shapes.mlir has the
// valid forms).

func.func @input_size(%x: tensor<?x?x?xf32>, %r: tensor<?x?xi1>,
    %h0: tensor<?x5xf32>, %wi: tensor<15x3xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op x of type 'tensor<?x?x?xf32>' has a dynamic input size: only the sequence length and batch size may be dynamic}}
  %y, %hn = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<?x?x?xf32>, tensor<?x?xi1>, tensor<?x5xf32>, tensor<15x3xf32>,
         tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<?x?x5xf32>, tensor<?x5xf32>)
  return
}

// -----

func.func @hidden_size(%x: tensor<?x?x3xf32>, %r: tensor<?x?xi1>,
    %h0: tensor<?x5xf32>, %wi: tensor<15x3xf32>, %wh: tensor<15x?xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op weight_hh of type 'tensor<15x?xf32>' has a dynamic hidden size: only the sequence length and batch size may be dynamic}}
  %y, %hn = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<?x?x3xf32>, tensor<?x?xi1>, tensor<?x5xf32>, tensor<15x3xf32>,
         tensor<15x?xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<?x?x5xf32>, tensor<?x5xf32>)
  return
}

// -----

// A dynamic T in x makes every T dynamic.

func.func @mask_static(%x: tensor<?x4x3xf32>, %r: tensor<8x4xi1>,
    %h0: tensor<4x5xf32>, %wi: tensor<15x3xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op sequence length 8 of is_init != ? of x}}
  %y, %hn = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<?x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<15x3xf32>,
         tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<?x4x5xf32>, tensor<4x5xf32>)
  return
}

// -----

func.func @block_dynamic(%x: memref<?x4x3xf32>, %is_init: memref<?x4xi1>,
    %h0: memref<4x5xf32>, %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>, %y: memref<?x4x5xf32>,
    %hn: memref<4x5xf32>, %g: memref<?x4x15xf32>, %p: memref<?x4x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op has a dynamic sequence length or batch size: its GEMM block is `rows`, not `block`}}
  rnn.cell_fwd #rnn.gru block(2)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<?x4x3xf32>, memref<?x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<?x4x5xf32>, memref<4x5xf32>, memref<?x4x15xf32>,
        memref<?x4x5xf32>
  return
}

// -----

func.func @rows_static(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %hn: memref<4x5xf32>, %g: memref<8x4x15xf32>, %p: memref<8x4x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op has a static shape: its GEMM block is `block`, not `rows`}}
  rnn.cell_fwd #rnn.gru rows(256)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<4x5xf32>, memref<8x4x15xf32>,
        memref<8x4x5xf32>
  return
}

// -----

func.func @both(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %hn: memref<4x5xf32>, %g: memref<8x4x15xf32>, %p: memref<8x4x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op needs exactly one of `block` and `rows`}}
  rnn.cell_fwd #rnn.gru block(2) rows(256)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<4x5xf32>, memref<8x4x15xf32>,
        memref<8x4x5xf32>
  return
}

// -----

func.func @neither(%x: memref<8x4x3xf32>, %is_init: memref<8x4xi1>,
    %h0: memref<4x5xf32>, %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>, %y: memref<8x4x5xf32>,
    %hn: memref<4x5xf32>, %g: memref<8x4x15xf32>, %p: memref<8x4x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op needs exactly one of `block` and `rows`}}
  rnn.cell_fwd #rnn.gru
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<8x4x3xf32>, memref<8x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x4x5xf32>, memref<4x5xf32>, memref<8x4x15xf32>,
        memref<8x4x5xf32>
  return
}

// -----

// A chunked kernel of dynamic shape keeps one checkpoint per chunk a call
// runs (K rounded to whole GEMM blocks): its checkpoint count is `?`.

func.func @chunk_dynamic(%x: memref<?x4x3xf32>, %is_init: memref<?x4xi1>,
    %h0: memref<4x5xf32>, %c0: memref<4x5xf32>, %w_ih: memref<20x3xf32>,
    %w_hh: memref<20x5xf32>, %b_ih: memref<20xf32>, %b_hh: memref<20xf32>,
    %y: memref<?x4x5xf32>, %hn: memref<4x5xf32>, %cn: memref<4x5xf32>,
    %g: memref<?x4x20xf32>, %cells: memref<3x4x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op chunk count 3 of cells != ? (sequence length ? of x in chunks of 2)}}
  rnn.cell_fwd #rnn.lstm rows(256) chunk(2)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn, %cn) saved(gates %g, cells %cells)
      : memref<?x4x3xf32>, memref<?x4xi1>, memref<4x5xf32>, memref<4x5xf32>,
        memref<20x3xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<?x4x5xf32>, memref<4x5xf32>, memref<4x5xf32>,
        memref<?x4x20xf32>, memref<3x4x5xf32>
  return
}

// -----

// With a static T and a dynamic B the count is per call too (the GEMM
// block, hence the chunk, depends on B).

func.func @chunk_dynamic_batch(%x: memref<6x?x3xf32>, %is_init: memref<6x?xi1>,
    %h0: memref<?x5xf32>, %c0: memref<?x5xf32>, %w_ih: memref<20x3xf32>,
    %w_hh: memref<20x5xf32>, %b_ih: memref<20xf32>, %b_hh: memref<20xf32>,
    %y: memref<6x?x5xf32>, %hn: memref<?x5xf32>, %cn: memref<?x5xf32>,
    %g: memref<6x?x20xf32>, %cells: memref<3x?x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op chunk count 3 of cells != ? (sequence length 6 of x in chunks of 2)}}
  rnn.cell_fwd #rnn.lstm rows(256) chunk(2)
      ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn, %cn) saved(gates %g, cells %cells)
      : memref<6x?x3xf32>, memref<6x?xi1>, memref<?x5xf32>, memref<?x5xf32>,
        memref<20x3xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<6x?x5xf32>, memref<?x5xf32>, memref<?x5xf32>,
        memref<6x?x20xf32>, memref<3x?x5xf32>
  return
}

// -----

// T and B are dynamic together (a library of every shape) or static
// together.

func.func @only_t(%x: tensor<?x4x3xf32>, %r: tensor<?x4xi1>,
    %h0: tensor<4x5xf32>, %wi: tensor<15x3xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op x of type 'tensor<?x4x3xf32>' has a dynamic sequence length and a static batch size: the two are dynamic together or static together}}
  %y, %hn = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<?x4x3xf32>, tensor<?x4xi1>, tensor<4x5xf32>, tensor<15x3xf32>,
         tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<?x4x5xf32>, tensor<4x5xf32>)
  return
}

// -----

func.func @only_b(%x: tensor<8x?x3xf32>, %r: tensor<8x?xi1>,
    %h0: tensor<?x5xf32>, %wi: tensor<15x3xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op x of type 'tensor<8x?x3xf32>' has a dynamic batch size and a static sequence length: the two are dynamic together or static together}}
  %y, %hn = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<8x?x3xf32>, tensor<8x?xi1>, tensor<?x5xf32>, tensor<15x3xf32>,
         tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<8x?x5xf32>, tensor<?x5xf32>)
  return
}
