//===- ApproximateMath.cpp - rnn-approximate-math -------------------------===//
//
// Upstream provides the polynomial approximations of math functions only as
// patterns (its pass is a test pass); this pass applies them so the lowered
// gate math calls no libm on the CPU and no libdevice on the GPU. It also
// expands the conversions between f32 and bf16 (the storage type of saved
// values under `storage = bf16`) into integer operations, so that both
// targets round to nearest even the same way and the CPU needs no compiler
// runtime's conversion functions. With tanh-exp=0 (the cuda target's
// gpu-math=ex2 or approx) tanh and exp are left to rnn-hardware-math.
//
//===----------------------------------------------------------------------===//

#include "rnn/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

namespace {
struct ApproximateMathPass
    : public rnn::impl::ApproximateMathPassBase<ApproximateMathPass> {
  using ApproximateMathPassBase::ApproximateMathPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    if (tanhExp)
      populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
        return name == math::TanhOp::getOperationName() ||
               name == math::ExpOp::getOperationName();
      });
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
