//===- ApproximateMath.cpp - rnn-approximate-math -------------------------===//
//
// Upstream provides the polynomial approximations of math functions only as
// patterns (its pass is a test pass); this pass applies them so the lowered
// gate math calls no libm on the CPU and no libdevice on the GPU.
//
//===----------------------------------------------------------------------===//

#include "rnn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "rnn/Conversion/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

namespace {
struct ApproximateMathPass
    : public rnn::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          return name == math::TanhOp::getOperationName() ||
                 name == math::ExpOp::getOperationName();
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
