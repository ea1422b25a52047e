//===- DSE.cpp - rnn-dse --------------------------------------------------===//
//
// Dead-store elimination on buffers (see Passes.td). Upstream has no such
// pass: canonicalization erases an allocation only when its direct users
// are stores, and no upstream pass reasons about a buffer through its views.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNDSEPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

/// Whether every effect of `op` is a write or a free of one of `aliases`:
/// then deleting `op` changes nothing but the contents of the buffer.
static bool onlyWritesTo(Operation *op, const llvm::SetVector<Value> &aliases) {
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface)
    return false;
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  if (effects.empty())
    return false;
  for (const MemoryEffects::EffectInstance &effect : effects) {
    if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
      return false;
    if (!effect.getValue() || !aliases.contains(effect.getValue()))
      return false;
  }
  // The op must not produce values others use (a store has no results).
  return op->use_empty();
}

/// Deletes `alloc` with all its stores and views if nothing reads it.
static bool eraseIfDead(memref::AllocOp alloc, RewriterBase &rewriter) {
  SmallVector<Value> aliasList = collectAliases(alloc.getResult());
  llvm::SetVector<Value> aliases(aliasList.begin(), aliasList.end());
  // A select between this buffer and another one may write the other one:
  // its stores are not dead.
  for (Value alias : aliasList)
    if (auto select = alias.getDefiningOp<arith::SelectOp>())
      if (!aliases.contains(select.getTrueValue()) ||
          !aliases.contains(select.getFalseValue()))
        return false;
  SmallVector<Operation *> writers;
  for (Value alias : aliases) {
    for (OpOperand &use : alias.getUses()) {
      Operation *user = use.getOwner();
      // Views are aliases themselves; their users are checked in turn.
      if (llvm::any_of(user->getResults(),
                       [&](Value r) { return aliases.contains(r); }))
        continue;
      if (!onlyWritesTo(user, aliases))
        return false;
      writers.push_back(user);
    }
  }
  for (Operation *writer : writers)
    rewriter.eraseOp(writer);
  // Views in reverse order of definition, then the allocation.
  for (Value alias : llvm::reverse(aliasList)) {
    Operation *def = alias.getDefiningOp();
    if (def && def->use_empty())
      rewriter.eraseOp(def);
  }
  return true;
}

namespace {
struct RNNDSEPass : public rnn::impl::RNNDSEPassBase<RNNDSEPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<memref::AllocOp> allocs;
      func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
      for (memref::AllocOp alloc : allocs)
        changed |= eraseIfDead(alloc, rewriter);
      // Loads and arithmetic that only fed the deleted stores.
      if (changed)
        (void)runRegionDCE(rewriter, func->getRegions());
    }
  }
};
} // namespace
