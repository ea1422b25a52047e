//===- ExpandBlockSteps.cpp - rnn-expand-block-steps ----------------------===//
//
// `rnn.block_steps` as index arithmetic and a loop, and `rnn.chunk_steps`
// as index arithmetic, at the start of each target's lowering (see
// Passes.td).
//
//===----------------------------------------------------------------------===//

#include "rnn/Conversion/Passes.h"
#include "rnn/Dialect/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_EXPANDBLOCKSTEPSPASS
#include "rnn/Conversion/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

/// gemmBlockSteps(T, B, R) of `op`'s operands, at the builder's position:
/// doubling P from 1 while P < T and P < ceil(R / max(B, 1)), then
/// max(1, min(P, T)).
static Value expand(ImplicitLocOpBuilder &b, BlockStepsOp op) {
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, value);
  };
  Value t = op.getSteps(), one = index(1);
  Value rowsPerStep = arith::MaxUIOp::create(b, op.getBatch(), one);
  Value wanted = arith::CeilDivUIOp::create(
      b, index(static_cast<int64_t>(op.getRows())), rowsPerStep);
  Type indexType = b.getIndexType();
  auto loop = scf::WhileOp::create(b, TypeRange{indexType}, ValueRange{one});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before =
        b.createBlock(&loop.getBefore(), {}, {indexType}, {b.getLoc()});
    Value block = before->getArgument(0);
    Value shortOfT =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, block, t);
    Value shortOfRows =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, block, wanted);
    scf::ConditionOp::create(b, arith::AndIOp::create(b, shortOfT, shortOfRows),
                             ValueRange{block});
    Block *after =
        b.createBlock(&loop.getAfter(), {}, {indexType}, {b.getLoc()});
    Value doubled = arith::ShLIOp::create(b, after->getArgument(0), one);
    scf::YieldOp::create(b, ValueRange{doubled});
  }
  Value block = arith::MinUIOp::create(b, loop.getResult(0), t);
  return arith::MaxUIOp::create(b, block, one);
}

/// chunkStepsFor(T, P, K) of `op`'s operands, at the builder's position:
/// blocks = ceil(K / P); T if blocks > T / P, else blocks * P; at least 1
/// (a sizes entry point computes it before it refuses T = 0, and divides
/// T by it).
static Value expand(ImplicitLocOpBuilder &b, ChunkStepsOp op) {
  Value t = op.getSteps(), block = op.getBlock();
  Value chunk = arith::ConstantIndexOp::create(
      b, static_cast<int64_t>(op.getChunk()));
  Value blocks = arith::CeilDivUIOp::create(b, chunk, block);
  Value beyond = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, blocks,
                                       arith::DivUIOp::create(b, t, block));
  Value steps = arith::SelectOp::create(
      b, beyond, t, arith::MulIOp::create(b, blocks, block));
  return arith::MaxUIOp::create(b, steps, arith::ConstantIndexOp::create(b, 1));
}

namespace {
struct ExpandBlockStepsPass
    : public rnn::impl::ExpandBlockStepsPassBase<ExpandBlockStepsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<BlockStepsOp, ChunkStepsOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      ImplicitLocOpBuilder b(op->getLoc(), rewriter);
      Value expanded = isa<BlockStepsOp>(op)
                           ? expand(b, cast<BlockStepsOp>(op))
                           : expand(b, cast<ChunkStepsOp>(op));
      rewriter.replaceOp(op, expanded);
    }
  }
};
} // namespace
