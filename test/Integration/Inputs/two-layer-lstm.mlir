// A 2-layer LSTM model written by hand, for model-file.test: T = 11, B = 6,
// I = 5, H = 7, the shapes of the reference data in ../data. Arguments and
// results are named as PyTorch names the arrays (rnn.name); per-layer states
// carry rnn.layer and are stacked as [L, B, H] in the npz files.

func.func @lstm2(
    %x: tensor<11x6x5xf32> {rnn.name = "x"},
    %is_init: tensor<11x6xi1> {rnn.name = "is_init"},
    %h0_0: tensor<6x7xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %c0_0: tensor<6x7xf32> {rnn.name = "c0", rnn.layer = 0 : i64},
    %w_ih0: tensor<28x5xf32> {rnn.name = "weight_ih_l0"},
    %w_hh0: tensor<28x7xf32> {rnn.name = "weight_hh_l0"},
    %b_ih0: tensor<28xf32> {rnn.name = "bias_ih_l0"},
    %b_hh0: tensor<28xf32> {rnn.name = "bias_hh_l0"},
    %h0_1: tensor<6x7xf32> {rnn.name = "h0", rnn.layer = 1 : i64},
    %c0_1: tensor<6x7xf32> {rnn.name = "c0", rnn.layer = 1 : i64},
    %w_ih1: tensor<28x7xf32> {rnn.name = "weight_ih_l1"},
    %w_hh1: tensor<28x7xf32> {rnn.name = "weight_hh_l1"},
    %b_ih1: tensor<28xf32> {rnn.name = "bias_ih_l1"},
    %b_hh1: tensor<28xf32> {rnn.name = "bias_hh_l1"})
    -> (tensor<11x6x7xf32> {rnn.name = "y"},
        tensor<6x7xf32> {rnn.name = "h_n", rnn.layer = 0 : i64},
        tensor<6x7xf32> {rnn.name = "c_n", rnn.layer = 0 : i64},
        tensor<6x7xf32> {rnn.name = "h_n", rnn.layer = 1 : i64},
        tensor<6x7xf32> {rnn.name = "c_n", rnn.layer = 1 : i64}) {
  %y0, %h_n0, %c_n0 = rnn.lstm %x reset %is_init state(%h0_0, %c0_0)
      weights(%w_ih0, %w_hh0, %b_ih0, %b_hh0)
      : (tensor<11x6x5xf32>, tensor<11x6xi1>, tensor<6x7xf32>, tensor<6x7xf32>,
         tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>)
      -> (tensor<11x6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>)
  %y1, %h_n1, %c_n1 = rnn.lstm %y0 reset %is_init state(%h0_1, %c0_1)
      weights(%w_ih1, %w_hh1, %b_ih1, %b_hh1)
      : (tensor<11x6x7xf32>, tensor<11x6xi1>, tensor<6x7xf32>, tensor<6x7xf32>,
         tensor<28x7xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>)
      -> (tensor<11x6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>)
  return %y1, %h_n0, %c_n0, %h_n1, %c_n1
      : tensor<11x6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>,
        tensor<6x7xf32>, tensor<6x7xf32>
}
