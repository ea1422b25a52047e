//===- ExpandForward.cpp - rnn-expand-forward -----------------------------===//
//
// Replaces model-level rnn ops by their forward kernels, with the GEMM
// block of the training forward, and dropouts by their input (see
// Passes.td).
//
//===----------------------------------------------------------------------===//

#include "ForwardKernels.h"

#include "rnn/Dialect/RNNOps.h"
#include "rnn/Support/Diagnostics.h"
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
/// Replaces a model layer by its forward kernel: the layer's y and final
/// states are the kernel's outputs.
struct ExpandToKernel : public OpInterfaceRewritePattern<LayerOpInterface> {
  ExpandToKernel(MLIRContext *ctx, int64_t gemmRows)
      : OpInterfaceRewritePattern<LayerOpInterface>(ctx), gemmRows(gemmRows) {}

  LogicalResult matchAndRewrite(LayerOpInterface op,
                                PatternRewriter &rewriter) const override {
    Operation *kernel =
        createForwardKernel(rewriter, op, IRMapping(), gemmRows);
    rewriter.replaceOp(op, forwardOutputs(kernel));
    return success();
  }

  int64_t gemmRows;
};

/// Outside a training function a dropout is the identity.
struct DropoutIsIdentity : public OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getX());
    return success();
  }
};

struct RNNExpandForwardPass
    : public rnn::impl::RNNExpandForwardPassBase<RNNExpandForwardPass> {
  using RNNExpandForwardPassBase::RNNExpandForwardPassBase;

  void runOnOperation() override {
    if (gemmRows < 1) {
      rnn::emitErrorAt(getOperation(),
                       "rnn-expand-forward: gemm-rows must be >= 1");
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandToKernel>(&getContext(), gemmRows);
    patterns.add<DropoutIsIdentity>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
