//===- Rematerialize.cpp - rnn-rematerialize ------------------------------===//
//
// Chooses, per backward kernel, where the values it reads come from: saved
// by the forward, or recomputed by a replay kernel (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "rnn/Dialect/RNNOps.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNREMATERIALIZEPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

static Value emptyLike(OpBuilder &b, Location loc, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

/// Recomputes the gates read by `bwd` from the states its forward saved.
static void replayGates(LSTMBwdOp bwd, RewriterBase &rewriter) {
  auto fwd = bwd.getGates().getDefiningOp<LSTMFwdOp>();
  if (!fwd)
    return;
  rewriter.setInsertionPoint(bwd);
  Location loc = bwd.getLoc();
  SmallVector<Value> operands = {fwd.getX(),       fwd.getIsInit(),
                                 fwd.getH0(),      fwd.getC0(),
                                 fwd.getWeightIh(), fwd.getWeightHh(),
                                 fwd.getBiasIh(),  fwd.getBiasHh(),
                                 bwd.getY(),       bwd.getCells(),
                                 emptyLike(rewriter, loc, bwd.getGates())};
  auto replay = LSTMReplayOp::create(
      rewriter, loc, TypeRange{bwd.getGates().getType()}, operands);
  rewriter.modifyOpInPlace(bwd, [&] {
    bwd.getGatesMutable().assign(replay.getResult(0));
    bwd->setAttr("rnn.remat", rewriter.getStringAttr("gates"));
  });
}

static void replayGates(GRUBwdOp bwd, RewriterBase &rewriter) {
  auto fwd = bwd.getGates().getDefiningOp<GRUFwdOp>();
  if (!fwd)
    return;
  rewriter.setInsertionPoint(bwd);
  Location loc = bwd.getLoc();
  SmallVector<Value> operands = {
      fwd.getX(),        fwd.getIsInit(),   fwd.getH0(),
      fwd.getWeightIh(), fwd.getWeightHh(), fwd.getBiasIh(),
      fwd.getBiasHh(),   bwd.getY(),
      emptyLike(rewriter, loc, bwd.getGates()),
      emptyLike(rewriter, loc, bwd.getHnProj())};
  auto replay = GRUReplayOp::create(
      rewriter, loc,
      TypeRange{bwd.getGates().getType(), bwd.getHnProj().getType()},
      operands);
  rewriter.modifyOpInPlace(bwd, [&] {
    bwd.getGatesMutable().assign(replay.getResult(0));
    bwd.getHnProjMutable().assign(replay.getResult(1));
    bwd->setAttr("rnn.remat", rewriter.getStringAttr("gates"));
  });
}

namespace {
struct RNNRematerializePass
    : public rnn::impl::RNNRematerializePassBase<RNNRematerializePass> {
  using RNNRematerializePassBase::RNNRematerializePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef value = policy;
    if (value == "none")
      return;
    if (value.starts_with("chunk:") || value.starts_with("budget:")) {
      module.emitError() << "rnn-rematerialize: policy '" << value
                         << "' is not implemented yet (available: none, "
                            "gates)";
      return signalPassFailure();
    }
    if (value != "gates") {
      module.emitError() << "rnn-rematerialize: unknown policy '" << value
                         << "' (expected none, gates, chunk:K or "
                            "budget:BYTES)";
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    module.walk([&](LSTMBwdOp bwd) { replayGates(bwd, rewriter); });
    module.walk([&](GRUBwdOp bwd) { replayGates(bwd, rewriter); });
  }
};
} // namespace
