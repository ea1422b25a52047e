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
class DialectRegistry;
class OpPassManager;
class Operation;

namespace rnn {

struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  PassOptions::Option<std::string> remat{
      *this, "remat",
      llvm::cl::desc("What the forward saves for the backward: none | "
                     "gates | chunk:K | budget:BYTES"),
      llvm::cl::init("none")};
  PassOptions::Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Target: cpu (LLVM for the host) | cuda (kernels as "
                     "PTX, host code calling the runtime)"),
      llvm::cl::init("cpu")};
  PassOptions::Option<std::string> memoryReport{
      *this, "memory-report",
      llvm::cl::desc("Write the memory plan of every function: - (stdout, "
                     "text) or a file (JSON if it ends in .json, else text)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> memorySVG{
      *this, "memory-svg",
      llvm::cl::desc("Write an SVG picture of the memory plans to this file"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU chip (cuda target), sm_NN[a|f]"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (cuda target): +ptxNN, the PTX ISA "
                     "version of the emitted PTX"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit directory (cuda target), where "
                     "nvvm/libdevice is found"),
      llvm::cl::init(defaultCUDAToolkit())};
  PassOptions::Option<bool> arena{
      *this, "arena",
      llvm::cl::desc("Place the planned buffers in one arena passed as the "
                     "last argument (rnn-place-in-arena): a step allocates "
                     "nothing"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("Results become arguments the caller provides "
                     "(buffer-results-to-out-params): a function writes its "
                     "outputs and gradients into the caller's buffers, and "
                     "its plan holds only its own scratch"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> split{
      *this, "split",
      llvm::cl::desc("Also split each training function @f_grad into @f_fwd "
                     "and @f_bwd sharing a caller-owned saved region "
                     "(rnn-split-training; needs out-params)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> cABI{
      *this, "c-abi",
      llvm::cl::desc("Give every public function an entry point "
                     "rnnc_<name>(void *const *buffers, void *stream) "
                     "(rnn-emit-c-abi; needs out-params and arena; on the "
                     "cuda target it runs on the caller's stream)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> gemmRows{
      *this, "gemm-rows",
      llvm::cl::desc("Rows the GEMM blocks of the kernels aim for (block P "
                     "= the smallest power of two with P * B >= gemm-rows, "
                     "at most T); 0: the target's default (cpu 256, cuda "
                     "16384)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the elementwise kernels (cuda "
                     "target)"),
      llvm::cl::init(256)};

  /// The toolkit the build was configured with (CUDA_TOOLKIT_ROOT).
  static std::string defaultCUDAToolkit();
  /// The toolkit a tool's --cuda-toolkit flag selects: `flag` if given,
  /// else $RNNC_CUDA_TOOLKIT, else defaultCUDAToolkit().
  static std::string toolkitFromFlag(llvm::StringRef flag);
  /// gemm-rows, or the target's default: enough rows per GEMM for a tuned
  /// CPU BLAS (256), or for cuBLAS to fill a GPU and to keep the GEMM calls
  /// of a step few at large batches (16384: blocks of 4 steps at B = 4096).
  int64_t getGemmRows() const;
};

/// Checks the option values; the message names the bad one.
LogicalResult verifyPipelineOptions(const PipelineOptions &options,
                                    std::string &message);
/// The cuda-target part of verifyPipelineOptions: the chip and PTX
/// features are known to LLVM's NVPTX backend and agree with each other,
/// and the toolkit has libdevice.
LogicalResult verifyCUDATarget(const PipelineOptions &options,
                               std::string &message);

/// The memory planner as rnn-rematerialize's budget policy uses it: the
/// to-buffers pipeline on a copy of the module, with the target, GEMM rows
/// and out-params of the pass's options (those of the pipeline the plan is
/// for); the largest predicted peak of its training functions.
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
/// carry `rnn.predicted_peak_bytes`. For the cuda target the loops are
/// scalar (vector width 1), GEMMs call `rnnrt_cuda_sgemm`, and every other
/// linalg op becomes a parallel loop, so that all memory accesses are in
/// scf.parallel loops, which become kernels.
void buildToBuffersPipeline(OpPassManager &pm, const PipelineOptions &options);

/// The stages the two pipelines share, exposed for tests and tools:
/// tensor-level kernels -> loops on buffers ...
void buildKernelsToLoopsPipeline(OpPassManager &pm);
void buildKernelsToLoopsPipeline(OpPassManager &pm,
                                 const PipelineOptions &options);
/// ... -> LLVM dialect for the CPU.
void buildLoopsToLLVMPipeline(OpPassManager &pm);
/// ... -> for the cuda target: parallel loops -> outlined kernels in one
/// gpu.module, device buffers (host code still on func/scf/memref) ...
void buildLoopsToGPUKernelsPipeline(OpPassManager &pm,
                                    const PipelineOptions &options);
/// ... -> host code in the LLVM dialect calling the runtime (mgpu*), and
/// the kernels as a gpu.binary holding PTX.
void buildGPUKernelsToLLVMPipeline(OpPassManager &pm,
                                   const PipelineOptions &options);
/// Loops on buffers -> LLVM dialect, for the target the options select.
void buildLoopsToTargetPipeline(OpPassManager &pm,
                                const PipelineOptions &options);

/// Appends the PTX of every gpu.binary in `module` to `ptx`; failure (with
/// a diagnostic) if there is none or an object is not PTX text.
LogicalResult collectPTX(Operation *module, std::string &ptx);

/// Registers the dialects, interfaces and translations the cuda target
/// needs (GPU, NVVM, the NVVM target, ConvertToLLVM interfaces).
void registerGPUDialects(DialectRegistry &registry);
/// Registers the upstream passes the cuda target uses.
void registerGPUPasses();

/// Registers rnn-train-pipeline and rnn-infer-pipeline.
void registerPipelines();

} // namespace rnn
} // namespace mlir

#endif // RNN_PIPELINES_PIPELINES_H
