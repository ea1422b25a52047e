// RUN: rnn-opt %s -split-input-file -verify-diagnostics

// One case per rule of the rnn verifiers (lib/Dialect/RNNOps.cpp): static
// shapes, ranks, element types, every kind of dimension mismatch (each
// message names the operand in error and the one the size comes from), and
// the form of the kernels. Shapes: T = 2, B = 3, I = 4, H = 5.

// An operand of rnn.lstm must be a ranked tensor (ODS constraint).

func.func @lstm_0(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<*xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op operand #2 must be ranked tensor of any type values, but got 'tensor<*xf32>'}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<*xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// T and B may be dynamic, but a size that equals x's T or B equals it
// exactly: `?` where x's is, the same constant where x's is one.

func.func @lstm_1(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<?x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op batch size ? of h0 != 3 of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<?x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// Results too.

func.func @lstm_2(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op batch size ? of y != 3 of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x?x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// x is [T, B, I]: rank 3.

func.func @lstm_3(%x: tensor<6x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op x must have rank 3 [T, B, I], got 'tensor<6x4xf32>'}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<6x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// is_init is [T, B]: rank 2.

func.func @lstm_4(%x: tensor<2x3x4xf32>, %r: tensor<2x3x1xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op is_init must have rank 2 [T, B], got 'tensor<2x3x1xi1>'}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3x1xi1>, tensor<3x5xf32>,
         tensor<3x5xf32>, tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>,
         tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// Weights are [G*H, I] and [G*H, H]: rank 2.

func.func @lstm_5(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<100xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op weight_hh must have rank 2 [G*H, H], got 'tensor<100xf32>'}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<100xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// Biases are [G*H]: rank 1.

func.func @lstm_6(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<4x5xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op bias_ih must have rank 1 [G*H], got 'tensor<4x5xf32>'}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<4x5xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// x must hold f32 or f64, the element types the lowering computes in.

func.func @lstm_7(%x: tensor<2x3x4xi32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op x must have element type f32 or f64 (the types the lowering computes in), got 'i32'}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xi32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// bf16 throughout: the verifier, not the lowering, refuses it.

func.func @gru_bf16(%x: tensor<2x3x4xbf16>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xbf16>, %wi: tensor<15x4xbf16>, %wh: tensor<15x5xbf16>,
    %bi: tensor<15xbf16>, %bh: tensor<15xbf16>) {
  // expected-error @+1 {{'rnn.gru' op x must have element type f32 or f64 (the types the lowering computes in), got 'bf16'}}
  %y, %hn = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xbf16>, tensor<2x3xi1>, tensor<3x5xbf16>,
         tensor<15x4xbf16>, tensor<15x5xbf16>, tensor<15xbf16>,
         tensor<15xbf16>)
      -> (tensor<2x3x5xbf16>, tensor<3x5xbf16>)
  return
}

// -----

// bf16 is a storage type (saved values and GEMM operands), with x of f32.

func.func @gru_storage_f16(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op storage must be bf16 (with x of f32) or 'f32' of x, got 'f16'}}
  %y, %hn = rnn.gru %x reset %r state(%h0) weights(%wi, %wh, %bi, %bh)
      {storage = f16}
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

func.func @lstm_storage_bf16_f64(%x: tensor<2x3x4xf64>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf64>, %c0: tensor<3x5xf64>, %wi: tensor<20x4xf64>,
    %wh: tensor<20x5xf64>, %bi: tensor<20xf64>, %bh: tensor<20xf64>) {
  // expected-error @+1 {{'rnn.lstm' op storage must be bf16 (with x of f32) or 'f64' of x, got 'bf16'}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh) {storage = bf16}
      : (tensor<2x3x4xf64>, tensor<2x3xi1>, tensor<3x5xf64>, tensor<3x5xf64>,
         tensor<20x4xf64>, tensor<20x5xf64>, tensor<20xf64>, tensor<20xf64>)
      -> (tensor<2x3x5xf64>, tensor<3x5xf64>, tensor<3x5xf64>)
  return
}

// -----

// f16 throughout, likewise.

func.func @lstm_f16(%x: tensor<2x3x4xf16>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf16>, %c0: tensor<3x5xf16>, %wi: tensor<20x4xf16>,
    %wh: tensor<20x5xf16>, %bi: tensor<20xf16>, %bh: tensor<20xf16>) {
  // expected-error @+1 {{'rnn.lstm' op x must have element type f32 or f64 (the types the lowering computes in), got 'f16'}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf16>, tensor<2x3xi1>, tensor<3x5xf16>, tensor<3x5xf16>,
         tensor<20x4xf16>, tensor<20x5xf16>, tensor<20xf16>, tensor<20xf16>)
      -> (tensor<2x3x5xf16>, tensor<3x5xf16>, tensor<3x5xf16>)
  return
}

// -----

// An f64 x with f32 weights: every float operand has x's element type.

func.func @lstm_mixed(%x: tensor<2x3x4xf64>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf64>, %c0: tensor<3x5xf64>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf64>, %bi: tensor<20xf64>, %bh: tensor<20xf64>) {
  // expected-error @+1 {{'rnn.lstm' op element type 'f32' of weight_ih != 'f64' of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf64>, tensor<2x3xi1>, tensor<3x5xf64>, tensor<3x5xf64>,
         tensor<20x4xf32>, tensor<20x5xf64>, tensor<20xf64>, tensor<20xf64>)
      -> (tensor<2x3x5xf64>, tensor<3x5xf64>, tensor<3x5xf64>)
  return
}

