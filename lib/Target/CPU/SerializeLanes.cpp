//===- SerializeLanes.cpp - rnn-serialize-lanes ---------------------------===//
//
// The CPU target runs a wavefront's lanes in program order (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "rnn/Target/Passes.h"
#include "rnn/Dialect/RNNOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_SERIALIZELANESPASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

namespace {
struct SerializeLanesPass
    : public rnn::impl::SerializeLanesPassBase<SerializeLanesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> laneOps;
    getOperation().walk([&](Operation *op) {
      if (isa<ForkOp, LaneSwitchOp, SignalOp, WaitOp, JoinOp>(op))
        laneOps.push_back(op);
    });
    for (Operation *op : laneOps)
      op->erase();
  }
};
} // namespace
