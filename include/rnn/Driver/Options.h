//===- Options.h - the flags rnn-run and rnn-compile share -----*- C++ -*-===//
//
// Both tools compile one model the same way, and take the same flags to
// say which: the model (a file or a preset and its shape and types), the
// remat policy, the target and the schedule. DriverOptions declares them
// once, typed (the enumerated ones parsed by EnumParser, so that the parser
// refuses a bad value and --help lists the good ones), checks what no
// single flag can (a model file and a preset's flags, say), and gives the
// PipelineOptions and the preset's ModelShape they select. Each tool adds
// its own flags in the same category.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DRIVER_OPTIONS_H
#define RNN_DRIVER_OPTIONS_H

#include "rnn/Pipelines/Pipelines.h"
#include "rnn/Support/EnumOption.h"

#include "mlir/Support/LLVM.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace rnn {
namespace driver {

struct ModelShape;

/// What a run computes: a training step (forward and backward) or
/// inference.
enum class Mode { Train, Infer };
/// The element type of a preset's float tensors.
enum class ElementType { F32, F64 };
/// What a step where is_init is set enters in a preset's layers.
enum class ResetTo {
  /// Zeros.
  Zero,
  /// The arguments <state>_reset per step, [T, B, H] per layer.
  Step,
  /// The arguments <state>_reset per batch column, [B, H] per layer.
  Column,
};

llvm::StringRef stringifyMode(Mode mode);

template <typename E>
using EnumFlag =
    llvm::cl::opt<E, /*ExternalStorage=*/false, mlir::rnn::EnumParser<E>>;

/// The flags of both tools that select the model and how it is compiled.
struct DriverOptions {
  explicit DriverOptions(llvm::cl::OptionCategory &category);

  /// The model: a file (the positional argument, and the function --entry
  /// in it) or a preset, a cell of the dialect.
  llvm::cl::opt<std::string> modelFile, preset, entry;
  /// A preset's shape, dropout between its layers, reset target, storage
  /// type (a type name, checked against the element type) and element
  /// type.
  llvm::cl::opt<long long> seqLen, batch, inputSize, hiddenSize, layers;
  llvm::cl::opt<double> dropout;
  EnumFlag<ResetTo> resetTo;
  llvm::cl::opt<std::string> storage;
  EnumFlag<ElementType> dtype;
  /// The compiler's choices.
  llvm::cl::opt<std::string> remat;
  EnumFlag<mlir::rnn::Target> target;
  llvm::cl::opt<long long> gemmRows;
  llvm::cl::opt<bool> wavefront;
  llvm::cl::opt<std::string> cudaToolkit;
  EnumFlag<mlir::rnn::GPUMath> gpuMath;
  /// Compile a preset for every T and B (dynamic in its IR); it runs at
  /// --seq-len and --batch.
  llvm::cl::opt<bool> dynamic;

  bool isCUDA() const { return target == mlir::rnn::Target::CUDA; }

  /// Checks what the parser cannot: one model, a preset that is a cell of
  /// the dialect, positive sizes, no preset flag beside a model file,
  /// --entry with a model file only, the cuda target's flags on the cuda
  /// target only. `error` names the flag.
  mlir::LogicalResult check(mlir::MLIRContext &context,
                            std::string &error) const;

  /// The shape the flags give the preset.
  ModelShape presetShape() const;

  /// Sets the remat policy, target, schedule and CUDA toolkit in `options`
  /// (the toolkit: --cuda-toolkit, else $RNNC_CUDA_TOOLKIT, else the
  /// build's).
  void apply(mlir::rnn::PipelineOptions &options) const;
};

/// Parses the command line (cl::ParseCommandLineOptions) with every
/// refusal one line: the first error, whether an option reported a bad
/// value on stderr or the parser a bad option name, without the tool's name
/// in front. Returns it; empty if the command line parsed.
std::string parseCommandLine(int argc, char **argv, llvm::StringRef overview);

} // namespace driver
} // namespace rnn

#endif // RNN_DRIVER_OPTIONS_H