// -----

// is_init must be a mask of i1.

func.func @lstm_8(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi8>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op is_init must have element type i1, got 'i8'}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi8>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// Every other operand has the element type of x.

func.func @lstm_9(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf16>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op element type 'f16' of weight_hh != 'f32' of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf16>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// Results have the element type of x.

func.func @lstm_10(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op element type 'f64' of c_n != 'f32' of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf64>)
  return
}

// -----

// The sequence length of is_init comes from x.

func.func @lstm_11(%x: tensor<2x3x4xf32>, %r: tensor<4x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op sequence length 4 of is_init != 2 of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<4x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The sequence length of y comes from x.

func.func @lstm_12(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op sequence length 3 of y != 2 of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<3x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The batch size of is_init comes from x.

func.func @lstm_13(%x: tensor<2x3x4xf32>, %r: tensor<2x2xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op batch size 2 of is_init != 3 of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x2xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The batch size of c0 comes from x.

func.func @lstm_14(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<4x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op batch size 4 of c0 != 3 of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<4x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The input size of weight_ih comes from x.

func.func @lstm_15(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x6xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op input size 6 of weight_ih != 4 of x}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x6xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The hidden size of h0 comes from weight_hh.

func.func @lstm_16(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x6xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op hidden size 6 of h0 != 5 of weight_hh}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x6xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The hidden size of the h_n result comes from weight_hh.

func.func @lstm_17(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op hidden size 4 of h_n != 5 of weight_hh}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x4xf32>, tensor<3x5xf32>)
  return
}

// -----

// weight_ih has 4 * H rows for LSTM.

func.func @lstm_18(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op gate rows 15 of weight_ih != 20 (4 gates x hidden size 5 of weight_hh)}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// weight_hh has 4 * H rows for LSTM (H is its column count).

func.func @lstm_19(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<24x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op gate rows 24 of weight_hh != 20 (4 gates x hidden size 5 of weight_hh)}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<24x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// bias_ih has 4 * H entries for LSTM.

func.func @lstm_20(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<16xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op gate rows 16 of bias_ih != 20 (4 gates x hidden size 5 of weight_hh)}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<16xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// bias_hh has 4 * H entries for LSTM.

func.func @lstm_21(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<21xf32>) {
  // expected-error @+1 {{'rnn.lstm' op gate rows 21 of bias_hh != 20 (4 gates x hidden size 5 of weight_hh)}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<21xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// An LSTM-shaped weight_ih (4 * H rows) is rejected by rnn.gru: 3 gates.

func.func @gru_22(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<20x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op gate rows 20 of weight_ih != 15 (3 gates x hidden size 5 of weight_hh)}}
  %y, %hn = rnn.gru %x reset %r state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// A GRU-shaped weight_ih (3 * H rows) is rejected by rnn.mgu: 2 gates.

func.func @mgu_rows(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<10x5xf32>,
    %bi: tensor<10xf32>, %bh: tensor<10xf32>) {
  // expected-error @+1 {{'rnn.mgu' op gate rows 15 of weight_ih != 10 (2 gates x hidden size 5 of weight_hh)}}
  %y, %hn = rnn.mgu %x reset %r state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<10x5xf32>, tensor<10xf32>, tensor<10xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// An LSTM-shaped weight_hh (4 * H rows) is rejected by rnn.cifg: 3 gates.

func.func @cifg_rows(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.cifg' op gate rows 20 of weight_hh != 15 (3 gates x hidden size 5 of weight_hh)}}
  %y, %hn, %cn = rnn.cifg %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<20x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// weight_hh of rnn.gru has 3 * H rows.

func.func @gru_23(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<20x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op gate rows 20 of weight_hh != 15 (3 gates x hidden size 5 of weight_hh)}}
  %y, %hn = rnn.gru %x reset %r state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<20x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// bias_hh of rnn.gru has 3 * H entries.

func.func @gru_24(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.gru' op gate rows 20 of bias_hh != 15 (3 gates x hidden size 5 of weight_hh)}}
  %y, %hn = rnn.gru %x reset %r state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The hidden size of h0 of rnn.gru comes from weight_hh.

func.func @gru_25(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x4xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op hidden size 4 of h0 != 5 of weight_hh}}
  %y, %hn = rnn.gru %x reset %r state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x4xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The batch size of h_n of rnn.gru comes from x.

func.func @gru_26(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op batch size 2 of h_n != 3 of x}}
  %y, %hn = rnn.gru %x reset %r state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<2x5xf32>)
  return
}

// -----

// The input size of weight_ih of rnn.gru comes from x.

func.func @gru_27(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x3xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op input size 3 of weight_ih != 4 of x}}
  %y, %hn = rnn.gru %x reset %r state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The sequence length of y of rnn.gru comes from x.

func.func @gru_28(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op sequence length 1 of y != 2 of x}}
  %y, %hn = rnn.gru %x reset %r state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<1x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// rnn.gru: element types follow x.

func.func @gru_29(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf16>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op element type 'f16' of bias_ih != 'f32' of x}}
  %y, %hn = rnn.gru %x reset %r state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf16>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// Kernel operands are all tensors or all memrefs, never mixed.

