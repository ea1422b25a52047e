//===- RunSession.h - one run of rnn-run, stage by stage -------*- C++ -*-===//
//
// rnn-run's flags (the drivers' shared ones and its own) and the session
// that main drives: the model loaded, compiled to planned buffers whose
// memory is checked against what the machine has, JIT-compiled for the
// run target, called for the warm-up and measured steps, its outputs
// written and its figures reported.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TOOLS_RNNRUN_RUNSESSION_H
#define RNN_TOOLS_RNNRUN_RUNSESSION_H

#include "Jit.h"
#include "RunTarget.h"

#include "rnn/Driver/Compile.h"
#include "rnn/Driver/Model.h"
#include "rnn/Driver/Options.h"
#include "rnn/Driver/Report.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"

#include <optional>

namespace rnn {
namespace run {

/// What to print instead of running.
enum class Emit { Run, MLIR, PTX };

/// rnn-run's flags (rnn-run.cpp declares them and checks them together).
struct RunFlags {
  explicit RunFlags(llvm::cl::OptionCategory &category);

  driver::DriverOptions driver;
  driver::EnumFlag<driver::Mode> mode;
  driver::EnumFlag<Emit> emit;
  llvm::cl::opt<double> resetProb;
  llvm::cl::opt<bool> tf32, arena, noArena, noCudaGraph, json, jitListeners;
  llvm::cl::opt<std::string> cublas, inputs, outputs, memoryReport, memorySVG;
  llvm::cl::opt<unsigned long long> seed, maxMemory;
  llvm::cl::opt<long long> iters, warmup, threads;

  bool train() const { return mode == driver::Mode::Train; }
  /// Whether the buffers come from the planned arena: asked for, or on the
  /// GPU unless refused or the shape is dynamic (no static plan).
  bool useArena() const {
    return arena || (driver.isCUDA() && !noArena && !driver.dynamic);
  }
  /// Whether steps replay a CUDA graph of one step (from the arena).
  bool cudaGraph() const {
    return driver.isCUDA() && !noCudaGraph && useArena();
  }
};

/// One run, stage by stage: main calls the stages in order; each exits
/// with fail() on an error.
class RunSession {
public:
  RunSession(const mlir::DialectRegistry &registry, const RunFlags &flags);
  /// --inputs, if given.
  void readInputs();
  /// The model function: from the model file, or built from the preset.
  void loadModel();
  /// --emit=mlir: prints the model.
  int printModel();
  /// The training function @f_grad, in train mode; the entry point alone
  /// is kept.
  void buildTrainingFunction();
  /// --emit=ptx: prints the kernels of the entry point.
  int printKernels();
  /// The pipeline up to the memory plan; the plan's figures, the reports,
  /// and the memory the step needs checked against what there is.
  void planMemory();
  /// The target's code, JIT-compiled, and the arguments of the step.
  void compile();
  /// The steps: warmup, then the measured ones.
  void runSteps();
  /// --outputs, per-layer states stacked as [L, ...] where they stack.
  void writeOutputs();
  /// The figures, as JSON or text.
  int printFigures();

private:
  /// The preset's shape: from the flags, or from the arrays in --inputs.
  driver::ModelShape presetShape() const;
  /// Refuses, before anything is allocated, a step whose inputs and planned
  /// peak exceed --max-memory or the memory available.
  void checkMemoryLimit() const;
  /// Runs `pm` on the module; exits if it fails.
  void runPipeline(mlir::PassManager &pm);

  const RunFlags &flags;
  mlir::MLIRContext context;
  mlir::rnn::PipelineOptions pipelineOptions;
  std::unique_ptr<RunTarget> runner;
  std::optional<npz::ArrayMap> inputs;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  driver::ModelShape shape;
  mlir::func::FuncOp model, entry;
  std::string entryName;
  driver::Signature signature;
  /// The report, filled in stage by stage.
  driver::RunReport report;
  /// The figures of each phase: rnn-plan-memory's for a training function,
  /// the one phase of an inference function. In an arena the step holds one
  /// allocation, and the runtime cannot tell the phases apart.
  std::optional<mlir::rnn::PhaseBytes> plannedPhases;

  std::unique_ptr<JitFunction> function;
  std::vector<std::vector<char>> argData;
  // Packed arguments: one pointer per descriptor word, then the results.
  std::vector<std::vector<int64_t>> argWords;
  std::vector<void *> packed;
  // The arena, the last argument under --arena: a 1-D byte buffer.
  void *arenaBuffer = nullptr;
  std::vector<int64_t> arenaWords;
  std::vector<int64_t> resultStorage;

  // What one step's host code issues, counted on the first step (eager on
  // every target; a replayed graph repeats the work of the captured one).
  struct StepCounts {
    size_t launches = 0, gemms = 0, syncs = 0, allocations = 0;
  };
  StepCounts countsNow();
  std::optional<StepCounts> perStep;
  runtime::MemoryFigures last;
  std::vector<std::vector<char>> resultValues;
};

} // namespace run
} // namespace rnn

#endif // RNN_TOOLS_RNNRUN_RUNSESSION_H
