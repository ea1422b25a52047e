//===- SplitTraining.cpp - rnn-split-training -----------------------------===//
//
// Splits a training function on buffers into a forward and a backward
// function that communicate through a caller-owned saved region (see
// Passes.td). Upstream has no pass that outlines part of a function into
// another with the buffers that cross the cut packed into one argument:
// the cut here is a single point of a straight-line block, so the values
// crossing it are found by one walk over the backward's operands.
//
// In a function for every T and B the saved buffers have sizes in T and B
// (SizeExpr): each split function computes their offsets when it starts,
// from the T and B of its arguments, and the saved region's size is a
// function of (T, B), `@<base>.saved_bytes`, named by the argument's
// rnn.size, also where the region is empty or of a constant size.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Analysis/MemoryPlan.h"
#include "rnn/Dialect/RNNOps.h"
#include "rnn/Support/Diagnostics.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNSPLITTRAININGPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

/// Offsets in the saved region are multiples of this, as in the arena.
static constexpr int64_t kAlignment = MemoryPlan::kAlignment;

/// The top-level `rnn.begin_backward` of `func`, if any.
static BeginBackwardOp findBoundary(func::FuncOp func) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return nullptr;
  for (Operation &op : func.getBody().front())
    if (auto boundary = dyn_cast<BeginBackwardOp>(op))
      return boundary;
  return nullptr;
}

namespace {
/// The split of one training function.
class Splitter {
public:
  Splitter(func::FuncOp func, BeginBackwardOp boundary)
      : func(func), boundary(boundary),
        base(func.getName().drop_back(func.getName().ends_with("_grad") ? 5
                                                                        : 0)) {}

  LogicalResult run();

private:
  bool inForward(Operation *op) const {
    return op->getBlock() == boundary->getBlock() &&
           op->isBeforeInBlock(boundary);
  }
  /// Records what a backward operand defined before the boundary needs.
  LogicalResult classify(Value value);
  /// Places the saved buffers in the saved region, in allocation order.
  LogicalResult layOutSavedRegion();
  /// Creates `@<base><suffix>` after `after` with the arguments `args` of
  /// `func` and a last `saved` argument; returns it with the mapping of
  /// `func`'s arguments to its own, and the saved region's argument.
  func::FuncOp createFunction(Operation *after, StringRef suffix,
                              ArrayRef<unsigned> args, IRMapping &mapping,
                              Value &saved);
  /// A view of the saved region at `alloc`'s offset, with its role; its
  /// dynamic sizes are looked up in `mapping`.
  Value createSavedView(OpBuilder &builder, memref::AllocOp alloc, Value saved,
                        const IRMapping &mapping);
  /// In a symbolic split, the offset of each saved buffer in the function
  /// `created`, computed at the builder's position.
  LogicalResult buildSavedOffsets(OpBuilder &builder, func::FuncOp created);

  func::FuncOp func;
  BeginBackwardOp boundary;
  /// The name of the companions: `@<base>_fwd`, `@<base>_bwd`.
  StringRef base;
  /// Forward buffers the backward reads: the saved region, in order.
  llvm::SetVector<Operation *> saved;
  /// Each saved buffer's offset in the saved region.
  DenseMap<Operation *, int64_t> offsets;
  /// Bytes of the saved region, and its layout (`rnn.saved`).
  int64_t savedBytes = 0;
  ArrayAttr savedLayout;
  /// Whether the function is of every T and B (an argument of dynamic
  /// shape) or a saved buffer has dynamic sizes: then each buffer's size,
  /// the saved region's size function, the GEMM rows of a size in P, and
  /// the offsets in the function being built.
  bool symbolic = false;
  DenseMap<Operation *, SizeExpr> sizes;
  func::FuncOp sizeFunction;
  SizeSymbols rows;
  DenseMap<Operation *, Value> symbolicOffsets;
  /// Forward allocations only the backward uses: they move to it.
  llvm::SetVector<Operation *> moved;
  /// Pure forward ops the backward recomputes, in forward order.
  llvm::SetVector<Operation *> recomputed;
  /// Arguments of `func` each side uses.
  llvm::SmallSetVector<unsigned, 16> forwardArgs, backwardArgs;
};
} // namespace