func.func @lstm_fwd_30(%x: memref<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y: tensor<2x3x5xf32>, %hn: tensor<3x5xf32>, %cn: tensor<3x5xf32>,
    %gates: tensor<2x3x20xf32>, %cells: tensor<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op operands must be all tensors or all memrefs}}
  %res:5 = rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn, %cn) saved(gates %gates, cells %cells)
      : memref<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<2x3x20xf32>, tensor<2x3x5xf32>
      -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<2x3x20xf32>, tensor<2x3x5xf32>
  return
}

// -----

// Mixed forms are rejected in the destinations too.

func.func @gru_bwd_31(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %y: tensor<2x3x5xf32>, %gates: tensor<2x3x15xf32>,
    %hnp: tensor<2x3x5xf32>, %dy: tensor<2x3x5xf32>, %dhn: tensor<3x5xf32>,
    %gx: tensor<2x3x4xf32>, %gh0: tensor<3x5xf32>, %gwi: tensor<15x4xf32>,
    %gwh: tensor<15x5xf32>, %gbi: tensor<15xf32>, %gbh: memref<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op operands must be all tensors or all memrefs}}
  %res:6 = rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh)
      saved(y %y, gates %gates, hn_proj %hnp) cotangents(%dy, %dhn)
      outs(%gx, %gh0, %gwi, %gwh, %gbi, %gbh)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<15x4xf32>,
        tensor<15x5xf32>, tensor<2x3x5xf32>, tensor<2x3x15xf32>,
        tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3x5xf32>,
        tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<15x4xf32>,
        tensor<15x5xf32>, tensor<15xf32>, memref<15xf32>
      -> tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<15x4xf32>,
         tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
  return
}

// -----

// Tensor form: one result per destination (5 for rnn.cell_fwd #rnn.lstm block(1)).

func.func @lstm_fwd_32(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y: tensor<2x3x5xf32>, %hn: tensor<3x5xf32>, %cn: tensor<3x5xf32>,
    %gates: tensor<2x3x20xf32>, %cells: tensor<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op expected 5 results in tensor form, got 3}}
  %res:3 = rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn, %cn) saved(gates %gates, cells %cells)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<2x3x20xf32>, tensor<2x3x5xf32>
      -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
  return
}

// -----

// Tensor form of rnn.cell_bwd #rnn.gru block(1): 6 results.

func.func @gru_bwd_33(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %y: tensor<2x3x5xf32>, %gates: tensor<2x3x15xf32>,
    %hnp: tensor<2x3x5xf32>, %dy: tensor<2x3x5xf32>, %dhn: tensor<3x5xf32>,
    %gx: tensor<2x3x4xf32>, %gh0: tensor<3x5xf32>, %gwi: tensor<15x4xf32>,
    %gwh: tensor<15x5xf32>, %gbi: tensor<15xf32>, %gbh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op expected 6 results in tensor form, got 7}}
  %res:7 = rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh)
      saved(y %y, gates %gates, hn_proj %hnp) cotangents(%dy, %dhn)
      outs(%gx, %gh0, %gwi, %gwh, %gbi, %gbh)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<15x4xf32>,
        tensor<15x5xf32>, tensor<2x3x5xf32>, tensor<2x3x15xf32>,
        tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3x5xf32>,
        tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<15x4xf32>,
        tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
      -> tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<15x4xf32>,
         tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>, tensor<15xf32>
  return
}

// -----

// Memref form: no results.

func.func @gru_fwd_34(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<2x3x5xf32>,
    %hn: memref<3x5xf32>, %gates: memref<2x3x15xf32>, %hnp: memref<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op expected 0 results in memref form, got 1}}
  %res = rnn.cell_fwd #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn) saved(gates %gates, hn_proj %hnp)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<2x3x5xf32>,
        memref<3x5xf32>, memref<2x3x15xf32>, memref<2x3x5xf32>
      -> tensor<2x3x5xf32>
  return
}

// -----

// Each result has the type of its destination.

func.func @lstm_bwd_35(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %y: tensor<2x3x5xf32>, %gates: tensor<2x3x20xf32>,
    %cells: tensor<2x3x5xf32>, %dy: tensor<2x3x5xf32>, %dhn: tensor<3x5xf32>,
    %dcn: tensor<3x5xf32>, %gx: tensor<2x3x4xf32>, %gh0: tensor<3x5xf32>,
    %gc0: tensor<3x5xf32>, %gwi: tensor<20x4xf32>, %gwh: tensor<20x5xf32>,
    %gbi: tensor<20xf32>, %gbh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op result #3 type 'tensor<20x5xf32>' != 'tensor<20x4xf32>' of its destination}}
  %res:7 = rnn.cell_bwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh)
      saved(y %y, gates %gates, cells %cells) cotangents(%dy, %dhn, %dcn)
      outs(%gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<2x3x5xf32>,
        tensor<2x3x20xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>,
        tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x3x4xf32>, tensor<3x5xf32>,
        tensor<3x5xf32>, tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>,
        tensor<20xf32>
      -> tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x5xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
  return
}

// -----

// The result of a saved output has its destination's type.

