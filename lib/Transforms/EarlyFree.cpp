//===- EarlyFree.cpp - rnn-early-free -------------------------------------===//
//
// Moves each buffer's dealloc to right after its last use, or after the
// rnn.join of a wavefront the use is in (see Passes.td).
// Upstream's ownership-based deallocation decides *whether* to free; it
// frees at the end of the block, so this pass only decides *when*.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Dialect/RNNOps.h"
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
    // Between a fork and its join, lanes may still run what the program
    // order puts before: a buffer used there is freed after the join.
    SmallVector<unsigned> freeAfter(ops.size());
    std::optional<unsigned> fork;
    for (unsigned i = 0; i < ops.size(); ++i) {
      freeAfter[i] = i;
      if (isa<ForkOp>(ops[i]))
        fork = i;
      if (isa<JoinOp>(ops[i]) && fork) {
        for (unsigned j = *fork; j < i; ++j)
          freeAfter[j] = i;
        fork.reset();
      }
    }
    IRRewriter rewriter(&getContext());
    for (const BufferInfo &buffer : liveness.getBuffers()) {
      if (!buffer.dealloc || buffer.returned || buffer.escapes)
        continue;
      unsigned after = freeAfter[buffer.lastUseIndex];
      bool inFork = freeAfter[buffer.deallocIndex] != buffer.deallocIndex;
      if (inFork || buffer.deallocIndex > after + 1)
        rewriter.moveOpAfter(buffer.dealloc, ops[after]);
    }
  }
};
} // namespace
