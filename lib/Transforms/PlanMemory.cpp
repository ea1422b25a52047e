//===- PlanMemory.cpp - rnn-plan-memory -----------------------------------===//
//
// Attaches the MemoryPlan analysis of each function to the IR (see
// Passes.td): arena offsets on the allocations, the predicted figures on the
// function.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/MemoryPlan.h"
#include "rnn/Support/Diagnostics.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNPLANMEMORYPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

/// Whether `func` takes or allocates buffers: not a function of sizes
/// alone, such as the arena's size function of a dynamic shape, which
/// needs no plan (nor an arena).
static bool handlesBuffers(func::FuncOp func) {
  if (llvm::any_of(func.getArgumentTypes(), llvm::IsaPred<BaseMemRefType>))
    return true;
  return func.walk([](memref::AllocOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Whether rnn-place-in-arena has placed `func`'s buffers: it takes the
/// arena, an argument named "arena", and allocates nothing of its own.
static bool placedInArena(func::FuncOp func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(
            i, RNNDialect::NameAttrHelper::getNameStr());
        name && name.getValue() == "arena")
      return true;
  return false;
}

namespace {
struct RNNPlanMemoryPass
    : public rnn::impl::RNNPlanMemoryPassBase<RNNPlanMemoryPass> {
  using RNNPlanMemoryPassBase::RNNPlanMemoryPassBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && handlesBuffers(func) &&
          failed(attachPlan(func)))
        return signalPassFailure();
    // Attributes leave the plans as they are.
    markAllAnalysesPreserved();
  }

  LogicalResult attachPlan(func::FuncOp func) {
    // Its plan is the one it was placed by: planned again, its views of
    // the arena would make an empty plan.
    if (placedInArena(func))
      return success();
    const MemoryPlan &plan = getChildAnalysis<MemoryPlan>(func);
    // A function for every T and B has its plan in closed form
    // (MemoryPlan::getSymbolic), evaluated per call; a variant under a
    // budget records its peak, which each call compares with the budget
    // (rnn-dispatch-remat).
    if (const std::optional<SymbolicPlan> &symbolic = plan.getSymbolic()) {
      MLIRContext *ctx = &getContext();
      if (!RNNDialect::RematVariantAttrHelper(ctx).isAttrPresent(func))
        return success();
      Builder b(ctx);
      const SizeSymbols &symbols = plan.getLiveness().getSizeSymbols();
      SmallVector<NamedAttribute> attrs = {
          b.getNamedAttr("peak", symbolic->peak.toAttr(b))};
      if (symbols.rows)
        attrs.push_back(
            b.getNamedAttr("rows", b.getI64IntegerAttr(*symbols.rows)));
      if (symbols.chunk)
        attrs.push_back(
            b.getNamedAttr("chunk", b.getI64IntegerAttr(*symbols.chunk)));
      RNNDialect::SymbolicPeakAttrHelper(ctx).setAttr(
          func, b.getDictionaryAttr(attrs));
      return success();
    }
    if (!plan.getLiveness().isStatic()) {
      rnn::emitRemarkAt(func,
                        "rnn-plan-memory: buffers allocated inside loops, "
                        "with dynamic sizes or with layouts other than the "
                        "identity; no static plan");
      return success();
    }
    if (!plan.isPlanned())
      return rnn::emitErrorAt(func, "rnn-plan-memory: ") << plan.getError();
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    RNNDialect::OffsetAttrHelper offsetAttr(ctx);
    for (auto [info, offset] :
         llvm::zip(plan.getLiveness().getBuffers(), plan.getOffsets()))
      offsetAttr.setAttr(info.alloc, b.getI64IntegerAttr(offset));
    RNNDialect::PredictedPeakBytesAttrHelper(ctx).setAttr(
        func, b.getI64IntegerAttr(plan.getPeakBytes()));
    RNNDialect::ArenaBytesAttrHelper(ctx).setAttr(
        func, b.getI64IntegerAttr(plan.getArenaBytes()));
    if (std::optional<PhaseBytes> phases = plan.getPhases()) {
      RNNDialect::PredictedFwdPeakBytesAttrHelper(ctx).setAttr(
          func, b.getI64IntegerAttr(phases->fwdPeak));
      RNNDialect::PredictedBwdPeakBytesAttrHelper(ctx).setAttr(
          func, b.getI64IntegerAttr(phases->bwdPeak));
      RNNDialect::PredictedSavedBytesAttrHelper(ctx).setAttr(
          func, b.getI64IntegerAttr(phases->saved));
    }
    return success();
  }
};
} // namespace