func.func @gru_fwd_36(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %wi: tensor<15x4xf32>, %wh: tensor<15x5xf32>,
    %bi: tensor<15xf32>, %bh: tensor<15xf32>, %y: tensor<2x3x5xf32>,
    %hn: tensor<3x5xf32>, %gates: tensor<2x3x15xf32>, %hnp: tensor<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op result #2 type 'tensor<2x3x5xf32>' != 'tensor<2x3x15xf32>' of its destination}}
  %res:4 = rnn.cell_fwd #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn) saved(gates %gates, hn_proj %hnp)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<15x4xf32>,
        tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>, tensor<2x3x5xf32>,
        tensor<3x5xf32>, tensor<2x3x15xf32>, tensor<2x3x5xf32>
      -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<2x3x5xf32>,
         tensor<2x3x5xf32>
  return
}

// -----

// Saved gates of rnn.cell_fwd #rnn.lstm block(1) are [T, B, 4H].

func.func @lstm_fwd_37(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>,
    %y: tensor<2x3x5xf32>, %hn: tensor<3x5xf32>, %cn: tensor<3x5xf32>,
    %gates: tensor<2x3x15xf32>, %cells: tensor<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op gate rows 15 of gates != 20 (4 gates x hidden size 5 of weight_hh)}}
  %res:5 = rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn, %cn) saved(gates %gates, cells %cells)
      : tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
        tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
        tensor<2x3x15xf32>, tensor<2x3x5xf32>
      -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<2x3x15xf32>, tensor<2x3x5xf32>
  return
}

// -----

// Saved cells of rnn.cell_fwd #rnn.lstm block(1) are [T, B, H] (memref form).

func.func @lstm_fwd_38(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %bi: memref<20xf32>, %bh: memref<20xf32>,
    %y: memref<2x3x5xf32>, %hn: memref<3x5xf32>, %cn: memref<3x5xf32>,
    %gates: memref<2x3x20xf32>, %cells: memref<1x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op sequence length 1 of cells != 2 of x}}
  rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn, %cn) saved(gates %gates, cells %cells)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<2x3x5xf32>, memref<3x5xf32>, memref<3x5xf32>,
        memref<2x3x20xf32>, memref<1x3x5xf32>
  return
}

// -----

// Saved hn_proj of rnn.cell_fwd #rnn.gru block(1) is [T, B, H].

func.func @gru_fwd_39(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<2x3x5xf32>,
    %hn: memref<3x5xf32>, %gates: memref<2x3x15xf32>,
    %hnp: memref<2x3x15xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op hidden size 15 of hn_proj != 5 of weight_hh}}
  rnn.cell_fwd #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn) saved(gates %gates, hn_proj %hnp)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<2x3x5xf32>,
        memref<3x5xf32>, memref<2x3x15xf32>, memref<2x3x15xf32>
  return
}

// -----

// Cotangents have the shape of their primal: grad_c_n is [B, H].

func.func @lstm_bwd_40(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %y: memref<2x3x5xf32>, %gates: memref<2x3x20xf32>,
    %cells: memref<2x3x5xf32>, %dy: memref<2x3x5xf32>, %dhn: memref<3x5xf32>,
    %dcn: memref<5x5xf32>, %gx: memref<2x3x4xf32>, %gh0: memref<3x5xf32>,
    %gc0: memref<3x5xf32>, %gwi: memref<20x4xf32>, %gwh: memref<20x5xf32>,
    %gbi: memref<20xf32>, %gbh: memref<20xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op batch size 5 of grad_c_n != 3 of x}}
  rnn.cell_bwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh)
      saved(y %y, gates %gates, cells %cells) cotangents(%dy, %dhn, %dcn)
      outs(%gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<2x3x5xf32>,
        memref<2x3x20xf32>, memref<2x3x5xf32>, memref<2x3x5xf32>,
        memref<3x5xf32>, memref<5x5xf32>, memref<2x3x4xf32>, memref<3x5xf32>,
        memref<3x5xf32>, memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>,
        memref<20xf32>
  return
}

// -----

// grad_x is [T, B, I].

func.func @lstm_bwd_41(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %y: memref<2x3x5xf32>, %gates: memref<2x3x20xf32>,
    %cells: memref<2x3x5xf32>, %dy: memref<2x3x5xf32>, %dhn: memref<3x5xf32>,
    %dcn: memref<3x5xf32>, %gx: memref<2x3x5xf32>, %gh0: memref<3x5xf32>,
    %gc0: memref<3x5xf32>, %gwi: memref<20x4xf32>, %gwh: memref<20x5xf32>,
    %gbi: memref<20xf32>, %gbh: memref<20xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op input size 5 of grad_x != 4 of x}}
  rnn.cell_bwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh)
      saved(y %y, gates %gates, cells %cells) cotangents(%dy, %dhn, %dcn)
      outs(%gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<2x3x5xf32>,
        memref<2x3x20xf32>, memref<2x3x5xf32>, memref<2x3x5xf32>,
        memref<3x5xf32>, memref<3x5xf32>, memref<2x3x5xf32>, memref<3x5xf32>,
        memref<3x5xf32>, memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>,
        memref<20xf32>
  return
}

// -----

// The saved y read by rnn.cell_bwd #rnn.lstm block(1) is [T, B, H].

