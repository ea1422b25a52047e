//===- RNNDialect.h - rnn dialect -------------------------------*- C++ -*-===//
//
// Declares the rnn dialect.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNDIALECT_H
#define RNN_DIALECT_RNNDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "rnn/Dialect/RNNDialect.h.inc"

namespace mlir {
class DialectRegistry;
class FunctionOpInterface;
namespace rnn {
/// Whether `func`, as an entry point, writes its argument `index`, by the
/// argument's `rnn.name` (bufferRole in RNNRoles.h). Entry points refuse
/// such a buffer that overlaps another argument (rnn-emit-c-abi's extents,
/// rnnrt_cuda_enter), which rnn-read-only-kernel-args relies on.
bool writesArgument(FunctionOpInterface func, unsigned index);

/// Registers the bufferization model of the rnn kernels (destination style:
/// outputs bufferize in place, inputs are only read).
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace rnn
} // namespace mlir

#endif // RNN_DIALECT_RNNDIALECT_H
