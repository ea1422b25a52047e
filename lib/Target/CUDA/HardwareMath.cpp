//===- HardwareMath.cpp - rnn-hardware-math -------------------------------===//
//
// The GPU's approximate exp2 and tanh instructions in place of the
// polynomials, for the cuda target's gpu-math=ex2|approx. Upstream's
// convert-gpu-to-nvvm maps `math.exp` with `afn` to libdevice's
// `__nv_fast_expf`, but `math.tanh` to the exact `__nv_tanhf` whatever its
// flags, and refuses LLVM's exp2 intrinsic (to call libdevice for it);
// NVVM's `ex2.approx.f32` intrinsic and LLVM's `tanh` with `afn` (which
// NVPTX selects as `tanh.approx.f32`) say what is meant.
//
//===----------------------------------------------------------------------===//

#include "rnn/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_HARDWAREMATHPASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

namespace {
Value f32Constant(OpBuilder &b, Location loc, float value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

/// exp(x) = exp2(x * log2(e)), ex2.approx.f32. (LLVM's exp2 intrinsic is
/// one convert-gpu-to-nvvm refuses, meaning to call libdevice for it.)
Value approximateExp(OpBuilder &b, Location loc, Value x) {
  Value scaled = arith::MulFOp::create(
      b, loc, x, f32Constant(b, loc, llvm::numbers::log2ef));
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.f32"), ValueRange{scaled})
      .getResult(0);
}

/// tanh(x) = 1 - 2 / (exp(2x) + 1): +-1 where exp(2x) is infinite or 0.
Value tanhFromExp(OpBuilder &b, Location loc, Value x) {
  Value twice = arith::AddFOp::create(b, loc, x, x);
  Value e = approximateExp(b, loc, twice);
  Value denominator =
      arith::AddFOp::create(b, loc, e, f32Constant(b, loc, 1.0f));
  Value quotient =
      arith::DivFOp::create(b, loc, f32Constant(b, loc, 2.0f), denominator);
  return arith::SubFOp::create(b, loc, f32Constant(b, loc, 1.0f), quotient);
}

struct HardwareMathPass
    : public rnn::impl::HardwareMathPassBase<HardwareMathPass> {
  using HardwareMathPassBase::HardwareMathPassBase;

  /// The hardware's `op` of the f32 `x`.
  Value scalar(OpBuilder &b, Operation *op, Value x) {
    Location loc = op->getLoc();
    if (isa<math::ExpOp>(op))
      return approximateExp(b, loc, x);
    if (tanhApprox)
      return LLVM::TanhOp::create(b, loc, x, LLVM::FastmathFlags::afn);
    return tanhFromExp(b, loc, x);
  }

  void runOnOperation() override {
    // f32 and 1-D vectors of f32, whose lanes are computed one by one: the
    // NVPTX backend selects neither instruction on a vector.
    auto supported = [](Type type) {
      auto vector = dyn_cast<VectorType>(type);
      if (vector && (vector.getRank() != 1 || vector.isScalable()))
        return false;
      return getElementTypeOrSelf(type).isF32();
    };
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::ExpOp, math::TanhOp>(op) &&
          supported(op->getResult(0).getType()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      Value x = op->getOperand(0);
      auto vector = dyn_cast<VectorType>(x.getType());
      if (!vector) {
        rewriter.replaceOp(op, scalar(rewriter, op, x));
        continue;
      }
      SmallVector<Value> lanes;
      for (int64_t i = 0; i < vector.getNumElements(); ++i)
        lanes.push_back(scalar(rewriter, op,
                               vector::ExtractOp::create(rewriter, loc, x, i)));
      rewriter.replaceOp(
          op, vector::FromElementsOp::create(rewriter, loc, vector, lanes));
    }
  }
};
} // namespace