func.func @lstm_bwd_42(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %y: memref<2x3x4xf32>, %gates: memref<2x3x20xf32>,
    %cells: memref<2x3x5xf32>, %dy: memref<2x3x5xf32>, %dhn: memref<3x5xf32>,
    %dcn: memref<3x5xf32>, %gx: memref<2x3x4xf32>, %gh0: memref<3x5xf32>,
    %gc0: memref<3x5xf32>, %gwi: memref<20x4xf32>, %gwh: memref<20x5xf32>,
    %gbi: memref<20xf32>, %gbh: memref<20xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op hidden size 4 of y != 5 of weight_hh}}
  rnn.cell_bwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh)
      saved(y %y, gates %gates, cells %cells) cotangents(%dy, %dhn, %dcn)
      outs(%gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<2x3x4xf32>,
        memref<2x3x20xf32>, memref<2x3x5xf32>, memref<2x3x5xf32>,
        memref<3x5xf32>, memref<3x5xf32>, memref<2x3x4xf32>, memref<3x5xf32>,
        memref<3x5xf32>, memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>,
        memref<20xf32>
  return
}

// -----

// grad_bias_hh of rnn.cell_bwd #rnn.gru block(1) has 3 * H entries.

func.func @gru_bwd_43(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %y: memref<2x3x5xf32>, %gates: memref<2x3x15xf32>,
    %hnp: memref<2x3x5xf32>, %dy: memref<2x3x5xf32>, %dhn: memref<3x5xf32>,
    %gx: memref<2x3x4xf32>, %gh0: memref<3x5xf32>, %gwi: memref<15x4xf32>,
    %gwh: memref<15x5xf32>, %gbi: memref<15xf32>, %gbh: memref<20xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op gate rows 20 of grad_bias_hh != 15 (3 gates x hidden size 5 of weight_hh)}}
  rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh)
      saved(y %y, gates %gates, hn_proj %hnp) cotangents(%dy, %dhn)
      outs(%gx, %gh0, %gwi, %gwh, %gbi, %gbh)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<2x3x5xf32>, memref<2x3x15xf32>,
        memref<2x3x5xf32>, memref<2x3x5xf32>, memref<3x5xf32>,
        memref<2x3x4xf32>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<20xf32>
  return
}

// -----

// Saved gates of rnn.cell_bwd #rnn.gru block(1) are [T, B, 3H].

func.func @gru_bwd_44(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %y: memref<2x3x5xf32>, %gates: memref<2x3x20xf32>,
    %hnp: memref<2x3x5xf32>, %dy: memref<2x3x5xf32>, %dhn: memref<3x5xf32>,
    %gx: memref<2x3x4xf32>, %gh0: memref<3x5xf32>, %gwi: memref<15x4xf32>,
    %gwh: memref<15x5xf32>, %gbi: memref<15xf32>, %gbh: memref<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op gate rows 20 of gates != 15 (3 gates x hidden size 5 of weight_hh)}}
  rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh)
      saved(y %y, gates %gates, hn_proj %hnp) cotangents(%dy, %dhn)
      outs(%gx, %gh0, %gwi, %gwh, %gbi, %gbh)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<2x3x5xf32>, memref<2x3x20xf32>,
        memref<2x3x5xf32>, memref<2x3x5xf32>, memref<3x5xf32>,
        memref<2x3x4xf32>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// Element types of kernel operands follow x.

func.func @gru_bwd_45(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %y: memref<2x3x5xf32>, %gates: memref<2x3x15xf32>,
    %hnp: memref<2x3x5xf32>, %dy: memref<2x3x5xf32>, %dhn: memref<3x5xf32>,
    %gx: memref<2x3x4xf32>, %gh0: memref<3x5xf32>, %gwi: memref<15x4xf32>,
    %gwh: memref<15x5xf64>, %gbi: memref<15xf32>, %gbh: memref<15xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op element type 'f64' of grad_weight_hh != 'f32' of x}}
  rnn.cell_bwd #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh)
      saved(y %y, gates %gates, hn_proj %hnp) cotangents(%dy, %dhn)
      outs(%gx, %gh0, %gwi, %gwh, %gbi, %gbh)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<2x3x5xf32>, memref<2x3x15xf32>,
        memref<2x3x5xf32>, memref<2x3x5xf32>, memref<3x5xf32>,
        memref<2x3x4xf32>, memref<3x5xf32>, memref<15x4xf32>,
        memref<15x5xf64>, memref<15xf32>, memref<15xf32>
  return
}

// -----

// The mask of a kernel is i1 as well.

func.func @lstm_fwd_46(%x: memref<2x3x4xf32>, %r: memref<2x3xf32>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %bi: memref<20xf32>, %bh: memref<20xf32>,
    %y: memref<2x3x5xf32>, %hn: memref<3x5xf32>, %cn: memref<3x5xf32>,
    %gates: memref<2x3x20xf32>, %cells: memref<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op is_init must have element type i1, got 'f32'}}
  rnn.cell_fwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn, %cn) saved(gates %gates, cells %cells)
      : memref<2x3x4xf32>, memref<2x3xf32>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<20xf32>, memref<20xf32>,
        memref<2x3x5xf32>, memref<3x5xf32>, memref<3x5xf32>,
        memref<2x3x20xf32>, memref<2x3x5xf32>
  return
}

// -----

// An unranked memref is not a kernel operand (ODS constraint).

