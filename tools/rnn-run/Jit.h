//===- Jit.h - compile LLVM-dialect modules and call them -------*- C++ -*-===//
//
// Wraps MLIR's ExecutionEngine: optimizes for the host CPU, resolves the
// runtime's entry points (allocation, phases, sgemm, and the GPU's mgpu*
// functions), and calls a function through its packed interface.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TOOLS_RNNRUN_JIT_H
#define RNN_TOOLS_RNNRUN_JIT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace rnn {
namespace run {

class JitFunction {
public:
  /// Compiles `module` (LLVM dialect), resolving `symbols` (the runtime's
  /// entry points) in it, runs its global constructors (which load GPU
  /// kernels) and looks up `name`. `listeners`: register the code with
  /// perf (a jitdump directory per process) and GDB.
  static llvm::Expected<std::unique_ptr<JitFunction>>
  compile(mlir::ModuleOp module, llvm::StringRef name,
          llvm::ArrayRef<std::pair<const char *, void *>> symbols,
          bool listeners = false);
  ~JitFunction();

  /// Calls the function; `packedArgs` points at each scalar argument of the
  /// lowered signature, followed by a pointer to the result storage.
  void invoke(llvm::MutableArrayRef<void *> packedArgs);

private:
  JitFunction() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
};

} // namespace run
} // namespace rnn

#endif // RNN_TOOLS_RNNRUN_JIT_H
