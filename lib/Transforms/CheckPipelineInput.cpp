//===- CheckPipelineInput.cpp - rnn-check-pipeline-input ------------------===//
//
// Rejects, naming the op and the rule, a program that upstream's
// ownership-based buffer deallocation (which the rnn pipelines run on every
// function) cannot take: one that frees memrefs itself, has an op whose
// memory effects are unknown, or loops through unstructured control flow
// (see Passes.td); and one that returns a value twice, whose two result
// buffers upstream's buffer-results-to-out-params would make one (and
// crash on). Upstream would fail on it later with a message about its
// own internals, after the rnn passes have rewritten the IR.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/Diagnostics.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "rnn/Analysis/MemRefEffects.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNCHECKPIPELINEINPUTPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

/// Whether the memory effects of `op` are known to the deallocation: it
/// declares them, takes them from its regions, or is a call (whose callee
/// is analyzed on its own).
static bool hasKnownMemoryEffects(Operation *op) {
  return isa<MemoryEffectOpInterface, CallOpInterface>(op) ||
         op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
}

/// Whether a block of `region` branches back to a block that dominates it
/// (a loop built from branches).
static bool hasBackEdge(Region &region, DominanceInfo &dominance) {
  for (Block &block : region)
    for (Block *successor : block.getSuccessors())
      if (dominance.dominates(successor, &block))
        return true;
  return false;
}

namespace {
struct RNNCheckPipelineInputPass
    : public rnn::impl::RNNCheckPipelineInputPassBase<
          RNNCheckPipelineInputPass> {
  void runOnOperation() override {
    DominanceInfo &dominance = getAnalysis<DominanceInfo>();
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (rnn::hasMemRefEffect<MemoryEffects::Free>(op)) {
        op->emitOpError("frees a buffer: the rnn pipelines place every "
                        "deallocation themselves, so their input must not "
                        "free memrefs");
        return WalkResult::interrupt();
      }
      // Within the functions the deallocation runs on.
      auto function = dyn_cast<FunctionOpInterface>(op);
      if (!function)
        function = op->getParentOfType<FunctionOpInterface>();
      if (!function || function.isExternal())
        return WalkResult::advance();
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        llvm::SmallDenseMap<Value, unsigned> first;
        for (OpOperand &operand : ret->getOpOperands()) {
          if (!isa<ShapedType>(operand.get().getType()))
            continue;
          auto [it, inserted] =
              first.try_emplace(operand.get(), operand.getOperandNumber());
          if (inserted)
            continue;
          ret.emitOpError()
              << "returns one tensor or buffer as results " << it->second
              << " and " << operand.getOperandNumber()
              << ": the rnn pipelines give each result its own "
                 "buffer, so a function returns a value once";
          return WalkResult::interrupt();
        }
      }
      // The op named in these two may hold regions (a whole function for a
      // loop of branches): the error gives its name and location only.
      if (op != function && !hasKnownMemoryEffects(op)) {
        rnn::emitErrorAt(op) << "the rnn pipelines place every deallocation "
                                "themselves, so each op of their input must "
                                "declare what it does to memory: '"
                             << op->getName() << "' has unknown memory effects";
        return WalkResult::interrupt();
      }
      for (Region &region : op->getRegions())
        if (hasBackEdge(region, dominance)) {
          rnn::emitErrorAt(op) << "the rnn pipelines place every deallocation "
                                  "themselves, for structured loops (scf.for, "
                                  "scf.while) only: '"
                               << op->getName() << "' has a loop of branches";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