func.func @gru_fwd_47(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<*xf32>, %wi: memref<15x4xf32>, %wh: memref<15x5xf32>,
    %bi: memref<15xf32>, %bh: memref<15xf32>, %y: memref<2x3x5xf32>,
    %hn: memref<3x5xf32>, %gates: memref<2x3x15xf32>, %hnp: memref<2x3x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op operand #2 must be variadic of ranked tensor of any type values or memref of any type values, but got 'memref<*xf32>'}}
  rnn.cell_fwd #rnn.gru block(1) ins(%x, %r) states(%h0) weights(%wi, %wh, %bi, %bh)
      outs(%y, %hn) saved(gates %gates, hn_proj %hnp)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<*xf32>, memref<15x4xf32>,
        memref<15x5xf32>, memref<15xf32>, memref<15xf32>, memref<2x3x5xf32>,
        memref<3x5xf32>, memref<2x3x15xf32>, memref<2x3x5xf32>
  return
}

// -----

// Only T and B may be dynamic.

func.func @lstm_bwd_48(%x: memref<2x3x4xf32>, %r: memref<2x3xi1>,
    %h0: memref<3x5xf32>, %c0: memref<3x5xf32>, %wi: memref<20x4xf32>,
    %wh: memref<20x5xf32>, %y: memref<2x3x5xf32>, %gates: memref<2x3x20xf32>,
    %cells: memref<2x3x5xf32>, %dy: memref<2x3x5xf32>, %dhn: memref<3x5xf32>,
    %dcn: memref<3x5xf32>, %gx: memref<2x3x4xf32>, %gh0: memref<3x5xf32>,
    %gc0: memref<3x5xf32>, %gwi: memref<?x4xf32>, %gwh: memref<20x5xf32>,
    %gbi: memref<20xf32>, %gbh: memref<20xf32>) {
  // expected-error @+1 {{'rnn.cell_bwd' op grad_weight_ih of type 'memref<?x4xf32>' has a dynamic gate rows: only the sequence length and batch size may be dynamic}}
  rnn.cell_bwd #rnn.lstm block(1) ins(%x, %r) states(%h0, %c0) weights(%wi, %wh)
      saved(y %y, gates %gates, cells %cells) cotangents(%dy, %dhn, %dcn)
      outs(%gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh)
      : memref<2x3x4xf32>, memref<2x3xi1>, memref<3x5xf32>, memref<3x5xf32>,
        memref<20x4xf32>, memref<20x5xf32>, memref<2x3x5xf32>,
        memref<2x3x20xf32>, memref<2x3x5xf32>, memref<2x3x5xf32>,
        memref<3x5xf32>, memref<3x5xf32>, memref<2x3x4xf32>, memref<3x5xf32>,
        memref<3x5xf32>, memref<?x4xf32>, memref<20x5xf32>, memref<20xf32>,
        memref<20xf32>
  return
}

// -----

// An empty sequence has nothing to compute (and would divide by zero in the
// block and chunk arithmetic of the kernels).

func.func @lstm_empty_sequence(%x: tensor<0x3x4xf32>, %r: tensor<0x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op sequence length T of x must be positive, got 0}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<0x3x4xf32>, tensor<0x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<0x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// So does an empty batch, input or state; the kernels are checked alike.

func.func @gru_fwd_empty_batch(%x: memref<8x0x3xf32>, %is_init: memref<8x0xi1>,
    %h0: memref<0x5xf32>, %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>, %y: memref<8x0x5xf32>,
    %hn: memref<0x5xf32>, %g: memref<8x0x15xf32>, %p: memref<8x0x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op batch size B of x must be positive, got 0}}
  rnn.cell_fwd #rnn.gru block(1) ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<8x0x3xf32>, memref<8x0xi1>, memref<0x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<8x0x5xf32>, memref<0x5xf32>, memref<8x0x15xf32>,
        memref<8x0x5xf32>
  return
}

// -----

func.func @gru_fwd_empty_sequence(%x: memref<0x4x3xf32>, %is_init: memref<0x4xi1>,
    %h0: memref<4x5xf32>, %w_ih: memref<15x3xf32>, %w_hh: memref<15x5xf32>,
    %b_ih: memref<15xf32>, %b_hh: memref<15xf32>, %y: memref<0x4x5xf32>,
    %hn: memref<4x5xf32>, %g: memref<0x4x15xf32>, %p: memref<0x4x5xf32>) {
  // expected-error @+1 {{'rnn.cell_fwd' op sequence length T of x must be positive, got 0}}
  rnn.cell_fwd #rnn.gru block(1) ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<0x4x3xf32>, memref<0x4xi1>, memref<4x5xf32>,
        memref<15x3xf32>, memref<15x5xf32>, memref<15xf32>, memref<15xf32>,
        memref<0x4x5xf32>, memref<4x5xf32>, memref<0x4x15xf32>,
        memref<0x4x5xf32>
  return
}

// -----

func.func @lstm_empty_input(%x: tensor<2x3x0xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x0xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op input size I of x must be positive, got 0}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x0xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x0xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

func.func @lstm_empty_state(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x0xf32>, %c0: tensor<3x0xf32>, %wi: tensor<0x4xf32>,
    %wh: tensor<0x0xf32>, %bi: tensor<0xf32>, %bh: tensor<0xf32>) {
  // expected-error @+1 {{'rnn.lstm' op hidden size H of weight_hh must be positive, got 0}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x0xf32>, tensor<3x0xf32>,
         tensor<0x4xf32>, tensor<0x0xf32>, tensor<0xf32>, tensor<0xf32>)
      -> (tensor<2x3x0xf32>, tensor<3x0xf32>, tensor<3x0xf32>)
  return
}

