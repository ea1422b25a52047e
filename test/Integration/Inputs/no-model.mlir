// A module without rnn.lstm or rnn.gru: rnn-run finds no model in it
// (model-file.test).

func.func @identity(%x: tensor<3x2x4xf32>) -> tensor<3x2x4xf32> {
  return %x : tensor<3x2x4xf32>
}
