//===- Pipelines.cpp - rnn compilation pipelines --------------------------===//
//
// The stages, each a builder named by the IR it produces; the train
// pipeline runs them all, the infer pipeline from kernels on:
//
//   model functions (rnn.lstm / rnn.gru / rnn.mgu on tensors)
//   training functions   rnn-autodiff, rnn-rematerialize (train only)
//   kernels              rnn-expand-forward
//   buffers              rnn-check-pipeline-input, one-shot-bufferize
//                        (whole functions, identity layouts), ownership-
//                        based deallocation, buffer-results-to-out-params
//   loops and BLAS calls convert-rnn-to-loops, rnn-matmul-to-blas, linalg
//                        to loops, rnn-dse, rnn-early-free
//   entry points         rnn-split-training (split)
//   memory plan          rnn-plan-memory, rnn-place-in-arena (arena)
//   C ABI                rnn-emit-c-abi (c-abi)
//   target               cpu: see lib/Target/CPU/CPUPipeline.cpp, LLVM
//                        lowering (allocations through the runtime); cuda:
//                        see lib/Target/CUDA/CUDAPipeline.cpp, parallel
//                        loops -> kernels -> PTX, host code -> LLVM calling
//                        the runtime
//
// The cuda target runs the same stages up to the target, with loops of 4
// lanes over whole vectors (vector-width=4 whole-vectors: 128-bit accesses
// where the innermost size allows, scalar elsewhere), GEMMs through
// `rnnrt_cuda_sgemm` (and, under bf16 storage, bf16 operands through
// `rnnrt_cuda_gemm_bf16`) and the linalg ops left after it (fills,
// elementwise adds) as scf.parallel rather than scf.for, so that every
// memory access ends up in a kernel.
//
//===----------------------------------------------------------------------===//

#include "rnn/Pipelines/Pipelines.h"

#include "rnn/Conversion/Passes.h"
#include "rnn/Target/Passes.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Regex.h"

#include <cstdlib>

using namespace mlir;

LogicalResult rnn::verifyPipelineOptions(const PipelineOptions &options,
                                         std::string &message) {
  if (failed(parseRematPolicy(options.remat, message)))
    return failure();
  // Checked for every target: a malformed value is named as such before the
  // cpu target refuses any value other than the default.
  if (!llvm::Regex("^sm_[0-9]{2,3}[af]?$").match(options.chip)) {
    message = "bad GPU chip '" + options.chip +
              "' (expected sm_NN, sm_NNa or sm_NNf, e.g. sm_90)";
    return failure();
  }
  if (!llvm::Regex("^\\+ptx[0-9]{2}(,[+-][[:alnum:]_.]+)*$")
           .match(options.features)) {
    message = "bad PTX features '" + options.features +
              "' (expected +ptxNN, e.g. +ptx80 for PTX ISA 8.0)";
    return failure();
  }
  if (options.gemmRows < 0) {
    message = "gemm-rows must be >= 0 (0: the target's default), got " +
              std::to_string(options.gemmRows);
    return failure();
  }
  if (options.blockSize < 1 || options.blockSize > 1024) {
    message = "block-size must be in [1, 1024], got " +
              std::to_string(options.blockSize);
    return failure();
  }
  if (options.split && !options.outParams) {
    message = "split needs out-params: the forward and backward write "
              "into the caller's buffers";
    return failure();
  }
  if (options.cABI && (!options.outParams || !options.arena)) {
    message = "c-abi needs out-params and arena: an entry point takes the "
              "caller's buffers only";
    return failure();
  }
  if (options.target == Target::CUDA)
    return verifyCUDATarget(options, message);
  if (options.gpuMath != GPUMath::Polynomial) {
    message = "gpu-math=" + stringifyGPUMath(options.gpuMath).str() +
              " needs the cuda target: the CPU computes tanh and exp as "
              "polynomials";
    return failure();
  }
  // The other cuda options would change nothing on the cpu target; a value
  // other than the default is refused rather than ignored. (Compared with
  // the defaults, not by presence: predictPipeline prints every option.)
  PipelineOptions defaults;
  auto refuse = [&](StringRef name, const std::string &value) {
    message = (name + "=" + value + " needs the cuda target").str();
    return failure();
  };
  if (options.chip != defaults.chip)
    return refuse("chip", options.chip);
  if (options.features != defaults.features)
    return refuse("features", options.features);
  if (options.toolkit != defaults.toolkit)
    return refuse("toolkit", options.toolkit);
  if (options.blockSize != defaults.blockSize)
    return refuse("block-size", std::to_string(options.blockSize));
  return success();
}

StringRef rnn::stringifyTarget(Target target) {
  switch (target) {
  case Target::CPU:
    return "cpu";
  case Target::CUDA:
    return "cuda";
  }
  llvm_unreachable("unknown target");
}

