//===- Pipelines.cpp - rnn compilation pipelines --------------------------===//
//
//   rnn.lstm / rnn.gru
//     rnn-autodiff (train)         @f_grad with forward and backward kernels
//     rnn-rematerialize (train)    replay kernels for what is not saved
//     rnn-expand-forward           remaining model ops -> forward kernels
//     one-shot-bufferize           whole functions; identity layouts
//     buffer deallocation          ownership-based (upstream)
//     convert-rnn-to-loops         time loops, GEMMs, fused gate math
//     rnn-matmul-to-blas           GEMMs -> runtime sgemm
//     convert-linalg-to-loops      fills and elementwise adds
//     rnn-dse                      buffers nobody reads, with their stores
//     rnn-early-free               frees right after the last use
//     rnn-plan-memory              arena offsets, predicted peak
//     rnn-approximate-math, LLVM lowering (allocations through the runtime)
//
//===----------------------------------------------------------------------===//

#include "rnn/Pipelines/Pipelines.h"

#include "rnn/Conversion/Passes.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

LogicalResult rnn::verifyPipelineOptions(const PipelineOptions &options,
                                         std::string &message) {
  if (failed(parseRematPolicy(options.remat, message)))
    return failure();
  if (options.target != "cpu") {
    message = "unsupported target '" + options.target + "' (expected cpu)";
    return failure();
  }
  return success();
}

void rnn::buildKernelsToLoopsPipeline(OpPassManager &pm, bool memoryReport) {
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // The runtime aligns every allocation; an alignment attribute would make
  // the LLVM lowering over-allocate to align by hand.
  bufferize.bufferAlignment = 0;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);
  // Clones the deallocation inserts (a returned argument, say) become
  // allocations and copies.
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(rnn::createConvertRNNToLoopsPass());
  pm.addPass(rnn::createMatmulToBLASPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(rnn::createRNNDSEPass());
  pm.addNestedPass<func::FuncOp>(rnn::createRNNEarlyFreePass());
  RNNPlanMemoryPassOptions plan;
  plan.report = memoryReport;
  pm.addPass(rnn::createRNNPlanMemoryPass(plan));
}

void rnn::buildLoopsToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(rnn::createApproximateMathPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  // Allocations go through _mlir_memref_to_llvm_alloc/free, which the
  // runtime provides with byte accounting.
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

rnn::PeakPredictor rnn::createPeakPredictor() {
  PeakPredictor predictor;
  predictor.predict = [](ModuleOp module) -> FailureOr<int64_t> {
    OwningOpRef<ModuleOp> copy = module.clone();
    PassManager pm(module.getContext());
    buildToBuffersPipeline(pm, PipelineOptions());
    if (failed(pm.run(*copy)))
      return failure();
    // The training functions are those with a backward phase.
    int64_t peak = 0;
    for (auto func : copy->getOps<func::FuncOp>()) {
      bool trains = false;
      func.walk([&](func::CallOp call) {
        trains |= call.getCallee() == "rnnrt_begin_phase";
      });
      if (auto bytes =
              func->getAttrOfType<IntegerAttr>("rnn.predicted_peak_bytes"))
        if (trains)
          peak = std::max(peak, bytes.getInt());
    }
    return peak;
  };
  predictor.dependentDialects = [](DialectRegistry &registry) {
    OpPassManager pm;
    buildToBuffersPipeline(pm, PipelineOptions());
    pm.getDependentDialects(registry);
  };
  return predictor;
}

void rnn::buildTrainingFunctionPipeline(OpPassManager &pm,
                                        const PipelineOptions &options) {
  pm.addPass(rnn::createRNNAutodiffPass());
  RNNRematerializePassOptions remat;
  remat.policy = options.remat;
  pm.addPass(rnn::createRNNRematerializePass(remat, createPeakPredictor()));
}

void rnn::buildTrainPipeline(OpPassManager &pm,
                             const PipelineOptions &options) {
  buildTrainingFunctionPipeline(pm, options);
  buildInferPipeline(pm, options);
}

void rnn::buildToBuffersPipeline(OpPassManager &pm,
                                 const PipelineOptions &options) {
  pm.addPass(rnn::createRNNExpandForwardPass());
  buildKernelsToLoopsPipeline(pm, options.memoryReport);
}

void rnn::buildInferPipeline(OpPassManager &pm,
                             const PipelineOptions &options) {
  buildToBuffersPipeline(pm, options);
  buildLoopsToLLVMPipeline(pm);
}

/// Registers a pipeline whose options are checked before it is built.
static void registerChecked(
    StringRef arg, StringRef description,
    void (*build)(OpPassManager &, const rnn::PipelineOptions &)) {
  registerPassPipeline(
      arg, description,
      [build](OpPassManager &pm, StringRef optionsStr,
              function_ref<LogicalResult(const Twine &)> errorHandler) {
        rnn::PipelineOptions options;
        if (failed(options.parseFromString(optionsStr)))
          return failure();
        std::string message;
        if (failed(rnn::verifyPipelineOptions(options, message)))
          return errorHandler(message);
        build(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(rnn::PipelineOptions());
      });
}

void rnn::registerPipelines() {
  registerChecked(
      "rnn-train-pipeline",
      "Compile rnn model functions into training functions (LLVM dialect)",
      buildTrainPipeline);
  registerChecked("rnn-infer-pipeline",
                  "Compile rnn model functions for inference (LLVM dialect)",
                  buildInferPipeline);
  PassPipelineRegistration<>(
      "rnn-kernels-to-loops",
      "Bufferize rnn kernels and lower them to loops on buffers",
      [](OpPassManager &pm) { buildKernelsToLoopsPipeline(pm); });
}
