//===- RuntimeFunctions.h - declarations of the runtime's entry points ----===//
//
// The lowerings call functions of the rnnc runtime (rnnrt_begin_phase, the
// GEMM entry points, rnnrt_cuda_enter/leave) by name. A module may already
// declare one; anything else of that name would take the calls, so it is an
// error naming the symbol rather than IR that fails to verify later.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_CONVERSION_RUNTIMEFUNCTIONS_H
#define RNN_CONVERSION_RUNTIMEFUNCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace rnn {
/// Whether C can call a function named `name`: [A-Za-z_][A-Za-z0-9_]*
/// (the runtime's functions and the entry points rnn-emit-c-abi names).
inline bool isCIdentifier(StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// The private declaration of the runtime function `name` of `type` in
/// `module`: an existing external func.func of that type, or a new one at the
/// start of the module. A symbol `name` that is not such a declaration is an
/// error on it that names `name`, `type` and `caller` (the pass or lowering
/// whose calls need it); the result is then failure.
FailureOr<func::FuncOp> declareRuntimeFunction(ModuleOp module, StringRef name,
                                               FunctionType type,
                                               StringRef caller);
} // namespace rnn
} // namespace mlir

#endif // RNN_CONVERSION_RUNTIMEFUNCTIONS_H
