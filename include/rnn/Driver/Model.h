//===- Model.h - the tools' models and their signatures ---------*- C++ -*-===//
//
// The preset models rnn-run and rnn-compile build in memory, model files and
// the choice of their model function, the named signature of a compiled
// function (which argument or result is which array), and running a
// pipeline, each with its first error as the message.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DRIVER_MODEL_H
#define RNN_DRIVER_MODEL_H

#include "rnn/Driver/Options.h"
#include "rnn/Support/Npz.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace mlir {
class PassManager;
} // namespace mlir

namespace rnn {
namespace driver {

struct ModelShape {
  /// A cell of the rnn dialect (checkCellName).
  std::string cell = "lstm";
  /// The element type of every float tensor: f64 rather than f32.
  bool f64 = false;
  /// Dropout probability between layers (rnn.dropout keyed by an `rng`
  /// argument when positive).
  double dropout = 0.0;
  /// What a reset step enters (`--reset-to`).
  ResetTo resetTo = ResetTo::Zero;
  /// The storage type of the saved values that are not states and of the
  /// GEMM operands (`--storage`), a type's name: empty for the element
  /// type, or bf16.
  std::string storage;
  int64_t seqLen = 32, batch = 64, inputSize = 256, hiddenSize = 256,
          layers = 1;
  /// T and B are dynamic (`?`) in the model's IR, one compiled program
  /// serving every shape; seqLen and batch are the shape it runs at.
  bool dynamic = false;
};

/// Fails, with `error` listing the dialect's cells, unless `name` is one.
mlir::LogicalResult checkCellName(mlir::MLIRContext &context,
                                  llvm::StringRef name, std::string &error);

/// Fails, with `error` saying why, if `target` cannot run a model of
/// `shape`'s element type (f64 on the cuda target).
mlir::LogicalResult checkTarget(const ModelShape &shape,
                                mlir::rnn::Target target, std::string &error);

/// The most layers a model may have. The compiled program grows with the
/// layer count (every layer has its own kernels, loops and buffers; a
/// 32-layer LSTM step takes about 35 s and 0.3 GB to compile, 128 layers
/// 140 s and 1 GB), so a model beyond it is refused before its IR is
/// built rather than running the compiler out of memory.
constexpr int64_t kMaxLayers = 64;

/// Checks the preset's layer count (at most kMaxLayers), dropout (in
/// [0, 1), and between layers only: with one layer it would drop nothing,
/// as in torch.nn.LSTM) and storage type (the element type, or bf16 with
/// f32); `error` names the flag.
mlir::LogicalResult checkPresetOptions(mlir::MLIRContext &context,
                                       const ModelShape &shape,
                                       std::string &error);

/// Builds `func.func @<cell>` (`@lstm`, ...): L chained layers (the model
/// op `rnn.<cell>`) with named arguments x, is_init, a dropout's rng, the
/// initial states per layer (h0, and c0 for the LSTM: each state name +
/// `0`), with --reset-to=step|column the reset states per layer (h_reset,
/// c_reset), weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}
/// and results y and the final states per layer (h_n, c_n). The cell must
/// exist (checkCellName).
mlir::OwningOpRef<mlir::ModuleOp> buildPresetModel(mlir::MLIRContext &context,
                                                   const ModelShape &shape);

/// Fails, with `error` naming the shape, if the byte size of one of the
/// preset's tensors for `shape` overflows 64 bits.
mlir::LogicalResult checkShapeSizes(mlir::MLIRContext &context,
                                    const ModelShape &shape,
                                    std::string &error);

/// One argument or result of a compiled function.
struct NamedTensor {
  /// Array name as PyTorch names it (`x`, `weight_ih_l0`, `h0`, ...).
  std::string name;
  /// Layer of a per-layer state, or -1.
  int64_t layer = -1;
  /// The npz array that holds it: `name`, or `name_l<layer>` for a layer of
  /// a name whose layers cannot be stacked (see readSignature).
  std::string array;
  /// Number of layers stacked as [L, ...] in `array` (this tensor is slice
  /// `layer`), or 0 if `array` is this tensor alone.
  int64_t stacked = 0;
  std::vector<int64_t> shape;
  /// Element type: F32 or F64 (floats), Bool (i1: the reset mask) or I64
  /// (a dropout's [seed, offset]).
  npz::DType dtype = npz::DType::F32;

