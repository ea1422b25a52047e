//===- CUDAPipeline.cpp - the cuda target of the rnn pipelines ------------===//
//
// Loops on planned buffers -> GPU kernels -> PTX, with the host code in the
// LLVM dialect calling the runtime:
//
//   rnn-approximate-math         tanh/exp as polynomials (gpu-math=
//                                polynomial, the default)
//   rnn-tile-parallel-loops      a block of threads per parallel loop
//   gpu-map-parallel-loops       blocks -> grid, threads -> block
//                                (innermost dimension -> x)
//   convert-parallel-loops-to-gpu  gpu.launch per scf.parallel
//   canonicalize, gpu-launch-sink-index-computations
//                                constants (block sizes, polynomial
//                                coefficients) into the kernels
//   gpu-kernel-outlining         gpu.func kernels, gpu.launch_func on host
//   rnn-merge-gpu-modules        one gpu.module: one PTX module
//   canonicalize, cse
//   rnn-device-buffers           memref.alloc/dealloc -> gpu.alloc/dealloc,
//                                launches async on one stream, one wait
//                                per function
//   rnn-read-only-kernel-args    llvm.readonly on the arguments no write
//                                of a launch may touch
//   rnn-kernel-signatures        the kernels' argument lists, recorded
//   ---- (buildGPUKernelsToLLVMPipeline)
//   convert-scf-to-cf, expand-strided-metadata, lower-affine
//   nvvm-attach-target           chip, PTX features, O3
//   in gpu.module: rnn-hardware-math (gpu-math=ex2 or approx: tanh/exp
//     from the hardware's approximations), convert-gpu-to-nvvm,
//     canonicalize, cse,
//     rnn-read-only-kernel-args{mark-loads=1}  their loads invariant
//     (ld.global.nc)
//   gpu-to-llvm                  host: launches, allocations, sgemm calls
//   gpu-module-to-binary         format=isa, toolkit: PTX text in a
//                                gpu.binary
//   rnn-kernel-signatures{annotate=1}  ... appended to the PTX as comments
//
// The host keeps the time loops (scf.for, then cf) and issues, per step,
// kernel launches and `rnnrt_cuda_sgemm` calls, all on the runtime's one
// stream, so the kernels and the GEMM calls run in program order with a
// single synchronization at the end of the function.
//
// The expanded tanh/exp still use floor, fma and fabs, which
// convert-gpu-to-nvvm turns into libdevice calls (it marks the LLVM
// intrinsics illegal); gpu-module-to-binary links libdevice from the
// toolkit given explicitly and the NVPTX optimizer inlines it (cvt.rmi,
// fma.rn, abs), so the PTX names no `__nv_` function. Without libdevice the
// calls would stay unresolved silently, hence verifyCUDATarget checks for
// it before anything runs, together with chip and PTX version, which the
// NVPTX backend would otherwise ignore (unknown chip) or abort on (PTX too
// old for the chip).
//
// This file and InitCUDA.cpp are the only ones that include the GPU, NVVM
// and SCF-to-GPU conversion headers.
//
//===----------------------------------------------------------------------===//

#include "rnn/Conversion/Passes.h"
#include "rnn/Pipelines/Pipelines.h"
#include "rnn/Support/Diagnostics.h"
#include "rnn/Target/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTargetMC();

using namespace mlir;

static constexpr llvm::StringLiteral kNVPTXTriple = "nvptx64-nvidia-cuda";

/// The oldest PTX ISA version (x10) that knows `chip`, as the NVPTX backend
/// of LLVM 22 requires it: given an older one it aborts the process, so the
/// pipeline checks first. 0 for a chip not in the table (the backend then
/// picks or checks on its own).
static unsigned minimumPTXVersion(llvm::StringRef chip) {
  static const struct {
    const char *chip;
    unsigned ptx;
  } table[] = {
      {"sm_20", 32},   {"sm_21", 32},  {"sm_30", 32},   {"sm_35", 32},
      {"sm_32", 40},   {"sm_50", 40},  {"sm_37", 41},   {"sm_52", 41},
      {"sm_53", 42},   {"sm_60", 50},  {"sm_61", 50},   {"sm_62", 50},
      {"sm_70", 60},   {"sm_72", 61},  {"sm_75", 63},   {"sm_80", 70},
      {"sm_86", 71},   {"sm_87", 74},  {"sm_89", 78},   {"sm_90", 78},
      {"sm_90a", 80},  {"sm_100", 86}, {"sm_100a", 86}, {"sm_101", 86},
      {"sm_101a", 86}, {"sm_120", 87}, {"sm_120a", 87}, {"sm_100f", 88},
      {"sm_101f", 88}, {"sm_103", 88}, {"sm_103f", 88}, {"sm_103a", 88},
      {"sm_120f", 88}, {"sm_121", 88}, {"sm_121f", 88}, {"sm_121a", 88},
      {"sm_88", 90},   {"sm_110", 90}, {"sm_110f", 90}, {"sm_110a", 90},
  };
  for (const auto &entry : table)
    if (chip == entry.chip)
      return entry.ptx;
  return 0;
}

