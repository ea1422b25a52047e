// A dropout of the input sequence, returned besides the LSTM's output, so
// that its mask can be read: check-dropout-mask.py. 64 * 128 * 128 =
// 2^20 elements, p = 0.3, layer 2.
func.func @masked(
    %x: tensor<64x128x128xf32> {rnn.name = "x"},
    %is_init: tensor<64x128xi1> {rnn.name = "is_init"},
    %rng: tensor<2xi64> {rnn.name = "rng"},
    %h0: tensor<128x1xf32> {rnn.name = "h0"},
    %c0: tensor<128x1xf32> {rnn.name = "c0"},
    %w_ih: tensor<4x128xf32> {rnn.name = "weight_ih_l0"},
    %w_hh: tensor<4x1xf32> {rnn.name = "weight_hh_l0"},
    %b_ih: tensor<4xf32> {rnn.name = "bias_ih_l0"},
    %b_hh: tensor<4xf32> {rnn.name = "bias_hh_l0"})
    -> (tensor<64x128x1xf32> {rnn.name = "y"},
        tensor<64x128x128xf32> {rnn.name = "x_dropped"}) {
  %xd = rnn.dropout %x rng(%rng) {p = 3.000000e-01 : f64, layer = 2 : i64}
      : tensor<64x128x128xf32>, tensor<2xi64>
  %y, %h_n, %c_n = rnn.lstm %xd reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<64x128x128xf32>, tensor<64x128xi1>, tensor<128x1xf32>,
         tensor<128x1xf32>, tensor<4x128xf32>, tensor<4x1xf32>,
         tensor<4xf32>, tensor<4xf32>)
      -> (tensor<64x128x1xf32>, tensor<128x1xf32>, tensor<128x1xf32>)
  return %y, %xd : tensor<64x128x1xf32>, tensor<64x128x128xf32>
}