// -----

// Sizes whose byte counts overflow 64 bits: 4 gates x H = 2^62 rows would
// wrap to 0, and a huge sequence overflows the size of x.

func.func @lstm_huge_hidden(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x4611686018427387904xf32>, %c0: tensor<3x4611686018427387904xf32>,
    %wi: tensor<0x4xf32>, %wh: tensor<0x4611686018427387904xf32>,
    %bi: tensor<0xf32>, %bh: tensor<0xf32>) {
  // expected-error @+1 {{'rnn.lstm' op hidden size 4611686018427387904 of weight_hh is too large}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x4611686018427387904xf32>,
         tensor<3x4611686018427387904xf32>, tensor<0x4xf32>,
         tensor<0x4611686018427387904xf32>, tensor<0xf32>, tensor<0xf32>)
      -> (tensor<2x3x4611686018427387904xf32>, tensor<3x4611686018427387904xf32>,
          tensor<3x4611686018427387904xf32>)
  return
}

// -----

func.func @lstm_huge_sequence(%x: tensor<1152921504606846976x3x4xf32>,
    %r: tensor<1152921504606846976x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %wi: tensor<20x4xf32>,
    %wh: tensor<20x5xf32>, %bi: tensor<20xf32>, %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op x of type 'tensor<1152921504606846976x3x4xf32>' is too large: its size in bytes overflows 64 bits}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<1152921504606846976x3x4xf32>, tensor<1152921504606846976x3xi1>,
         tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<1152921504606846976x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// rnn.dropout: x is a [T, B, H] sequence of static H.

func.func @dropout_rank(%x: tensor<3x5xf32>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op x must be a sequence [T, B, H] with a static H, got 'tensor<3x5xf32>'}}
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 0 : i64}
      : tensor<3x5xf32>, tensor<2xi64>
  return
}

// -----

func.func @dropout_dynamic(%x: tensor<?x?x?xf32>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op x must be a sequence [T, B, H] with a static H, got 'tensor<?x?x?xf32>'}}
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 0 : i64}
      : tensor<?x?x?xf32>, tensor<2xi64>
  return
}

// -----

func.func @dropout_element(%x: tensor<2x3x5xbf16>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op x must have element type f32 or f64 (the types the lowering computes in), got 'bf16'}}
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 0 : i64}
      : tensor<2x3x5xbf16>, tensor<2xi64>
  return
}

// -----

// The result has the type of x (ODS: AllTypesMatch).

func.func @dropout_result(%x: tensor<2x3x5xf32>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op failed to verify that all of {x, y} have same type}}
  %y = "rnn.dropout"(%x, %rng) {p = 0.5 : f64, layer = 0 : i64}
      : (tensor<2x3x5xf32>, tensor<2xi64>) -> tensor<2x3x5xf64>
  return
}

// -----

// rng is [seed, offset]: tensor<2xi64>.

func.func @dropout_rng(%x: tensor<2x3x5xf32>, %rng: tensor<2xi32>) {
  // expected-error @+1 {{'rnn.dropout' op rng must be tensor<2xi64> ([seed, offset]), got 'tensor<2xi32>'}}
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 0 : i64}
      : tensor<2x3x5xf32>, tensor<2xi32>
  return
}

// -----

func.func @dropout_rng_shape(%x: tensor<2x3x5xf32>, %rng: tensor<3xi64>) {
  // expected-error @+1 {{'rnn.dropout' op rng must be tensor<2xi64> ([seed, offset]), got 'tensor<3xi64>'}}
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 0 : i64}
      : tensor<2x3x5xf32>, tensor<3xi64>
  return
}

// -----

// p is a probability below 1.

func.func @dropout_p(%x: tensor<2x3x5xf32>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op p must be in [0, 1), got 1}}
  %y = rnn.dropout %x rng(%rng) {p = 1.0 : f64, layer = 0 : i64}
      : tensor<2x3x5xf32>, tensor<2xi64>
  return
}

// -----

func.func @dropout_negative_p(%x: tensor<2x3x5xf32>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op p must be in [0, 1), got -0.1}}
  %y = rnn.dropout %x rng(%rng) {p = -0.1 : f64, layer = 0 : i64}
      : tensor<2x3x5xf32>, tensor<2xi64>
  return
}

// -----

// layer is a non-negative index (ODS).

func.func @dropout_layer(%x: tensor<2x3x5xf32>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op attribute 'layer' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 0}}
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = -1 : i64}
      : tensor<2x3x5xf32>, tensor<2xi64>
  return
}

// -----

// The Philox counter numbers at most 2^34 elements (2^32 groups of four).

func.func @dropout_size(%x: tensor<65536x65536x5xf32>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op x has 21474836480 elements; dropout numbers at most 2^34}}
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 0 : i64}
      : tensor<65536x65536x5xf32>, tensor<2xi64>
  return
}

// -----

// Reset states: none or one per state of the cell.

