//===- Diagnostics.h - errors on whole functions and modules ----*- C++ -*-===//
//
// Errors and remarks about a function or a module as a whole (a pass option, a
// function that cannot be split, a report that cannot be written), at its
// location. Operation::emitError attaches the operation, printed in full,
// to every error and remark while the context prints ops on diagnostics
// (rnn-opt's default): for a function or module that is the whole IR, pages of
// it after a one-line message. These emit the same message without it.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_SUPPORT_DIAGNOSTICS_H
#define RNN_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace mlir {
namespace rnn {

/// `op->emitError(message)` without the op.
inline InFlightDiagnostic emitErrorAt(Operation *op,
                                      const llvm::Twine &message = {}) {
  return mlir::emitError(op->getLoc(), message);
}

/// `op->emitRemark(message)` without the op.
inline InFlightDiagnostic emitRemarkAt(Operation *op,
                                       const llvm::Twine &message = {}) {
  return mlir::emitRemark(op->getLoc(), message);
}

/// `op->emitOpError(message)` ("'func.func' op ..."), without the op.
inline InFlightDiagnostic emitOpErrorAt(Operation *op,
                                        const llvm::Twine &message = {}) {
  InFlightDiagnostic diag = mlir::emitError(op->getLoc());
  diag << "'" << op->getName() << "' op " << message;
  return diag;
}

} // namespace rnn
} // namespace mlir

#endif // RNN_SUPPORT_DIAGNOSTICS_H
