//===- CheckPipelineInput.cpp - rnn-check-pipeline-input ------------------===//
//
// Rejects, naming the op, a program that frees memrefs before the rnn
// pipelines place deallocations themselves (see Passes.td). Upstream's
// ownership-based deallocation would fail on it with a message about its
// internals.
//
//===----------------------------------------------------------------------===//

#include "rnn/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNCHECKPIPELINEINPUTPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

/// Whether `op` frees a memref.
static bool freesBuffer(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    Value value = e.getValue();
    return isa<MemoryEffects::Free>(e.getEffect()) && value &&
           isa<BaseMemRefType>(value.getType());
  });
}

namespace {
struct RNNCheckPipelineInputPass
    : public rnn::impl::RNNCheckPipelineInputPassBase<
          RNNCheckPipelineInputPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](Operation *op) {
      if (!freesBuffer(op))
        return WalkResult::advance();
      op->emitOpError("frees a buffer: the rnn pipelines place every "
                      "deallocation themselves, so their input must not "
                      "free memrefs");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