func.func @lstm_one_reset_state(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %hr: tensor<3x5xf32>,
    %wi: tensor<20x4xf32>, %wh: tensor<20x5xf32>, %bi: tensor<20xf32>,
    %bh: tensor<20xf32>) {
  // expected-error @+1 {{'rnn.lstm' op expected 0 or 2 reset states for #rnn.lstm (h_reset, c_reset), got 1}}
  %y, %hn, %cn = rnn.lstm %x reset %r to(%hr) state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<3x5xf32>, tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>,
         tensor<20xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// A reset state per step is [T, B, H].

func.func @gru_reset_state_steps(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %hr: tensor<4x3x5xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<15x5xf32>, %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op sequence length 4 of h_reset != 2 of x}}
  %y, %hn = rnn.gru %x reset %r to(%hr) state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<4x3x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// A reset state per batch column is [B, H].

func.func @gru_reset_state_columns(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %hr: tensor<3x6xf32>, %wi: tensor<15x4xf32>,
    %wh: tensor<15x5xf32>, %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op hidden size 6 of h_reset != 5 of weight_hh}}
  %y, %hn = rnn.gru %x reset %r to(%hr) state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x6xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// Any other rank is neither form.

func.func @mgu_reset_state_rank(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %hr: tensor<5xf32>, %wi: tensor<10x4xf32>,
    %wh: tensor<10x5xf32>, %bi: tensor<10xf32>, %bh: tensor<10xf32>) {
  // expected-error @+1 {{'rnn.mgu' op h_reset must have rank 3 [T, B, H], got 'tensor<5xf32>'}}
  %y, %hn = rnn.mgu %x reset %r to(%hr) state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<5xf32>,
         tensor<10x4xf32>, tensor<10x5xf32>, tensor<10xf32>, tensor<10xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// A reset state has the element type of x.

func.func @gru_reset_state_type(%x: tensor<2x3x4xf32>, %r: tensor<2x3xi1>,
    %h0: tensor<3x5xf32>, %hr: tensor<3x5xf64>, %wi: tensor<15x4xf32>,
    %wh: tensor<15x5xf32>, %bi: tensor<15xf32>, %bh: tensor<15xf32>) {
  // expected-error @+1 {{'rnn.gru' op element type 'f64' of h_reset != 'f32' of x}}
  %y, %hn = rnn.gru %x reset %r to(%hr) state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<3x5xf32>, tensor<3x5xf64>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<2x3x5xf32>, tensor<3x5xf32>)
  return
}

// -----

// The Philox counter holds the layer in 32 bits.

func.func @dropout_layer(%x: tensor<2x3x5xf32>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op layer must be below 2^32, got 4294967296}}
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 4294967296 : i64}
      : tensor<2x3x5xf32>, tensor<2xi64>
  return
}

// -----

func.func @dropout_empty(%x: tensor<0x3x5xf32>, %rng: tensor<2xi64>) {
  // expected-error @+1 {{'rnn.dropout' op x must have sizes of at least 1, got 'tensor<0x3x5xf32>'}}
  %y = rnn.dropout %x rng(%rng) {p = 0.5 : f64, layer = 0 : i64}
      : tensor<0x3x5xf32>, tensor<2xi64>
  return
}

// -----

// Each operand's size fits in 64 bits, but the gates the kernels save,
// [T, B, 4*H], do not.

func.func @gates_too_large(%x: tensor<1048576x1048576x1xf32>,
    %r: tensor<1048576x1048576xi1>, %h0: tensor<1048576x524288xf32>,
    %c0: tensor<1048576x524288xf32>, %wi: tensor<2097152x1xf32>,
    %wh: tensor<2097152x524288xf32>, %bi: tensor<2097152xf32>,
    %bh: tensor<2097152xf32>) {
  // expected-error @+1 {{'rnn.lstm' op x of type 'tensor<1048576x1048576x1xf32>' and a hidden size of 524288 make gates [T, B, G*H] whose size in bytes overflows 64 bits}}
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0) weights(%wi, %wh, %bi, %bh)
      : (tensor<1048576x1048576x1xf32>, tensor<1048576x1048576xi1>,
         tensor<1048576x524288xf32>, tensor<1048576x524288xf32>,
         tensor<2097152x1xf32>, tensor<2097152x524288xf32>,
         tensor<2097152xf32>, tensor<2097152xf32>)
      -> (tensor<1048576x1048576x524288xf32>, tensor<1048576x524288xf32>,
          tensor<1048576x524288xf32>)
  return
}

// -----

// rnn.begin_backward divides a function's body into forward and backward:
// once, directly in the body.

func.func @second_boundary() {
  rnn.begin_backward
  // expected-error @+1 {{'rnn.begin_backward' op is a second phase boundary in @second_boundary: a function has one}}
  rnn.begin_backward
  return
}

// -----

func.func @nested_boundary(%c: i1) {
  scf.if %c {
    // expected-error @+1 {{'rnn.begin_backward' op must stand directly in a function's body, which it divides into forward and backward}}
    rnn.begin_backward
  }
  return
}

// -----

// A dropout's probability is an f64.
func.func @dropout_p_f32(%x: tensor<2x3x5xf32>, %rng: tensor<2xi64>) -> tensor<2x3x5xf32> {
  // expected-error @below {{'rnn.dropout' op attribute 'p' failed to satisfy constraint: 64-bit float attribute}}
  %y = rnn.dropout %x rng(%rng) {p = 2.5e-01 : f32, layer = 0 : i64} : tensor<2x3x5xf32>, tensor<2xi64>
  return %y : tensor<2x3x5xf32>
}
