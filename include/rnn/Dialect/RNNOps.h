//===- RNNOps.h - rnn dialect operations ------------------------*- C++ -*-===//
//
// Declares the operations of the rnn dialect.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNOPS_H
#define RNN_DIALECT_RNNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "rnn/Dialect/RNNAttrs.h"
#include "rnn/Dialect/RNNDialect.h"

#define GET_OP_CLASSES
#include "rnn/Dialect/RNNOps.h.inc"

namespace mlir {
namespace rnn {
/// Whether kernel `op` writes its input operand `operandNumber`: the
/// backward kernels overwrite the saved values they read (gates, GRU's
/// hn_proj) with gradients, so that no policy needs a buffer of gate
/// gradients besides the saved values or the replay scratch.
bool isOverwrittenInput(Operation *op, unsigned operandNumber);
} // namespace rnn
} // namespace mlir

#endif // RNN_DIALECT_RNNOPS_H
