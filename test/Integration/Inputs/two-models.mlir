// Two model functions (for errors.test): rnn-run runs one and must not
// silently ignore the other.

func.func @gru(
    %x: tensor<4x2x3xf32> {rnn.name = "x"},
    %is_init: tensor<4x2xi1> {rnn.name = "is_init"},
    %h0: tensor<2x5xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %w_ih: tensor<15x3xf32> {rnn.name = "weight_ih_l0"},
    %w_hh: tensor<15x5xf32> {rnn.name = "weight_hh_l0"},
    %b_ih: tensor<15xf32> {rnn.name = "bias_ih_l0"},
    %b_hh: tensor<15xf32> {rnn.name = "bias_hh_l0"})
    -> (tensor<4x2x5xf32> {rnn.name = "y"},
        tensor<2x5xf32> {rnn.name = "h_n", rnn.layer = 0 : i64}) {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<4x2x3xf32>, tensor<4x2xi1>, tensor<2x5xf32>,
         tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<4x2x5xf32>, tensor<2x5xf32>)
  return %y, %h_n : tensor<4x2x5xf32>, tensor<2x5xf32>
}

func.func @gru_again(
    %x: tensor<4x2x3xf32> {rnn.name = "x"},
    %is_init: tensor<4x2xi1> {rnn.name = "is_init"},
    %h0: tensor<2x5xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %w_ih: tensor<15x3xf32> {rnn.name = "weight_ih_l0"},
    %w_hh: tensor<15x5xf32> {rnn.name = "weight_hh_l0"},
    %b_ih: tensor<15xf32> {rnn.name = "bias_ih_l0"},
    %b_hh: tensor<15xf32> {rnn.name = "bias_hh_l0"})
    -> (tensor<4x2x5xf32> {rnn.name = "y"},
        tensor<2x5xf32> {rnn.name = "h_n", rnn.layer = 0 : i64}) {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<4x2x3xf32>, tensor<4x2xi1>, tensor<2x5xf32>,
         tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
      -> (tensor<4x2x5xf32>, tensor<2x5xf32>)
  return %y, %h_n : tensor<4x2x5xf32>, tensor<2x5xf32>
}
