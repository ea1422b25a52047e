//===- RNNAttrs.td - rnn cell attributes -------------------*- tablegen -*-===//
//
// The cell attributes, #rnn.lstm, #rnn.gru, ... (RNNCells.td, where each
// cell is defined with its model op): each implements CellAttrInterface
// (RNNInterfaces.td) from its record.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNATTRS_TD
#define RNN_DIALECT_RNNATTRS_TD

include "rnn/Dialect/RNNDialect.td"
include "rnn/Dialect/RNNInterfaces.td"
include "mlir/IR/AttrTypeBase.td"

include "rnn/Dialect/RNNCells.td"

#endif // RNN_DIALECT_RNNATTRS_TD
