//===- PlaceInArena.cpp - rnn-place-in-arena ------------------------------===//
//
// Places the buffers of a planned function at their offsets in one arena
// passed as its last argument (see Passes.td). The offsets come from
// rnn-plan-memory, which gives two buffers overlapping space only if one is
// freed before the other is allocated.
//
//===----------------------------------------------------------------------===//

#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNPLACEINARENAPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

/// Rewrites `func`'s planned allocations into views of a new last argument.
static LogicalResult placeInArena(func::FuncOp func) {
  auto arenaBytes = func->getAttrOfType<IntegerAttr>("rnn.arena_bytes");
  if (!arenaBytes || func.isExternal())
    return success();
  SmallVector<memref::AllocOp> allocs;
  WalkResult walk = func.walk([&](memref::AllocOp alloc) {
    if (!alloc->hasAttr("rnn.offset")) {
      alloc.emitOpError("has no arena offset: run rnn-plan-memory first");
      return WalkResult::interrupt();
    }
    allocs.push_back(alloc);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  Builder b(func.getContext());
  auto arenaType =
      MemRefType::get({arenaBytes.getInt()}, b.getIntegerType(8));
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(
          index, arenaType,
          b.getDictionaryAttr(
              b.getNamedAttr("rnn.name", b.getStringAttr("arena"))),
          func.getLoc())))
    return failure();
  Value arena = func.getArgument(index);

  IRRewriter rewriter(func.getContext());
  for (memref::AllocOp alloc : allocs) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.setInsertionPoint(alloc);
    int64_t offset = alloc->getAttrOfType<IntegerAttr>("rnn.offset").getInt();
    Value shift = arith::ConstantIndexOp::create(rewriter, alloc.getLoc(),
                                                 offset);
    auto view = memref::ViewOp::create(rewriter, alloc.getLoc(),
                                       alloc.getType(), arena, shift,
                                       ValueRange{});
    // The role stays for reports and the GPU lowering.
    if (Attribute role = alloc->getAttr("rnn.role"))
      view->setAttr("rnn.role", role);
    rewriter.replaceOp(alloc, view);
  }
  return success();
}

namespace {
struct RNNPlaceInArenaPass
    : public rnn::impl::RNNPlaceInArenaPassBase<RNNPlaceInArenaPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(placeInArena(func)))
        return signalPassFailure();
  }
};
} // namespace
