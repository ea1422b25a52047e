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
#include "rnn/Dialect/RNNDialect.h"

#define GET_OP_CLASSES
#include "rnn/Dialect/RNNOps.h.inc"

#endif // RNN_DIALECT_RNNOPS_H