LogicalResult rnn::verifyCUDATarget(const PipelineOptions &options,
                                    std::string &message) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
  });
  llvm::Triple triple(kNVPTXTriple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    message = "this LLVM has no NVPTX target: " + error;
    return failure();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!info || !info->isCPUStringValid(options.chip)) {
    message = "unknown GPU chip '" + options.chip +
              "' (not a chip LLVM's NVPTX backend knows, such as sm_80, sm_90, "
              "sm_90a or sm_100)";
    return failure();
  }

  SmallVector<StringRef> features;
  StringRef(options.features).split(features, ',', -1, false);
  unsigned ptx = 0;
  for (StringRef feature : features) {
    StringRef name = feature.drop_front();
    bool known = llvm::any_of(
        info->getAllProcessorFeatures(),
        [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; });
    if (!known) {
      message = "unknown PTX feature '" + feature.str() +
                "' (expected +ptxNN, e.g. +ptx80)";
      return failure();
    }
    // The chip is `chip`'s and the PTX version the first feature's: a
    // feature that names another chip, or a second version, enabled or
    // disabled, would contradict them (NVPTX aborts on a chip the version
    // is too old for, and takes a disabled version as none).
    if (name.starts_with("sm_")) {
      message = "PTX feature '" + feature.str() +
                "' names a chip; the chip is chip=" + options.chip;
      return failure();
    }
    if (ptx && name.starts_with("ptx")) {
      message = "PTX features '" + options.features +
                "' give more than one PTX version (expected one +ptxNN)";
      return failure();
    }
    if (feature.starts_with("+ptx"))
      (void)name.drop_front(3).getAsInteger(10, ptx);
  }
  unsigned minimum = minimumPTXVersion(options.chip);
  if (ptx && ptx < minimum) {
    message = llvm::formatv("PTX ISA {0}.{1} ({2}) is too old for {3}, "
                            "which needs +ptx{4} or newer",
                            ptx / 10, ptx % 10, options.features.getValue(),
                            options.chip.getValue(), minimum)
                  .str();
    return failure();
  }

  // tanh.approx.f32 needs sm_75 and PTX ISA 7.0; NVPTX aborts the
  // process on a `tanh` with `afn` it cannot select.
  unsigned chipNumber = 0;
  (void)StringRef(options.chip)
      .drop_front(3)
      .take_while(llvm::isDigit)
      .getAsInteger(10, chipNumber);
  if (options.gpuMath == GPUMath::Approx && (chipNumber < 75 || ptx < 70)) {
    message =
        llvm::formatv("gpu-math=approx needs sm_75 or newer and +ptx70 "
                      "or newer (tanh.approx.f32), not {0} with {1}",
                      options.chip.getValue(), options.features.getValue())
            .str();
    return failure();
  }

  // The expanded gate math still leaves floor, fma and fabs, which
  // convert-gpu-to-nvvm turns into libdevice calls; without libdevice the
  // PTX would name unresolved `__nv_` functions and not assemble.
  SmallString<128> libdevice(options.toolkit.getValue());
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  if (!llvm::sys::fs::is_regular_file(libdevice)) {
    message = "no libdevice in the CUDA toolkit '" + options.toolkit +
              "' (expected " + libdevice.str().str() +
              "); give the toolkit with toolkit=DIR";
    return failure();
  }
  return success();
}

void rnn::buildLoopsToGPUKernelsPipeline(OpPassManager &pm,
                                         const PipelineOptions &options) {
  pm.addPass(rnn::createExpandBlockStepsPass());
  pm.addPass(rnn::createLowerBeginBackwardPass());
  ApproximateMathPassOptions approximate;
  approximate.tanhExp = options.gpuMath == GPUMath::Polynomial;
  pm.addPass(rnn::createApproximateMathPass(approximate));
  TileParallelLoopsPassOptions tile;
  tile.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(rnn::createTileParallelLoopsPass(tile));
  GpuMapParallelLoopsPassOptions map;
  // The innermost dimension (contiguous in memory) runs along x, so
  // consecutive threads of a warp touch consecutive elements.
  map.mappingPolicyStr = "innermost-first";
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass(map));
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  // Folds the launch bounds (tile sizes) to constants, which are sunk too.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Constants (the polynomial coefficients among them) are rematerialized
  // in each kernel instead of becoming kernel parameters.
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(rnn::createMergeGPUModulesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // After the cleanup, which would inline the alloca scopes of launches
  // that are not in a loop.
  pm.addPass(rnn::createDeviceBuffersPass());
  pm.addPass(rnn::createReadOnlyKernelArgsPass());
  pm.addPass(rnn::createKernelSignaturesPass());
}

void rnn::buildGPUKernelsToLLVMPipeline(OpPassManager &pm,
                                        const PipelineOptions &options) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));

  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  if (options.gpuMath != GPUMath::Polynomial) {
    HardwareMathPassOptions hardware;
    hardware.tanhApprox = options.gpuMath == GPUMath::Approx;
    device.addPass(rnn::createHardwareMathPass(hardware));
  }
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  rnn::ReadOnlyKernelArgsPassOptions invariantLoads;
  invariantLoads.markLoads = true;
  device.addPass(rnn::createReadOnlyKernelArgsPass(invariantLoads));
  device.addPass(createReconcileUnrealizedCastsPass());

  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  rnn::KernelSignaturesPassOptions signatures;
  signatures.annotate = true;
  pm.addPass(rnn::createKernelSignaturesPass(signatures));
}

LogicalResult rnn::collectPTX(Operation *module, std::string &ptx) {
  bool found = false;
  WalkResult result = module->walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (!object || object.getFormat() != gpu::CompilationTarget::Assembly) {
        binary.emitError("expected PTX (format=isa) in every gpu.binary");
        return WalkResult::interrupt();
      }
      ptx += object.getObject().getValue();
      if (!ptx.empty() && ptx.back() != '\n')
        ptx += '\n';
      found = true;
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (!found)
    return rnn::emitErrorAt(module,
                            "no gpu.binary: nothing was compiled for the GPU");
  return success();
}
