// Model files whose signatures rnn-run must refuse (errors.test), split by
// split-file: each would make one array overwrite or misread another, or
// take an argument it never reads.

//--- same-layer.mlir
// Two results named h_n for layer 0.
func.func @gru(
    %x: tensor<3x2x4xf32> {rnn.name = "x"},
    %is_init: tensor<3x2xi1> {rnn.name = "is_init"},
    %h0: tensor<2x5xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %wi: tensor<15x4xf32> {rnn.name = "weight_ih_l0"},
    %wh: tensor<15x5xf32> {rnn.name = "weight_hh_l0"},
    %bi: tensor<15xf32> {rnn.name = "bias_ih_l0"},
    %bh: tensor<15xf32> {rnn.name = "bias_hh_l0"})
    -> (tensor<2x5xf32> {rnn.name = "h_n", rnn.layer = 0 : i64},
        tensor<2x5xf32> {rnn.name = "h_n", rnn.layer = 0 : i64}) {
  %y, %hn = rnn.gru %x reset %is_init state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<3x2x4xf32>, tensor<3x2xi1>, tensor<2x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<3x2x5xf32>, tensor<2x5xf32>)
  return %hn, %hn : tensor<2x5xf32>, tensor<2x5xf32>
}

//--- negative-layer.mlir
func.func @gru(
    %x: tensor<3x2x4xf32> {rnn.name = "x"},
    %is_init: tensor<3x2xi1> {rnn.name = "is_init"},
    %h0: tensor<2x5xf32> {rnn.name = "h0", rnn.layer = -1 : i64},
    %wi: tensor<15x4xf32> {rnn.name = "weight_ih_l0"},
    %wh: tensor<15x5xf32> {rnn.name = "weight_hh_l0"},
    %bi: tensor<15xf32> {rnn.name = "bias_ih_l0"},
    %bh: tensor<15xf32> {rnn.name = "bias_hh_l0"})
    -> (tensor<3x2x5xf32> {rnn.name = "y"}) {
  %y, %hn = rnn.gru %x reset %is_init state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<3x2x4xf32>, tensor<3x2xi1>, tensor<2x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<3x2x5xf32>, tensor<2x5xf32>)
  return %y : tensor<3x2x5xf32>
}

//--- unused-argument.mlir
func.func @gru(
    %x: tensor<3x2x4xf32> {rnn.name = "x"},
    %is_init: tensor<3x2xi1> {rnn.name = "is_init"},
    %h0: tensor<2x5xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %wi: tensor<15x4xf32> {rnn.name = "weight_ih_l0"},
    %wh: tensor<15x5xf32> {rnn.name = "weight_hh_l0"},
    %bi: tensor<15xf32> {rnn.name = "bias_ih_l0"},
    %bh: tensor<15xf32> {rnn.name = "bias_hh_l0"},
    %extra: tensor<7xf32> {rnn.name = "extra"})
    -> (tensor<3x2x5xf32> {rnn.name = "y"}) {
  %y, %hn = rnn.gru %x reset %is_init state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<3x2x4xf32>, tensor<3x2xi1>, tensor<2x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<3x2x5xf32>, tensor<2x5xf32>)
  return %y : tensor<3x2x5xf32>
}

//--- array-collision.mlir
// h0 of rnn.layer 1 alone is exchanged as array 'h0_l1', the name of the
// other argument.
func.func @gru(
    %x: tensor<3x2x4xf32> {rnn.name = "x"},
    %is_init: tensor<3x2xi1> {rnn.name = "is_init"},
    %h0: tensor<2x5xf32> {rnn.name = "h0_l1"},
    %wi: tensor<15x4xf32> {rnn.name = "weight_ih_l0"},
    %wh: tensor<15x5xf32> {rnn.name = "weight_hh_l0"},
    %bi: tensor<15xf32> {rnn.name = "bias_ih_l0"},
    %bh: tensor<15xf32> {rnn.name = "bias_hh_l0"},
    %h1: tensor<2x5xf32> {rnn.name = "h0", rnn.layer = 1 : i64},
    %wi1: tensor<15x5xf32> {rnn.name = "weight_ih_l1"},
    %wh1: tensor<15x5xf32> {rnn.name = "weight_hh_l1"},
    %bi1: tensor<15xf32> {rnn.name = "bias_ih_l1"},
    %bh1: tensor<15xf32> {rnn.name = "bias_hh_l1"})
    -> (tensor<3x2x5xf32> {rnn.name = "y"}) {
  %y, %hn = rnn.gru %x reset %is_init state(%h0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<3x2x4xf32>, tensor<3x2xi1>, tensor<2x5xf32>,
         tensor<15x4xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<3x2x5xf32>, tensor<2x5xf32>)
  %y1, %hn1 = rnn.gru %y reset %is_init state(%h1)
      weights(%wi1, %wh1, %bi1, %bh1)
      : (tensor<3x2x5xf32>, tensor<3x2xi1>, tensor<2x5xf32>,
         tensor<15x5xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<3x2x5xf32>, tensor<2x5xf32>)
  return %y1 : tensor<3x2x5xf32>
}
