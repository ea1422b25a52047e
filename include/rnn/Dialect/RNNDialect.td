//===- RNNDialect.td - rnn dialect definition --------------*- tablegen -*-===//
//
// The rnn dialect: multi-layer recurrent networks (LSTM, GRU) over time with
// a per-step state reset mask, and the forward/backward kernels that the
// compiler derives from them for training.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNDIALECT_TD
#define RNN_DIALECT_RNNDIALECT_TD

include "mlir/IR/OpBase.td"

def RNN_Dialect : Dialect {
  let name = "rnn";
  let summary = "Recurrent networks with mid-sequence state resets";
  let description = [{
    One op per recurrent layer, time-major. `rnn.lstm` and `rnn.gru` are the
    model level: value semantics, PyTorch weight layout and gate order, and
    the reset mask `is_init` (state entering step t is zero where
    `is_init[t, b]`). `rnn-autodiff` turns them into destination-style
    kernels generic over the cell (`rnn.cell_fwd #rnn.lstm`, `rnn.cell_bwd`,
    `rnn.cell_replay`) whose extra outputs are
    the values the backward reads, each with a named role, so that later
    passes decide what is saved and what is recomputed.
  }];
  let cppNamespace = "::mlir::rnn";
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Registers the cell attributes (RNNAttrs.cpp).
    void registerAttributes();
  }];
}

#endif // RNN_DIALECT_RNNDIALECT_TD
