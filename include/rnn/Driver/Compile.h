//===- Compile.h - the compile stages both tools share ---------*- C++ -*-===//
//
// Both tools compile a loaded model (Model.h) the same way: its training
// functions, then the stages up to planned buffers with C-ABI or JIT entry
// points (lib/Pipelines), whose memory plan each entry point carries and
// readEntryPlan gives back; the target stage is then each tool's own (a JIT
// or a shared library), both compiling each function inside its entry
// point (inlineIntoEntryPoints).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DRIVER_COMPILE_H
#define RNN_DRIVER_COMPILE_H

#include "rnn/Analysis/MemoryReport.h"
#include "rnn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace rnn {
namespace driver {

struct ModelShape;

/// One value of the saved region's layout (rnn.saved).
struct SavedRegion {
  std::string role;
  int64_t offset = 0, bytes = 0;
};

/// The memory plan of a compiled entry point, as rnn-plan-memory and
/// rnn-split-training leave it on the function.
struct EntryPlan {
  /// The predicted peak; the arena's size (arena=1); the saved region's
  /// size (the forward entry point of a split training function).
  std::optional<int64_t> peakBytes, arenaBytes, savedBytes;
  /// The peaks of each phase and the saved bytes between them: a training
  /// function's, or an inference function's one phase {peak, 0, 0}.
  std::optional<mlir::rnn::PhaseBytes> phases;
  /// The saved region's layout, in offset order (the forward entry point
  /// of a split training function; it may be empty).
  std::optional<std::vector<SavedRegion>> saved;
  /// A symbolic saved region's layout: each value's role and its size in
  /// T and B (SizeExpr::str), in order; each starts at the sum of the
  /// sizes before it, each rounded up to `savedAlignment`.
  std::vector<std::pair<std::string, std::string>> savedSizes;
  int64_t savedAlignment = 0;
  /// The remat plan the compiler chose (a budget's choice), if recorded.
  std::optional<std::string> remat;
  /// Whether the budget fits only with the layers in sequence, so that the
  /// compiler formed no wavefront (rnn.sequential_layers).
  bool sequentialLayers = false;
  /// A function for every T and B: its plan's expressions in T, B and P
  /// (peak, phases, saved; SymbolicPlan), by name, and P at the shape.
  std::vector<std::pair<std::string, std::string>> expressions;
  std::optional<int64_t> blockSteps;
  /// Under a budget for every T and B (rnn-dispatch-remat): the budget,
  /// and at `shape` why no plan fits it (the smallest feasible budget), if
  /// none does; the figures above are then those of no plan.
  std::optional<int64_t> rematBudget;
  std::string rematError;
};

/// The plan of `entry`, a training function if `train`. A function
/// compiled for every T and B (a symbolic plan) has its figures evaluated
/// at `shape`'s T and B, if given; one that chooses a remat variant per
/// call has those of the variant it chooses there.
EntryPlan readEntryPlan(mlir::func::FuncOp entry, bool train,
                        const ModelShape *shape = nullptr);

/// Before the LLVM optimizer runs: gives each compiled function whose only
/// callers are its entry point, the function named `prefix` + its name
/// (rnnc_ for rnn-compile's C entry points, _mlir_ for the JIT's packed
/// ones), internal linkage and alwaysinline, so that it is compiled inside
/// its entry point. Otherwise the entry point passes every memref argument
/// as its descriptor's fields (1,400 arguments for a 16-layer GRU's
/// training function), and LLVM's DAG combiner takes time quadratic in the
/// arguments of one call, merging the stores that pass them: with L = 16,
/// 3.9 s of rnn-compile's 9.1 s.
void inlineIntoEntryPoints(llvm::Module &module, llvm::StringRef prefix);

/// Before LLVM's code generator runs: leaves out its loop strength
/// reduction (LLVM's `-disable-lsr`, unless the command line gives it),
/// 40% of the code generator's time on rnnc's kernels (every cell, static
/// and dynamic shapes) for no measurable difference in their speed: the
/// GEMMs dominate, and the elementwise loops address their vectors from
/// the induction variable either way (bench/compile_time.py measures
/// both). It changes no arithmetic.
void skipLoopStrengthReduction();

/// Builds the training function of each model function of `module`
/// (`@f_grad` for `@f`). Failure: `error` is the first error's line (empty
/// if there was none).
mlir::LogicalResult
buildTrainingFunctions(mlir::ModuleOp module,
                       const mlir::rnn::PipelineOptions &options,
                       std::string &error);

/// What compileToBuffers did.
enum class CompileStatus {
  Compiled,
  /// A pass failed: `error` is the first error's line (empty if there was
  /// none).
  Failed,
  /// The program compiled, but the memory report or SVG could not be
  /// written: `error` says which and why.
  ReportFailed,
};

/// Compiles `module` to planned buffers (buildToBuffersPipeline), writing
/// the memory report and SVG where the file names are not empty (a plan
/// in closed form at `shape`).
CompileStatus
compileToBuffers(mlir::ModuleOp module,
                 const mlir::rnn::PipelineOptions &options,
                 const std::string &memoryReportFile,
                 const std::string &memorySVGFile, std::string &error,
                 std::optional<mlir::rnn::ReportShape> shape = std::nullopt);

} // namespace driver
} // namespace rnn

#endif // RNN_DRIVER_COMPILE_H
