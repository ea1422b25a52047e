//===- PlaceInArena.cpp - rnn-place-in-arena ------------------------------===//
//
// Places the buffers of a planned function at their offsets in one arena
// passed as its last argument (see Passes.td). The offsets come from
// rnn-plan-memory, which gives two buffers overlapping space only if one is
// freed before the other is allocated. A function for every T and B has its
// plan in closed form (MemoryPlan's SymbolicPlan): its offsets are computed
// when it starts, from the T and B of its arguments, and the arena's size
// is a function of (T, B) the caller calls (the argument's rnn.size).
//
//===----------------------------------------------------------------------===//

#include "rnn/Transforms/Passes.h"

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Analysis/MemoryPlan.h"
#include "rnn/Support/Diagnostics.h"

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

/// The arena argument of `func`, appended: `type`, named "arena".
static FailureOr<Value> addArenaArgument(func::FuncOp func, MemRefType type,
                                         ArrayRef<NamedAttribute> extra = {}) {
  Builder b(func.getContext());
  SmallVector<NamedAttribute> attrs = {b.getNamedAttr(
      RNNDialect::NameAttrHelper::getNameStr(), b.getStringAttr("arena"))};
  llvm::append_range(attrs, extra);
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(index, type, b.getDictionaryAttr(attrs),
                                 func.getLoc())))
    return failure();
  return func.getArgument(index);
}

/// Replaces `alloc` by a view of `arena` at `offset`, with its sizes, and
/// erases its deallocation.
static void replaceByView(IRRewriter &rewriter, memref::AllocOp alloc,
                          Value arena, Value offset) {
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      rewriter.eraseOp(user);
  rewriter.setInsertionPoint(alloc);
  auto view =
      memref::ViewOp::create(rewriter, alloc.getLoc(), alloc.getType(), arena,
                             offset, alloc.getDynamicSizes());
  // The role stays for reports and the GPU lowering.
  RNNDialect::RoleAttrHelper roleAttr(alloc.getContext());
  if (StringAttr role = roleAttr.getAttr(alloc))
    roleAttr.setAttr(view, role);
  rewriter.replaceOp(alloc, view);
}

/// Rewrites `func`'s planned allocations into views of a new last argument.
static LogicalResult placeInArena(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  RNNDialect::OffsetAttrHelper offsetAttr(ctx);
  Attribute planned =
      func->getAttr(RNNDialect::ArenaBytesAttrHelper::getNameStr());
  if (!planned || func.isExternal())
    return success();
  auto arenaBytes = dyn_cast<IntegerAttr>(planned);
  if (!arenaBytes || arenaBytes.getValue().isNegative())
    return rnn::emitOpErrorAt(func,
                              "rnn.arena_bytes must be a non-negative integer, "
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

  auto arenaType =
      MemRefType::get({arenaSize}, IntegerType::get(func.getContext(), 8));
  FailureOr<Value> arena = addArenaArgument(func, arenaType);
  if (failed(arena))
    return failure();
  IRRewriter rewriter(func.getContext());
  for (memref::AllocOp alloc : allocs) {
    rewriter.setInsertionPoint(alloc);
    Value offset = arith::ConstantIndexOp::create(
        rewriter, alloc.getLoc(), offsetAttr.getAttr(alloc).getInt());
    replaceByView(rewriter, alloc, *arena, offset);
  }
  return success();
}

/// Places the buffers of `func`, a function for every T and B, in an arena
/// of `memref<?xi8>` laid out by `plan`'s size classes.
static LogicalResult placeSymbolic(func::FuncOp func, const MemoryPlan &plan) {
  const SymbolicPlan &symbolic = *plan.getSymbolic();
  const SizeSymbols &rows = plan.getLiveness().getSizeSymbols();
  IRRewriter rewriter(func.getContext());
  auto module = func->getParentOfType<ModuleOp>();
  std::string sizeName = (func.getName() + ".arena_bytes").str();
  if (module.lookupSymbol(sizeName))
    return rnn::emitOpErrorAt(func,
                              "cannot have its arena's size function: symbol @")
           << sizeName << " already exists";
  SmallVector<std::pair<SizeExpr, int64_t>> parts;
  for (const SymbolicPlan::SizeClass &sizeClass : symbolic.classes)
    parts.push_back({sizeClass.size, sizeClass.slots});
  func::FuncOp sizeFunction = buildSizeFunction(
      rewriter, func, sizeName, parts, MemoryPlan::kAlignment, rows);
  auto arenaType = MemRefType::get({ShapedType::kDynamic},
                                   rewriter.getIntegerType(8));
  FailureOr<Value> arena = addArenaArgument(
      func, arenaType,
      {rewriter.getNamedAttr(RNNDialect::SizeAttrHelper::getNameStr(),
                             FlatSymbolRefAttr::get(sizeFunction))});
  if (failed(arena))
    return failure();

  // The offsets, when the function starts: each class's base, and the
  // size of its slots rounded up to the alignment.
  rewriter.setInsertionPointToStart(&func.getBody().front());
  Location loc = func.getLoc();
  std::optional<ShapeValues> shape = buildShapeValues(rewriter, func, rows);
  if (!shape)
    return rnn::emitOpErrorAt(func,
                              "has buffers sized by T or B but no argument "
                              "to read them from");
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  SmallVector<Value> bases, slotBytes;
  Value next = index(0);
  Value alignment = index(MemoryPlan::kAlignment);
  for (const SymbolicPlan::SizeClass &sizeClass : symbolic.classes) {
    Value bytes = sizeClass.size.build(rewriter, loc, *shape);
    Value slot = arith::MulIOp::create(
        rewriter, loc, arith::CeilDivUIOp::create(rewriter, loc, bytes, alignment),
        alignment);
    bases.push_back(next);
    slotBytes.push_back(slot);
    next = arith::AddIOp::create(
        rewriter, loc, next,
        arith::MulIOp::create(rewriter, loc, slot, index(sizeClass.slots)));
  }
  SmallVector<Value> offsets;
  for (auto [sizeClass, slot] : symbolic.placement)
    offsets.push_back(arith::AddIOp::create(
        rewriter, loc, bases[sizeClass],
        arith::MulIOp::create(rewriter, loc, slotBytes[sizeClass], index(slot))));
  for (auto [info, offset] :
       llvm::zip(plan.getLiveness().getBuffers(), offsets))
    replaceByView(rewriter, cast<memref::AllocOp>(info.alloc), *arena, offset);
  return success();
}

namespace {
struct RNNPlaceInArenaPass
    : public rnn::impl::RNNPlaceInArenaPassBase<RNNPlaceInArenaPass> {
  void runOnOperation() override {
    for (auto func :
         llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      if (!func->hasAttr(RNNDialect::ArenaBytesAttrHelper::getNameStr())) {
        MemoryPlan plan(func);
        if (plan.getSymbolic() && failed(placeSymbolic(func, plan)))
          return signalPassFailure();
        continue;
      }
      if (failed(placeInArena(func)))
        return signalPassFailure();
    }
  }
};
} // namespace