StringRef rnn::stringifyGPUMath(GPUMath math) {
  switch (math) {
  case GPUMath::Polynomial:
    return "polynomial";
  case GPUMath::Ex2:
    return "ex2";
  case GPUMath::Approx:
    return "approx";
  }
  llvm_unreachable("unknown gpu-math");
}

int64_t rnn::PipelineOptions::getGemmRows() const {
  if (gemmRows > 0)
    return gemmRows;
  return target == Target::CUDA ? 16384 : 256;
}

std::string rnn::PipelineOptions::defaultCUDAToolkit() {
  return RNN_CUDA_TOOLKIT_ROOT;
}

std::string rnn::PipelineOptions::toolkitFromFlag(StringRef flag) {
  if (!flag.empty())
    return flag.str();
  if (const char *env = std::getenv("RNNC_CUDA_TOOLKIT"); env && *env)
    return env;
  return defaultCUDAToolkit();
}

void rnn::buildBuffersStage(OpPassManager &pm,
                            const PipelineOptions &options) {
  pm.addPass(rnn::createRNNCheckPipelineInputPass());
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
  if (options.outParams) {
    bufferization::BufferResultsToOutParamsPassOptions outParams;
    outParams.hoistStaticAllocs = true;
    // A result of dynamic size (T or B) too: written in place, no copy.
    outParams.hoistDynamicAllocs = true;
    outParams.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  }
}

