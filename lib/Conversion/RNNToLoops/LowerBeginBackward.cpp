//===- LowerBeginBackward.cpp - rnn-lower-begin-backward ------------------===//
//
// The phase boundary `rnn.begin_backward` as the runtime's phase call, at
// the start of each target's lowering (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "rnn/Conversion/Passes.h"
#include "rnn/Conversion/RuntimeFunctions.h"
#include "rnn/Dialect/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_LOWERBEGINBACKWARDPASS
#include "rnn/Conversion/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

static constexpr StringLiteral kBeginPhase = "rnnrt_begin_phase";

namespace {
struct LowerBeginBackwardPass
    : public rnn::impl::LowerBeginBackwardPassBase<LowerBeginBackwardPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<BeginBackwardOp> markers;
    module.walk([&](BeginBackwardOp op) { markers.push_back(op); });
    if (markers.empty())
      return;
    IRRewriter rewriter(&getContext());
    if (failed(declareRuntimeFunction(
            module, kBeginPhase,
            rewriter.getFunctionType({rewriter.getI64Type()}, {}),
            "rnn.begin_backward's lowering")))
      return signalPassFailure();
    for (BeginBackwardOp op : markers) {
      rewriter.setInsertionPoint(op);
      Value phase = arith::ConstantIntOp::create(rewriter, op.getLoc(),
                                                 rewriter.getI64Type(), 1);
      rewriter.replaceOpWithNewOp<func::CallOp>(op, kBeginPhase, TypeRange{},
                                                ValueRange{phase});
    }
  }
};
} // namespace
