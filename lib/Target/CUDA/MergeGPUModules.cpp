//===- MergeGPUModules.cpp - rnn-merge-gpu-modules ------------------------===//
//
// Gathers the kernels that `gpu-kernel-outlining` put in one gpu.module
// each into a single gpu.module, so that a compiled function has one PTX
// module: one file for `rnn-run --emit=ptx` and ptxas, one module load in
// the runtime. Upstream has no pass for this (outlining always creates a
// module per kernel).
//
// Each outlined module holds one function named after the host function;
// the module names are unique (outlining inserts them through the symbol
// table), so each kernel takes its module's name. The merged module goes
// at the end of the host module, after every host function.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/Diagnostics.h"
#include "rnn/Target/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallVectorExtras.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_MERGEGPUMODULESPASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

static constexpr StringLiteral kMergedModule = "rnn_kernels";

namespace {
struct MergeGPUModulesPass
    : public rnn::impl::MergeGPUModulesPassBase<MergeGPUModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> sources(module.getOps<gpu::GPUModuleOp>());
    if (sources.empty())
      return;
    for (gpu::GPUModuleOp source : sources) {
      if (source.getSymName() == kMergedModule || source.getTargetsAttr() ||
          source.getOffloadingHandlerAttr()) {
        // At the gpu.module, without printing it: it may hold every kernel.
        rnn::emitErrorAt(source, "rnn-merge-gpu-modules: expected only "
                                 "modules from gpu-kernel-outlining, without "
                                 "targets");
        return signalPassFailure();
      }
    }

    // At the end of the module: host code first, then the device code. It
    // is located at the modules it gathers (a diagnostic shows the first),
    // not at the host module.
    IRRewriter rewriter(&getContext());
    rewriter.setInsertionPointToEnd(module.getBody());
    SmallVector<Location> locations = llvm::map_to_vector(
        sources, [](gpu::GPUModuleOp source) { return source.getLoc(); });
    auto merged = gpu::GPUModuleOp::create(
        rewriter, rewriter.getFusedLoc(locations), kMergedModule);
    SymbolTable(module).insert(merged);

    // Old kernel reference -> new one.
    llvm::DenseMap<Attribute, SymbolRefAttr> renamed;
    for (gpu::GPUModuleOp source : sources) {
      auto &body = source.getBody()->getOperations();
      auto kernel = llvm::hasSingleElement(body)
                        ? dyn_cast<gpu::GPUFuncOp>(*body.begin())
                        : gpu::GPUFuncOp();
      if (!kernel) {
        rnn::emitErrorAt(source, "rnn-merge-gpu-modules: expected one "
                                 "gpu.func in an outlined module");
        return signalPassFailure();
      }
      StringAttr name = source.getSymNameAttr();
      renamed[SymbolRefAttr::get(
          name, {FlatSymbolRefAttr::get(kernel.getNameAttr())})] =
          SymbolRefAttr::get(merged.getSymNameAttr(),
                             {FlatSymbolRefAttr::get(name)});
      Block *mergedBody = merged.getBody();
      rewriter.moveOpBefore(kernel, mergedBody, mergedBody->end());
      rewriter.modifyOpInPlace(
          kernel, [&] { SymbolTable::setSymbolName(kernel, name); });
      rewriter.eraseOp(source);
    }

    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernel());
      if (it == renamed.end()) {
        launch.emitError("rnn-merge-gpu-modules: kernel ")
            << launch.getKernel() << " is not in an outlined module";
        return WalkResult::interrupt();
      }
      rewriter.modifyOpInPlace(launch,
                               [&] { launch.setKernelAttr(it->second); });
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