  bool isFloat() const {
    return dtype == npz::DType::F32 || dtype == npz::DType::F64;
  }
  int64_t numElements() const;
  int64_t elementBytes() const { return npz::dtypeSize(dtype); }
  int64_t bytes() const { return numElements() * elementBytes(); }
};

struct Signature {
  std::vector<NamedTensor> args, results;
};

/// Reads the names (`rnn.name`, `rnn.layer`) and static shapes of the
/// arguments and results of `func`; the message says what is missing.
/// The tensors of one name are one array: a single tensor, or the layers
/// 0..L-1 of one shape stacked as [L, ...] (as PyTorch stacks h0 and h_n).
/// Any other set of layers of a name (different shapes, as when the layers
/// have different hidden sizes, or not numbered from 0) is one array per
/// layer, `name_l<k>` (as PyTorch names per-layer weights).
///
/// A dynamic size is refused without `shape`; with one, it is shape's T
/// (dimension 0 of a sequence [T, B, X] or of is_init [T, B]) or B
/// (dimension 1 of those, dimension 0 of a state [B, H]).
mlir::LogicalResult readSignature(mlir::func::FuncOp func, Signature &signature,
                                  std::string &error,
                                  const ModelShape *shape = nullptr);

/// Whether `func` contains rnn model ops (rnn.lstm, rnn.gru).
bool isModelFunction(mlir::func::FuncOp func);

/// The first function of `module` that contains rnn model ops.
mlir::func::FuncOp findModelFunction(mlir::ModuleOp module);

/// Parses the model file `path`; null with `error` set to the parser's first
/// line (or "cannot read PATH") on failure.
mlir::OwningOpRef<mlir::ModuleOp> parseModelFile(mlir::MLIRContext &context,
                                                 const std::string &path,
                                                 std::string &error);

/// Makes `model` what inference runs: its dropouts become the identity
/// (inference drops nothing, as rnn-expand-forward has it), and an argument
/// only they read (the rng) is erased, so that no caller has to give an
/// array inference never reads.
void removeDropouts(mlir::func::FuncOp model);

/// The model function of `module`: @`entry` if given (it must contain rnn
/// model ops), else its only function with them. Null with `error` set if
/// there is none, or several and no `entry`. (Also fails if the function
/// has more than kMaxLayers layer ops.)
mlir::func::FuncOp selectModelFunction(mlir::ModuleOp module,
                                       const std::string &entry,
                                       const std::string &modelFile,
                                       std::string &error);

/// A tool's model: the module, the model function in it and its cell(s).
struct LoadedModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  std::string cellName;
};

/// Loads what rnn-run and rnn-compile compile: the module of `modelFile` if
/// given, else the preset model of `shape` (its sizes positive and within
/// what the machine holds, its options consistent: checked first); in it
/// the model function `entry` selects (selectModelFunction), whose
/// signature reads (readSignature). `shape` is then the model's
/// (describeModel). Failure: `error` names what is wrong.
mlir::LogicalResult loadModel(mlir::MLIRContext &context,
                              const std::string &modelFile,
                              const std::string &entry, ModelShape &shape,
                              LoadedModel &model, std::string &error);

/// Runs `pm` on `module`; `error` is then the first line of the first error
/// diagnostic (empty if there was none: a pipeline may fail without one).
mlir::LogicalResult runPipeline(mlir::PassManager &pm, mlir::ModuleOp module,
                                std::string &error);

/// The shape of a model function (T, B, I, H of its first layer and its
/// number of layers) and its cell: "lstm", "gru" or "mixed".
std::string describeModel(mlir::func::FuncOp func, ModelShape &shape);

/// The GEMM flops of one step of `func`'s layers: per layer
/// 2 T B G H (I + H) forward, three times that with the backward (grad_x,
/// grad_weight_ih, grad_weight_hh and the recurrent gradient, each as large
/// as one forward GEMM); a dynamic T or B is `shape`'s.
int64_t gemmFlops(mlir::func::FuncOp func, bool train,
                  const ModelShape &shape);

} // namespace driver
} // namespace rnn

#endif // RNN_DRIVER_MODEL_H