LogicalResult Splitter::classify(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    backwardArgs.insert(arg.getArgNumber());
    return success();
  }
  Operation *def = value.getDefiningOp();
  if (!inForward(def) || saved.contains(def) || moved.contains(def) ||
      recomputed.contains(def))
    return success();
  if (auto alloc = dyn_cast<memref::AllocOp>(def)) {
    // A buffer the forward only allocates belongs to the backward.
    bool forwardUse = llvm::any_of(alloc->getUsers(), [&](Operation *user) {
      Operation *top = boundary->getBlock()->findAncestorOpInBlock(*user);
      return top && inForward(top);
    });
    // Its dynamic sizes (T, B, P) are recomputed where it is used.
    if (!alloc.getSymbolOperands().empty())
      return alloc.emitOpError("crosses the forward/backward boundary with "
                               "symbol operands");
    for (Value size : alloc.getDynamicSizes())
      if (failed(classify(size)))
        return failure();
    if (!forwardUse) {
      moved.insert(alloc);
      return success();
    }
    if (alloc.getType().hasStaticShape()) {
      if (!getBufferBytes(alloc.getType(), DataLayout::closest(alloc)))
        return alloc.emitOpError("crosses the forward/backward boundary "
                                 "without a size in bytes");
    } else {
      std::optional<SizeExpr> size =
          SizeExpr::bytesOf(alloc.getType(), alloc.getDynamicSizes(),
                            DataLayout::closest(alloc), rows);
      if (!size)
        return alloc.emitOpError(
            "crosses the forward/backward boundary with sizes that are "
            "not T, B or the GEMM block; the saved region's size must be a "
            "function of T and B");
      sizes[alloc] = *size;
      // Sized by constants in a static function: laid out as in one of
      // every shape (whose T and B its arguments then lack).
      symbolic = true;
    }
    saved.insert(alloc);
    return success();
  }
  // Free of memory effects: recomputed in the backward, where it runs as
  // unconditionally as in the forward (a division of sizes, say, is not
  // speculatable but safe there).
  if (def->getNumRegions() == 0 && isMemoryEffectFree(def)) {
    for (Value operand : def->getOperands())
      if (failed(classify(operand)))
        return failure();
    recomputed.insert(def);
    return success();
  }
  return def->emitOpError("defines a value that crosses the forward/backward "
                          "boundary of @")
         << func.getName()
         << " but is neither a buffer, an argument nor a pure op";
}

func::FuncOp Splitter::createFunction(Operation *after, StringRef suffix,
                                      ArrayRef<unsigned> args,
                                      IRMapping &mapping, Value &savedArg) {
  OpBuilder builder(func);
  builder.setInsertionPointAfter(after);
  SmallVector<Type> types;
  for (unsigned arg : args)
    types.push_back(func.getArgument(arg).getType());
  types.push_back(MemRefType::get(
      {symbolic ? ShapedType::kDynamic : savedBytes}, builder.getIntegerType(8)));
  auto created =
      func::FuncOp::create(builder, func.getLoc(), (base + suffix).str(),
                           builder.getFunctionType(types, {}));
  created.setVisibility(func.getVisibility());
  for (NamedAttribute attr : func->getDiscardableAttrs())
    created->setAttr(attr.getName(), attr.getValue());
  Block *entry = created.addEntryBlock();
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (DictionaryAttr attrs = func.getArgAttrDict(arg))
      created.setArgAttrs(i, attrs);
    mapping.map(func.getArgument(arg), entry->getArgument(i));
  }
  SmallVector<NamedAttribute> savedAttrs = {builder.getNamedAttr(
      RNNDialect::NameAttrHelper::getNameStr(), builder.getStringAttr("saved"))};
  if (symbolic)
    savedAttrs.push_back(
        builder.getNamedAttr(RNNDialect::SizeAttrHelper::getNameStr(),
                             FlatSymbolRefAttr::get(sizeFunction)));
  created.setArgAttrs(args.size(), builder.getDictionaryAttr(savedAttrs));
  savedArg = entry->getArgument(args.size());

  RNNDialect::SavedAttrHelper(builder.getContext())
      .setAttr(created, savedLayout);
  if (!symbolic)
    RNNDialect::SavedBytesAttrHelper(builder.getContext())
        .setAttr(created, builder.getI64IntegerAttr(savedBytes));
  return created;
}