void rnn::buildLoopsStage(OpPassManager &pm, const PipelineOptions &options) {
  bool cuda = options.target == Target::CUDA;
  ConvertRNNToLoopsPassOptions loops;
  // On the GPU one thread per 4 elements of the innermost dimension, with
  // 128-bit loads and stores where it divides (one per element elsewhere);
  // the CPU default vectorizes by 8. cuBLAS multiplies bf16 operands;
  // OpenBLAS 0.3.21 has no bf16 GEMM.
  if (cuda) {
    loops.vectorWidth = 4;
    loops.wholeVectors = true;
    loops.storageGemm = true;
  }
  // On the CPU the lanes run in program order (rnn-serialize-lanes): no
  // gain, but the same bits as without, which tests the lowering.
  loops.wavefronts = options.wavefront;
  pm.addPass(rnn::createConvertRNNToLoopsPass(loops));
  MatmulToBLASPassOptions blas;
  if (cuda) {
    // cuBLAS's GEMMs: f32 and bf16 operands, no f64.
    blas.callee = "rnnrt_cuda_sgemm";
    blas.calleeF64 = "";
    blas.calleeBF16 = "rnnrt_cuda_gemm_bf16";
  }
  pm.addPass(rnn::createMatmulToBLASPass(blas));
  if (cuda) {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    // Every scf.parallel becomes a kernel: one of a single iteration (a
    // [1, 4] loop of 4 lanes at B = 1, H = 4) must stay a loop, not be
    // folded into host code that would touch device memory.
    pm.addPass(createCanonicalizerPass(
        GreedyRewriteConfig(),
        {"(anonymous namespace)::ParallelOpSingleOrZeroIterationDimsFolder"}));
  } else {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(rnn::createRNNDSEPass());
  pm.addNestedPass<func::FuncOp>(rnn::createRNNEarlyFreePass());
}

void rnn::buildEntryPointsStage(OpPassManager &pm,
                                const PipelineOptions &options) {
  if (options.split)
    pm.addPass(rnn::createRNNSplitTrainingPass());
}

void rnn::buildMemoryPlanStage(OpPassManager &pm,
                               const PipelineOptions &options) {
  pm.addPass(rnn::createRNNPlanMemoryPass());
  if (options.arena)
    pm.addPass(rnn::createRNNPlaceInArenaPass());
  pm.addPass(rnn::createRNNDispatchRematPass());
}

void rnn::buildCABIStage(OpPassManager &pm, const PipelineOptions &options) {
  if (!options.cABI)
    return;
  rnn::EmitCABIPassOptions cABI;
  cABI.callerStream = options.target == Target::CUDA;
  pm.addPass(rnn::createEmitCABIPass(cABI));
}

void rnn::buildKernelsToLoopsPipeline(OpPassManager &pm,
                                      const PipelineOptions &options) {
  buildBuffersStage(pm, options);
  buildLoopsStage(pm, options);
  buildEntryPointsStage(pm, options);
  buildMemoryPlanStage(pm, options);
  buildCABIStage(pm, options);
}

std::string rnn::predictPipeline(const PipelineOptions &options) {
  // The stages after the plan (split, arena, C ABI) leave the planned peak
  // as it is.
  PipelineOptions toBuffers;
  toBuffers.copyOptionValuesFrom(options);
  toBuffers.remat = "none";
  toBuffers.split = false;
  toBuffers.arena = false;
  toBuffers.cABI = false;
  std::string text = "rnn-to-buffers-pipeline";
  llvm::raw_string_ostream os(text);
  toBuffers.print(os);
  return text;
}

void rnn::buildTrainingFunctionsStage(OpPassManager &pm,
                                      const PipelineOptions &options) {
  RNNAutodiffPassOptions autodiff;
  autodiff.gemmRows = options.getGemmRows();
  pm.addPass(rnn::createRNNAutodiffPass(autodiff));
  RNNRematerializePassOptions remat;
  remat.policy = options.remat;
  remat.predictPipeline = predictPipeline(options);
  if (options.wavefront) {
    PipelineOptions sequential;
    sequential.copyOptionValuesFrom(options);
    sequential.wavefront = false;
    remat.fallbackPredictPipeline = predictPipeline(sequential);
  }
  pm.addPass(rnn::createRNNRematerializePass(remat));
}

void rnn::buildKernelsStage(OpPassManager &pm,
                            const PipelineOptions &options) {
  RNNExpandForwardPassOptions expand;
  expand.gemmRows = options.getGemmRows();
  pm.addPass(rnn::createRNNExpandForwardPass(expand));
}

void rnn::buildTargetStage(OpPassManager &pm,
                           const PipelineOptions &options) {
  if (options.target == Target::CUDA) {
    buildLoopsToGPUKernelsPipeline(pm, options);
    buildGPUKernelsToLLVMPipeline(pm, options);
    return;
  }
  buildLoopsToLLVMPipeline(pm);
}

void rnn::buildToBuffersPipeline(OpPassManager &pm,
                                 const PipelineOptions &options) {
  buildKernelsStage(pm, options);
  buildKernelsToLoopsPipeline(pm, options);
}

void rnn::buildInferPipeline(OpPassManager &pm,
                             const PipelineOptions &options) {
  buildToBuffersPipeline(pm, options);
  buildTargetStage(pm, options);
}

void rnn::buildTrainPipeline(OpPassManager &pm,
                             const PipelineOptions &options) {
  buildTrainingFunctionsStage(pm, options);
  buildInferPipeline(pm, options);
}

/// Registers a pipeline whose options are checked before it is built; one
/// that makes no training function (not `training`) takes no remat policy.
static void registerChecked(StringRef arg, StringRef description,
                            void (*build)(OpPassManager &,
                                          const rnn::PipelineOptions &),
                            bool training = false) {
  registerPassPipeline(
      arg, description,
      [build, training,
       arg](OpPassManager &pm, StringRef optionsStr,
            function_ref<LogicalResult(const Twine &)> errorHandler) {
        rnn::PipelineOptions options;
        // A value an option's parser refuses (an unknown target, a number
        // that does not parse) is described on stderr by that parser; an
        // unknown option, in `errors`. Either way the error line names the
        // options.
        std::string errors;
        llvm::raw_string_ostream errorStream(errors);
        if (failed(options.parseFromString(optionsStr, errorStream))) {
          std::string message =
              (arg + ": bad options '" + optionsStr + "'").str();
          if (StringRef detail = StringRef(errors).trim(); !detail.empty())
            message += ": " + detail.str();
          return errorHandler(message);
        }
        std::string message;
        if (failed(rnn::verifyPipelineOptions(options, message)))
          return errorHandler(message);
        if (!training && options.remat != "none")
          return errorHandler(arg + ": remat applies to the training "
                                    "pipelines (rnn-train-pipeline, "
                                    "rnn-train-to-buffers-pipeline); this one "
                                    "makes no training function");
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
      "Compile rnn model functions into training functions (LLVM dialect; "
      "with target=cuda, kernels as PTX in a gpu.binary)",
      buildTrainPipeline, /*training=*/true);
  registerChecked("rnn-infer-pipeline",
                  "Compile rnn model functions for inference (LLVM dialect; "
                  "with target=cuda, kernels as PTX in a gpu.binary)",
                  buildInferPipeline);
  registerChecked(
      "rnn-train-to-buffers-pipeline",
      "The train pipeline up to planned buffers (loops, GEMM calls, the "
      "memory plan), before the target's lowering",
      [](OpPassManager &pm, const rnn::PipelineOptions &options) {
        rnn::buildTrainingFunctionsStage(pm, options);
        rnn::buildToBuffersPipeline(pm, options);
      },
      /*training=*/true);
  registerChecked("rnn-to-buffers-pipeline",
                  "The infer pipeline up to planned buffers: what "
                  "rnn-rematerialize's budget policy predicts peaks with",
                  buildToBuffersPipeline);
  registerChecked("rnn-kernels-to-loops",
                  "Bufferize rnn kernels and lower them to loops on buffers",
                  buildKernelsToLoopsPipeline);
}
