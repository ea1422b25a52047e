//===- RNNAttrs.td - rnn cell attributes -------------------*- tablegen -*-===//
//
// The cells, #rnn.lstm, #rnn.gru and #rnn.mgu: each implements CellAttrInterface
// (RNNInterfaces.td) in RNNAttrs.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNATTRS_TD
#define RNN_DIALECT_RNNATTRS_TD

include "rnn/Dialect/RNNDialect.td"
include "rnn/Dialect/RNNInterfaces.td"
include "mlir/IR/AttrTypeBase.td"

class RNN_CellAttr<string name, string attrMnemonic>
    : AttrDef<RNN_Dialect, name,
              [DeclareAttrInterfaceMethods<RNN_CellAttrInterface>]> {
  let mnemonic = attrMnemonic;
}

def RNN_LSTMCellAttr : RNN_CellAttr<"LSTMCell", "lstm"> {
  let summary = "the LSTM cell (PyTorch's gate order i, f, g, o)";
  let description = [{
    Four gates, states `h` and `c`. The forward saves the gates and the cell
    states `cells` per step; a replay recomputes the gates from the saved
    states, and a chunked forward keeps `cells` at chunk entries only.
  }];
}

def RNN_GRUCellAttr : RNN_CellAttr<"GRUCell", "gru"> {
  let summary = "the GRU cell (PyTorch's gate order r, z, n)";
  let description = [{
    Three gates, state `h`. The forward saves the gates and `hn_proj`
    (`W_hn h + b_hn`, which the backward of `n` reads) per step; a replay
    recomputes both from the saved outputs, and nothing is checkpointed
    besides `y`.
  }];
}

def RNN_MGUCellAttr : RNN_CellAttr<"MGUCell", "mgu"> {
  let summary = "the minimal gated unit (gate order f, n; see rnn.mgu)";
  let description = [{
    Two gates, state `h`. Like the GRU's, the forward saves the gates and
    `hn_proj` (`W_hn h + b_hn`) per step, a replay recomputes both from the
    saved outputs, and nothing is checkpointed besides `y`.
  }];
}

#endif // RNN_DIALECT_RNNATTRS_TD
