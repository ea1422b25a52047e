//===- EarlyFree.cpp - rnn-early-free -------------------------------------===//
//
// Moves each buffer's dealloc to right after its last use (see Passes.td).
// Upstream's ownership-based deallocation decides *whether* to free; it
// frees at the end of the block, so this pass only decides *when*.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNEARLYFREEPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

namespace {
struct RNNEarlyFreePass
    : public rnn::impl::RNNEarlyFreePassBase<RNNEarlyFreePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    BufferLiveness liveness(func);
    Block &block = func.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    IRRewriter rewriter(&getContext());
    for (const BufferInfo &buffer : liveness.getBuffers()) {
      if (!buffer.dealloc || buffer.returned || buffer.escapes ||
          buffer.deallocIndex <= buffer.lastUseIndex + 1)
        continue;
      rewriter.moveOpAfter(buffer.dealloc, ops[buffer.lastUseIndex]);
    }
  }
};
} // namespace
