//===- ExpandForward.cpp - rnn-expand-forward -----------------------------===//
//
// Replaces model-level rnn ops by their forward kernels (see Passes.td).
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
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Operation *kernel = createForwardKernel(rewriter, op, IRMapping());
    rewriter.replaceOp(op,
                       kernel->getResults().take_front(op->getNumResults()));
    return success();
  }
};

struct RNNExpandForwardPass
    : public rnn::impl::RNNExpandForwardPassBase<RNNExpandForwardPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandToKernel<LSTMOp>, ExpandToKernel<GRUOp>>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
