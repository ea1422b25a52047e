//===- RNNEnums.h - the enumerations of the rnn dialect ---------*- C++ -*-===//
//
// KernelKind, KernelPhase and BufferRole with their stringify and symbolize
// functions, generated from RNNEnums.td.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNENUMS_H
#define RNN_DIALECT_RNNENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "rnn/Dialect/RNNEnums.h.inc"

#endif // RNN_DIALECT_RNNENUMS_H
