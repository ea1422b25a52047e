//===- PlaceInArena.cpp - rnn-place-in-arena ------------------------------===//
//
// Places the buffers of a planned function at their offsets in one arena
// passed as its last argument (see Passes.td). The offsets come from
// rnn-plan-memory, which gives two buffers overlapping space only if one is
// freed before the other is allocated.
//
//===----------------------------------------------------------------------===//

#include "rnn/Transforms/Passes.h"

#include "rnn/Analysis/BufferLiveness.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/Support/MathExtras.h"

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
  MLIRContext *ctx = func.getContext();
  RNNDialect::OffsetAttrHelper offsetAttr(ctx);
  RNNDialect::RoleAttrHelper roleAttr(ctx);
  Attribute planned =
      func->getAttr(RNNDialect::ArenaBytesAttrHelper::getNameStr());
  if (!planned || func.isExternal())
    return success();
  auto arenaBytes = dyn_cast<IntegerAttr>(planned);
  if (!arenaBytes || arenaBytes.getValue().isNegative())
    return func.emitOpError("rnn.arena_bytes must be a non-negative integer, "
                            "got ")
           << planned;
  int64_t arenaSize = arenaBytes.getInt();
  DataLayout layout = DataLayout::closest(func);
  SmallVector<memref::AllocOp> allocs;
  WalkResult walk = func.walk([&](memref::AllocOp alloc) {
    Attribute attr = alloc->getAttr(offsetAttr.getName());
    if (!attr) {
      alloc.emitOpError("has no arena offset: run rnn-plan-memory first");
      return WalkResult::interrupt();
    }
    auto offset = dyn_cast<IntegerAttr>(attr);
    if (!offset || offset.getValue().isNegative()) {
      alloc.emitOpError("rnn.offset must be a non-negative integer, got ")
          << attr;
      return WalkResult::interrupt();
    }
    std::optional<int64_t> bytes = getBufferBytes(alloc.getType(), layout);
    if (!bytes) {
      alloc.emitOpError("has no static size in bytes to place in the arena");
      return WalkResult::interrupt();
    }
    int64_t end = 0;
    if (llvm::AddOverflow(offset.getInt(), *bytes, end) || end > arenaSize) {
      alloc.emitOpError("at offset ")
          << offset.getInt() << " with " << *bytes
          << " bytes does not fit in the arena of " << arenaSize << " bytes";
      return WalkResult::interrupt();
    }
    allocs.push_back(alloc);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  Builder b(func.getContext());
  auto arenaType = MemRefType::get({arenaSize}, b.getIntegerType(8));
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(index, arenaType,
                                 b.getDictionaryAttr(b.getNamedAttr(
                                     RNNDialect::NameAttrHelper::getNameStr(),
                                     b.getStringAttr("arena"))),
                                 func.getLoc())))
    return failure();
  Value arena = func.getArgument(index);

  IRRewriter rewriter(func.getContext());
  for (memref::AllocOp alloc : allocs) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.setInsertionPoint(alloc);
    int64_t offset = offsetAttr.getAttr(alloc).getInt();
    Value shift =
        arith::ConstantIndexOp::create(rewriter, alloc.getLoc(), offset);
    auto view = memref::ViewOp::create(
        rewriter, alloc.getLoc(), alloc.getType(), arena, shift, ValueRange{});
    // The role stays for reports and the GPU lowering.
    if (StringAttr role = roleAttr.getAttr(alloc))
      roleAttr.setAttr(view, role);
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
