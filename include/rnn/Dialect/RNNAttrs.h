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

#include <optional>

namespace mlir {
class OpBuilder;
namespace rnn {
/// Creates the kernel of `cell` for `phase` (fwd, bwd, chunked_bwd,
/// replay) with the operands in the kernel's order: x, is_init, the
/// initial states, weight_ih, weight_hh, the biases (not for bwd), then
/// by phase y, the saved values, the cotangents, and the destinations.
KernelOpInterface createKernel(OpBuilder &builder, Location loc,
                               CellAttrInterface cell, StringRef phase,
                               TypeRange types, ValueRange operands,
                               int64_t block,
                               std::optional<int64_t> chunk = std::nullopt);
} // namespace rnn
} // namespace mlir

#endif // RNN_DIALECT_RNNATTRS_H
