// A GRU of H=10 feeding an LSTM of H=12 (reference-stack.test). The layers'
// states have different shapes, so rnn-run exchanges each as its own array:
// h0_l0 [3, 10], h0_l1 and c0_l1 [3, 12], h_n_l0, h_n_l1, c_n_l1.
func.func @stack(
    %x: tensor<7x3x5xf32> {rnn.name = "x"},
    %is_init: tensor<7x3xi1> {rnn.name = "is_init"},
    %h0_0: tensor<3x10xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %wi0: tensor<30x5xf32> {rnn.name = "weight_ih_l0"},
    %wh0: tensor<30x10xf32> {rnn.name = "weight_hh_l0"},
    %bi0: tensor<30xf32> {rnn.name = "bias_ih_l0"},
    %bh0: tensor<30xf32> {rnn.name = "bias_hh_l0"},
    %h0_1: tensor<3x12xf32> {rnn.name = "h0", rnn.layer = 1 : i64},
    %c0_1: tensor<3x12xf32> {rnn.name = "c0", rnn.layer = 1 : i64},
    %wi1: tensor<48x10xf32> {rnn.name = "weight_ih_l1"},
    %wh1: tensor<48x12xf32> {rnn.name = "weight_hh_l1"},
    %bi1: tensor<48xf32> {rnn.name = "bias_ih_l1"},
    %bh1: tensor<48xf32> {rnn.name = "bias_hh_l1"})
    -> (tensor<7x3x12xf32> {rnn.name = "y"},
        tensor<3x10xf32> {rnn.name = "h_n", rnn.layer = 0 : i64},
        tensor<3x12xf32> {rnn.name = "h_n", rnn.layer = 1 : i64},
        tensor<3x12xf32> {rnn.name = "c_n", rnn.layer = 1 : i64}) {
  %y0, %hn0 = rnn.gru %x reset %is_init state(%h0_0)
      weights(%wi0, %wh0, %bi0, %bh0)
      : (tensor<7x3x5xf32>, tensor<7x3xi1>, tensor<3x10xf32>,
         tensor<30x5xf32>, tensor<30x10xf32>, tensor<30xf32>, tensor<30xf32>)
      -> (tensor<7x3x10xf32>, tensor<3x10xf32>)
  %y1, %hn1, %cn1 = rnn.lstm %y0 reset %is_init state(%h0_1, %c0_1)
      weights(%wi1, %wh1, %bi1, %bh1)
      : (tensor<7x3x10xf32>, tensor<7x3xi1>, tensor<3x12xf32>,
         tensor<3x12xf32>, tensor<48x10xf32>, tensor<48x12xf32>,
         tensor<48xf32>, tensor<48xf32>)
      -> (tensor<7x3x12xf32>, tensor<3x12xf32>, tensor<3x12xf32>)
  return %y1, %hn0, %hn1, %cn1
      : tensor<7x3x12xf32>, tensor<3x10xf32>, tensor<3x12xf32>,
        tensor<3x12xf32>
}