LogicalResult Splitter::layOutSavedRegion() {
  SmallVector<Operation *> inOrder(saved.begin(), saved.end());
  llvm::sort(inOrder,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  saved = llvm::SetVector<Operation *>(inOrder.begin(), inOrder.end());
  Builder builder(func.getContext());
  DataLayout layout = DataLayout::closest(func);
  SmallVector<Attribute> entries;
  if (symbolic) {
    // Offsets are computed by each function; the layout names the sizes.
    SmallVector<std::pair<SizeExpr, int64_t>> parts;
    for (Operation *op : saved) {
      SizeExpr size = sizes.count(op)
                          ? sizes.lookup(op)
                          : SizeExpr::constant(*getBufferBytes(
                                cast<memref::AllocOp>(op).getType(), layout));
      sizes[op] = size;
      parts.push_back({size, 1});
      auto role = op->getAttrOfType<StringAttr>(kRoleAttr);
      entries.push_back(builder.getDictionaryAttr(
          {builder.getNamedAttr("role",
                                role ? role : builder.getStringAttr("buffer")),
           builder.getNamedAttr("size", builder.getStringAttr(size.str()))}));
    }
    savedLayout = builder.getArrayAttr(entries);
    std::string name = (base + ".saved_bytes").str();
    if (func->getParentOfType<ModuleOp>().lookupSymbol(name))
      return rnn::emitOpErrorAt(func, "cannot have its saved region's size "
                                      "function: symbol @")
             << name << " already exists";
    OpBuilder opBuilder(func.getContext());
    sizeFunction =
        buildSizeFunction(opBuilder, func, name, parts, kAlignment, rows);
    return success();
  }
  int64_t offset = 0;
  for (Operation *op : saved) {
    int64_t bytes =
        *getBufferBytes(cast<memref::AllocOp>(op).getType(), layout);
    offsets[op] = offset;
    if (llvm::AddOverflow(offset, bytes, savedBytes) ||
        llvm::AddOverflow(savedBytes, kAlignment - 1, offset))
      return rnn::emitOpErrorAt(func,
                                "has a saved region beyond 64-bit offsets");
    auto role = op->getAttrOfType<StringAttr>(kRoleAttr);
    entries.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("role",
                              role ? role : builder.getStringAttr("buffer")),
         builder.getNamedAttr("offset", builder.getI64IntegerAttr(offsets[op])),
         builder.getNamedAttr("bytes", builder.getI64IntegerAttr(bytes))}));
    offset = offset / kAlignment * kAlignment;
  }
  savedLayout = builder.getArrayAttr(entries);
  return success();
}

LogicalResult Splitter::buildSavedOffsets(OpBuilder &builder,
                                          func::FuncOp created) {
  symbolicOffsets.clear();
  if (!symbolic || saved.empty())
    return success();
  Location loc = created.getLoc();
  std::optional<ShapeValues> shape = buildShapeValues(builder, created, rows);
  if (!shape)
    return rnn::emitOpErrorAt(created,
                              "has a saved region sized by T or B but no "
                              "argument to read them from");
  Value offset = arith::ConstantIndexOp::create(builder, loc, 0);
  Value alignment = arith::ConstantIndexOp::create(builder, loc, kAlignment);
  for (Operation *op : saved) {
    symbolicOffsets[op] = offset;
    Value bytes = sizes.lookup(op).build(builder, loc, *shape);
    Value rounded = arith::MulIOp::create(
        builder, loc, arith::CeilDivUIOp::create(builder, loc, bytes, alignment),
        alignment);
    offset = arith::AddIOp::create(builder, loc, offset, rounded);
  }
  return success();
}

Value Splitter::createSavedView(OpBuilder &builder, memref::AllocOp alloc,
                                Value savedArg, const IRMapping &mapping) {
  Value shift = symbolic ? symbolicOffsets.lookup(alloc)
                         : arith::ConstantIndexOp::create(
                               builder, alloc.getLoc(), offsets.lookup(alloc))
                               .getResult();
  SmallVector<Value> dynamicSizes = llvm::map_to_vector(
      alloc.getDynamicSizes(),
      [&](Value size) { return mapping.lookupOrDefault(size); });
  auto view = memref::ViewOp::create(builder, alloc.getLoc(), alloc.getType(),
                                     savedArg, shift, dynamicSizes);
  if (Attribute role = alloc->getAttr(kRoleAttr))
    view->setAttr(kRoleAttr, role);
  return view;
}

