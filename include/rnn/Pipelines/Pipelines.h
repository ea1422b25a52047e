//===- Pipelines.h - rnn compilation pipelines ------------------*- C++ -*-===//
//
// The train and infer pipelines, built by the same functions for rnn-opt
// (as registered pass pipelines) and rnn-run.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_PIPELINES_PIPELINES_H
#define RNN_PIPELINES_PIPELINES_H

#include "rnn/Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace rnn {

struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  PassOptions::Option<std::string> remat{
      *this, "remat",
      llvm::cl::desc("What the forward saves for the backward: none | "
                     "gates | chunk:K | budget:BYTES"),
      llvm::cl::init("none")};
  PassOptions::Option<std::string> target{
      *this, "target", llvm::cl::desc("Target: cpu"), llvm::cl::init("cpu")};
  PassOptions::Option<bool> memoryReport{
      *this, "memory-report",
      llvm::cl::desc("Print the memory plan of every function"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU chip (cuda target)"),
      llvm::cl::init("sm_90")};
};

/// Checks the option values; the message names the bad one.
LogicalResult verifyPipelineOptions(const PipelineOptions &options,
                                    std::string &message);

/// The memory planner as rnn-rematerialize's budget policy uses it: the
/// to-buffers pipeline on a copy of the module; the largest predicted peak
/// of its training functions.
PeakPredictor createPeakPredictor();

/// Model functions -> their training functions `@f_grad`, still on
/// tensors: rnn-autodiff and rnn-rematerialize.
void buildTrainingFunctionPipeline(OpPassManager &pm,
                                   const PipelineOptions &options);
/// Model functions -> their training functions `@f_grad` -> LLVM dialect:
/// the training-function stage followed by the infer pipeline.
void buildTrainPipeline(OpPassManager &pm, const PipelineOptions &options);
/// Every function of rnn ops (model or training) -> LLVM dialect.
void buildInferPipeline(OpPassManager &pm, const PipelineOptions &options);

/// The infer pipeline up to planned buffers (before LLVM): functions then
/// carry `rnn.predicted_peak_bytes`.
void buildToBuffersPipeline(OpPassManager &pm, const PipelineOptions &options);

/// The stages the two pipelines share, exposed for tests and tools:
/// tensor-level kernels -> loops on buffers ...
void buildKernelsToLoopsPipeline(OpPassManager &pm, bool memoryReport = false);
/// ... -> LLVM dialect for the CPU.
void buildLoopsToLLVMPipeline(OpPassManager &pm);

/// Registers rnn-train-pipeline and rnn-infer-pipeline.
void registerPipelines();

} // namespace rnn
} // namespace mlir

#endif // RNN_PIPELINES_PIPELINES_H
