//===- Pipelines.h - rnn compilation pipelines ------------------*- C++ -*-===//
//
// The train and infer pipelines, built by the same functions for rnn-opt
// (as registered pass pipelines) and rnn-run.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_PIPELINES_PIPELINES_H
#define RNN_PIPELINES_PIPELINES_H

#include "rnn/Support/EnumOption.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
class Operation;

namespace rnn {

/// What a pipeline compiles for.
enum class Target {
  /// LLVM for the host.
  CPU,
  /// Kernels as PTX, host code calling the runtime.
  CUDA,
};
/// The option value naming `target`: cpu or cuda.
llvm::StringRef stringifyTarget(Target target);
inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, Target target) {
  return os << stringifyTarget(target);
}
/// The values of a `target` option or flag.
inline auto targetValues() {
  return llvm::cl::values(
      clEnumValN(Target::CPU, "cpu", "LLVM for the host"),
      clEnumValN(Target::CUDA, "cuda",
                 "kernels as PTX, host code calling the runtime"));
}

/// How the cuda target computes the gates' tanh and exp.
enum class GPUMath {
  /// MLIR's polynomial approximations (rnn-approximate-math), as the CPU.
  Polynomial,
  /// exp from the hardware's ex2.approx, tanh from that exp
  /// (rnn-hardware-math).
  Ex2,
  /// exp from ex2.approx, tanh from tanh.approx.f32 (sm_75 and newer;
  /// rnn-hardware-math{tanh-approx}).
  Approx,
};

/// The option value naming `math`: polynomial, ex2 or approx.
llvm::StringRef stringifyGPUMath(GPUMath math);
inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, GPUMath math) {
  return os << stringifyGPUMath(math);
}
/// The values of a `gpu-math` option or flag.
inline auto gpuMathValues() {
  return llvm::cl::values(
      clEnumValN(GPUMath::Polynomial, "polynomial",
                 "tanh and exp as polynomials (as on the CPU)"),
      clEnumValN(GPUMath::Ex2, "ex2",
                 "exp from the hardware's ex2.approx, tanh from it"),
      clEnumValN(GPUMath::Approx, "approx",
                 "exp from ex2.approx, tanh from tanh.approx.f32 (sm_75+)"));
}

struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  PassOptions::Option<std::string> remat{
      *this, "remat",
      llvm::cl::desc("What the forward saves for the backward: none | "
                     "gates | chunk:K | budget:BYTES"),
      llvm::cl::init("none")};
  PassOptions::Option<Target,
                      EnumParser<Target, EnumWording::PipelineOption>>
      target{*this, "target", llvm::cl::desc("Target"),
             llvm::cl::init(Target::CPU), targetValues()};
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
  PassOptions::Option<GPUMath, EnumParser<GPUMath, EnumWording::PipelineOption>>
      gpuMath{*this, "gpu-math",
              llvm::cl::desc("How the kernels compute tanh and exp (cuda "
                             "target)"),
              llvm::cl::init(GPUMath::Polynomial), gpuMathValues()};
  PassOptions::Option<bool> arena{
      *this, "arena",
      llvm::cl::desc("Place the planned buffers in one arena passed as the "
                     "last argument (rnn-place-in-arena): a step allocates "
                     "nothing"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> wavefront{
      *this, "wavefront",
      llvm::cl::desc("Run the layers of a forward or a backward as a "
                     "wavefront, each on a lane of its own (cuda: a "
                     "stream; cpu: in program order), layer l + 1's GEMM "
                     "block k beside layer l's block k + 1 "
                     "(convert-rnn-to-loops wavefronts); their scratch is "
                     "held at once"),
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

/// rnn-rematerialize's `predict-pipeline` for a pipeline with `options`:
/// its to-buffers stage (rnn-to-buffers-pipeline with the same target, GEMM
/// rows, out-params and chip), whose planned peak the budget policy uses.
std::string predictPipeline(const PipelineOptions &options);

/// The stages, each named by the IR it produces, in pipeline order.
///
/// Training functions `@f_grad` beside the model functions, on tensors,
/// their saved values chosen: rnn-autodiff, rnn-rematerialize.
void buildTrainingFunctionsStage(OpPassManager &pm,
                                 const PipelineOptions &options);
/// Kernels on tensors: every model op left becomes forward kernels
/// (rnn-expand-forward).
void buildKernelsStage(OpPassManager &pm, const PipelineOptions &options);
/// Kernels on buffers: one-shot bufferization of whole functions,
/// ownership-based deallocation and, with out-params, results as
/// caller-provided arguments.
void buildBuffersStage(OpPassManager &pm, const PipelineOptions &options);
/// Loops and BLAS calls on buffers, with no dead stores and every buffer
/// freed after its last use: convert-rnn-to-loops, rnn-matmul-to-blas, the
/// linalg ops left as loops (scf.parallel on the cuda target, where each
/// becomes a kernel), rnn-dse, rnn-early-free.
void buildLoopsStage(OpPassManager &pm, const PipelineOptions &options);
/// Entry points: with split, `@f_fwd` and `@f_bwd` beside each `@f_grad`
/// (rnn-split-training).
void buildEntryPointsStage(OpPassManager &pm, const PipelineOptions &options);
/// The memory plan attached (rnn-plan-memory) and, with arena, every
/// planned buffer placed in one arena (rnn-place-in-arena).
void buildMemoryPlanStage(OpPassManager &pm, const PipelineOptions &options);
/// With c-abi, an `rnnc_<name>` entry point of every public function
/// (rnn-emit-c-abi).
void buildCABIStage(OpPassManager &pm, const PipelineOptions &options);
/// The target's code: LLVM dialect for the CPU (buildLoopsToLLVMPipeline),
/// or, for cuda, host code in the LLVM dialect and the kernels as PTX
/// (buildLoopsToGPUKernelsPipeline, buildGPUKernelsToLLVMPipeline).
void buildTargetStage(OpPassManager &pm, const PipelineOptions &options);

/// Model functions -> training functions -> the target: every stage.
void buildTrainPipeline(OpPassManager &pm, const PipelineOptions &options);
/// Every function of rnn ops (model or training) -> the target: the stages
/// from kernels on.
void buildInferPipeline(OpPassManager &pm, const PipelineOptions &options);
/// The infer pipeline up to the memory plan and C ABI, before the target:
/// functions then carry `rnn.predicted_peak_bytes`.
void buildToBuffersPipeline(OpPassManager &pm, const PipelineOptions &options);
/// Kernels on tensors -> planned loops on buffers: the stages from buffers
/// to the C ABI (rnn-kernels-to-loops).
void buildKernelsToLoopsPipeline(OpPassManager &pm,
                                 const PipelineOptions &options);

/// The target stage's parts. Loops on buffers -> LLVM dialect for the CPU.
void buildLoopsToLLVMPipeline(OpPassManager &pm);
/// Loops on buffers -> for the cuda target: parallel loops -> outlined
/// kernels in one gpu.module, device buffers (host code still on
/// func/scf/memref) ...
void buildLoopsToGPUKernelsPipeline(OpPassManager &pm,
                                    const PipelineOptions &options);
/// ... -> host code in the LLVM dialect calling the runtime (mgpu*), and
/// the kernels as a gpu.binary holding PTX.
void buildGPUKernelsToLLVMPipeline(OpPassManager &pm,
                                   const PipelineOptions &options);

/// Appends the PTX of every gpu.binary in `module` to `ptx`; failure (with
/// a diagnostic) if there is none or an object is not PTX text.
LogicalResult collectPTX(Operation *module, std::string &ptx);

/// Registers the dialects, interfaces and translations the cuda target
/// needs (GPU, NVVM, the NVVM target, ConvertToLLVM interfaces).
void registerGPUDialects(DialectRegistry &registry);
/// Registers the upstream passes the cuda target uses.
void registerGPUPasses();

/// Registers rnn-train-pipeline, rnn-infer-pipeline and their stages.
void registerPipelines();

} // namespace rnn
} // namespace mlir

#endif // RNN_PIPELINES_PIPELINES_H