LogicalResult Splitter::run() {
  if (func.getNumResults() != 0)
    return rnn::emitOpErrorAt(func,
                              "cannot be split into forward and backward: it "
                              "returns values (rnn-split-training expects "
                              "results as out-params, see "
                              "buffer-results-to-out-params)");
  auto module = func->getParentOfType<ModuleOp>();
  for (StringRef suffix : {"_fwd", "_bwd"})
    if (module.lookupSymbol((base + suffix).str()))
      return rnn::emitOpErrorAt(func, "cannot be split: symbol @")
             << base << suffix << " already exists";

  // A function of every T and B has a saved region sized by (T, B), also
  // where nothing saved depends on them, or nothing is saved (a GRU of one
  // layer under `gates`): every remat variant of a budget then takes the
  // region as the same type, with a size function.
  symbolic = llvm::any_of(func.getArgumentTypes(), [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && !shaped.hasStaticShape();
  });

  Block &block = func.getBody().front();
  SmallVector<Operation *> forward, backward;
  for (Operation &op : block) {
    if (&op == boundary.getOperation())
      continue;
    (inForward(&op) ? forward : backward).push_back(&op);
  }

  // What the backward needs from before the boundary.
  for (Operation *op : backward) {
    WalkResult walk = op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Region *home = operand.getParentRegion();
        // Values defined inside `op` are cloned with it.
        if (home != &func.getBody())
          continue;
        if (auto arg = dyn_cast<BlockArgument>(operand)) {
          backwardArgs.insert(arg.getArgNumber());
          continue;
        }
        if (failed(classify(operand)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  for (Operation *op : forward) {
    if (moved.contains(op))
      continue;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand))
          if (arg.getOwner() == &block)
            forwardArgs.insert(arg.getArgNumber());
    });
  }

  if (failed(layOutSavedRegion()))
    return failure();

  SmallVector<unsigned> fwdArgs(forwardArgs.begin(), forwardArgs.end());
  SmallVector<unsigned> bwdArgs(backwardArgs.begin(), backwardArgs.end());
  llvm::sort(fwdArgs);
  llvm::sort(bwdArgs);

  // Forward: the ops before the boundary, saved buffers as views.
  IRMapping fwdMap;
  Value fwdSaved;
  func::FuncOp fwd = createFunction(func, "_fwd", fwdArgs, fwdMap, fwdSaved);
  auto fwdBuilder = OpBuilder::atBlockBegin(&fwd.getBody().front());
  if (failed(buildSavedOffsets(fwdBuilder, fwd)))
    return failure();
  for (Operation *op : forward) {
    if (moved.contains(op))
      continue;
    if (saved.contains(op)) {
      fwdMap.map(op->getResult(0),
                 createSavedView(fwdBuilder, cast<memref::AllocOp>(op),
                                 fwdSaved, fwdMap));
      continue;
    }
    fwdBuilder.clone(*op, fwdMap);
  }
  func::ReturnOp::create(fwdBuilder, func.getLoc());

  // Backward: what it needs from the forward, then the ops after the
  // boundary; the saved region is the caller's, so its frees go.
  IRMapping bwdMap;
  Value bwdSaved;
  func::FuncOp bwd = createFunction(fwd, "_bwd", bwdArgs, bwdMap, bwdSaved);
  auto bwdBuilder = OpBuilder::atBlockBegin(&bwd.getBody().front());
  if (failed(buildSavedOffsets(bwdBuilder, bwd)))
    return failure();
  for (Operation *op : forward) {
    if (saved.contains(op))
      bwdMap.map(op->getResult(0),
                 createSavedView(bwdBuilder, cast<memref::AllocOp>(op),
                                 bwdSaved, bwdMap));
    else if (moved.contains(op) || recomputed.contains(op))
      bwdBuilder.clone(*op, bwdMap);
  }
  for (Operation *op : backward) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
      if (Operation *def = dealloc.getMemref().getDefiningOp();
          def && saved.contains(def))
        continue;
    bwdBuilder.clone(*op, bwdMap);
  }
  return success();
}

namespace {
struct RNNSplitTrainingPass
    : public rnn::impl::RNNSplitTrainingPassBase<RNNSplitTrainingPass> {
  void runOnOperation() override {
    SmallVector<std::pair<func::FuncOp, BeginBackwardOp>> training;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (BeginBackwardOp boundary = findBoundary(func))
        training.push_back({func, boundary});
    for (auto [func, boundary] : training)
      if (failed(Splitter(func, boundary).run()))
        return signalPassFailure();
  }
};
} // namespace
