//===- Model.h - rnn-run models and their signatures ------------*- C++ -*-===//
//
// The preset models rnn-run builds in memory, and the named signature of a
// compiled function: which argument or result is which array.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TOOLS_RNNRUN_MODEL_H
#define RNN_TOOLS_RNNRUN_MODEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace rnn {
namespace run {

enum class Cell { LSTM, GRU };

struct ModelShape {
  Cell cell = Cell::LSTM;
  int64_t seqLen = 32, batch = 64, inputSize = 256, hiddenSize = 256,
          layers = 1;
};

/// Builds `func.func @lstm` (or `@gru`): L chained layers with named
/// arguments x, is_init, h0/c0 (per layer), weight_ih_l{k}, weight_hh_l{k},
/// bias_ih_l{k}, bias_hh_l{k} and results y, h_n/c_n (per layer).
mlir::OwningOpRef<mlir::ModuleOp> buildPresetModel(mlir::MLIRContext &context,
                                                   const ModelShape &shape);

/// One argument or result of a compiled function.
/// Fails, with `error` naming the shape, if the byte size of one of the
/// preset's tensors for `shape` overflows 64 bits.
mlir::LogicalResult checkShapeSizes(const ModelShape &shape,
                                    std::string &error);

struct NamedTensor {
  /// Array name as PyTorch names it (`x`, `weight_ih_l0`, `h0`, ...).
  std::string name;
  /// Layer of a per-layer state (stacked as [L, ...] in npz files), or -1.
  int64_t layer = -1;
  std::vector<int64_t> shape;
  /// Element type is i1 (the reset mask) rather than f32.
  bool isMask = false;

  int64_t numElements() const;
  int64_t bytes() const { return numElements() * (isMask ? 1 : 4); }
};

struct Signature {
  std::vector<NamedTensor> args, results;
};

/// Reads the names (`rnn.name`, `rnn.layer`) and static shapes of the
/// arguments and results of `func`; the message says what is missing.
mlir::LogicalResult readSignature(mlir::func::FuncOp func,
                                  Signature &signature, std::string &error);

/// Whether `func` contains rnn model ops (rnn.lstm, rnn.gru).
bool isModelFunction(mlir::func::FuncOp func);

/// The first function of `module` that contains rnn model ops.
mlir::func::FuncOp findModelFunction(mlir::ModuleOp module);

/// The shape of a model function (T, B, I, H of its first layer and its
/// number of layers) and its cell: "lstm", "gru" or "mixed".
std::string describeModel(mlir::func::FuncOp func, ModelShape &shape);

} // namespace run
} // namespace rnn

#endif // RNN_TOOLS_RNNRUN_MODEL_H
