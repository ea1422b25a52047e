//===- Manifest.h - the manifest of a compiled library ---------*- C++ -*-===//
//
// manifest.json tells a caller of librnnc_model.so what it holds: the model
// (cell, states, shape), how it was compiled (target, remat policy and the
// plan chosen, schedule) and each entry point's symbol, buffers in the
// order the entry point takes them (name, role, layer, shape, dtype) and
// memory plan (arena, predicted peak, saved region and its layout), and
// what the entry points compute beyond their arguments: each layer's
// storage type and each dropout's probability. Under a
// budget for every T and B each call chooses its plan (remat_plan "per
// call"), among `remat_variants`.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TOOLS_RNNCOMPILE_MANIFEST_H
#define RNN_TOOLS_RNNCOMPILE_MANIFEST_H

#include "rnn/Driver/Compile.h"
#include "rnn/Driver/Model.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace rnn {
namespace compile {

struct Manifest {
  /// The model function's name, its cell(s) (or "mixed") and shape.
  std::string model, cell;
  driver::ModelShape shape;
  /// The target, the remat policy asked for and the plan chosen.
  std::string target, remat, rematPlan;
  int64_t gemmRows = 0;
  /// Whether the library's layers run as a wavefront.
  bool wavefront = false;
  /// On the cuda target: the chip and PTX features the PTX is for, and how
  /// its kernels compute tanh and exp (gpu-math).
  struct CUDA {
    std::string chip, features, math;
  };
  std::optional<CUDA> cuda;

  /// Reads from the model function what its arguments do not say: each
  /// layer's storage type and each rnn.dropout's probability and site, in
  /// program order. Fails on a storage type the manifest has no name for.
  llvm::Error describeModel(mlir::func::FuncOp model);

  /// Adds the entry point `func` (`kind`: infer, train, fwd or bwd), its
  /// buffers and memory plan; its remat plan and schedule are the
  /// library's. Fails on an argument whose dtype or shape (a dynamic size
  /// other than T and B) the manifest has no name for.
  llvm::Error addEntry(llvm::StringRef kind, mlir::func::FuncOp func,
                       const driver::EntryPlan &plan);

  /// Adds `variant`, a training function's remat variant under a budget
  /// for every T and B: its plan, its peak (the candidates of a maximum,
  /// each a polynomial in T, B, P, K and N) and what P, K and N follow from
  /// (the GEMM block's rows, the chunk asked for).
  void addRematVariant(mlir::func::FuncOp variant);

  /// The manifest as JSON text.
  std::string render(mlir::MLIRContext &context) const;

private:
  llvm::json::Array storage, dropout;
  llvm::json::Object entries;
  llvm::json::Array rematVariants;
};

} // namespace compile
} // namespace rnn

#endif // RNN_TOOLS_RNNCOMPILE_MANIFEST_H
