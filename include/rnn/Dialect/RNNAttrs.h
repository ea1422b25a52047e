//===- RNNAttrs.h - rnn cell attributes and interfaces ----------*- C++ -*-===//
//
// The cell interface (CellAttrInterface), the cells #rnn.lstm and #rnn.gru,
// and the model-level layer interface (LayerOpInterface).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNATTRS_H
#define RNN_DIALECT_RNNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

#include "rnn/Dialect/RNNAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "rnn/Dialect/RNNAttrs.h.inc"

#include "rnn/Dialect/RNNOpInterfaces.h.inc"

#endif // RNN_DIALECT_RNNATTRS_H
