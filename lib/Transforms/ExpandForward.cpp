//===- ExpandForward.cpp - rnn-expand-forward -----------------------------===//
//
// Replaces model-level rnn ops by their forward kernels, chunked so that
// the input projection is no larger than the output (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "ForwardKernels.h"

#include "rnn/Dialect/RNNOps.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNEXPANDFORWARDPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

namespace {
template <typename OpTy>
struct ExpandToKernel : public OpRewritePattern<OpTy> {
  ExpandToKernel(MLIRContext *ctx, bool chunked)
      : OpRewritePattern<OpTy>(ctx), chunked(chunked) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    // Nothing is saved: the input projection is the largest buffer, G times
    // the output. Computed in G chunks, it is no larger than the output.
    int64_t gates = std::is_same_v<OpTy, LSTMOp> ? 4 : 3;
    int64_t steps = op.getX().getType().getDimSize(0);
    std::optional<int64_t> chunk;
    if (chunked)
      chunk = std::max<int64_t>(1, steps / gates);
    Operation *kernel = createForwardKernel(rewriter, op, IRMapping(), chunk);
    rewriter.replaceOp(op,
                       kernel->getResults().take_front(op->getNumResults()));
    return success();
  }

  bool chunked;
};

struct RNNExpandForwardPass
    : public rnn::impl::RNNExpandForwardPassBase<RNNExpandForwardPass> {
  using RNNExpandForwardPassBase::RNNExpandForwardPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandToKernel<LSTMOp>, ExpandToKernel<GRUOp>>(
        &getContext(), chunkedProjection);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
