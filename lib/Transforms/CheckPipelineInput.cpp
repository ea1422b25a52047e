//===- CheckPipelineInput.cpp - rnn-check-pipeline-input ------------------===//
//
// Rejects, naming the op, a program that frees memrefs before the rnn
// pipelines place deallocations themselves (see Passes.td). Upstream's
// ownership-based deallocation would fail on it with a message about its
// internals.
//
//===----------------------------------------------------------------------===//

#include "rnn/Transforms/Passes.h"

#include "rnn/Analysis/MemRefEffects.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNCHECKPIPELINEINPUTPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

namespace {
struct RNNCheckPipelineInputPass
    : public rnn::impl::RNNCheckPipelineInputPassBase<
          RNNCheckPipelineInputPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](Operation *op) {
      if (!rnn::hasMemRefEffect<MemoryEffects::Free>(op))
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
