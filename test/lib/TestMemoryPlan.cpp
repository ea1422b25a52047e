//===- TestMemoryPlan.cpp - -test-rnn-memory-plan -------------------------===//
//
// Prints the MemoryPlan analysis of every function, as the pass manager
// caches it: each buffer's offset, the peak, the arena and the phase
// figures, or why there is no plan, so that lit tests check the analysis
// without the attributes rnn-plan-memory writes.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::rnn;

namespace {
struct TestMemoryPlanPass
    : public PassWrapper<TestMemoryPlanPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestMemoryPlanPass)

  StringRef getArgument() const final { return "test-rnn-memory-plan"; }
  StringRef getDescription() const final {
    return "Print the memory plan of each function";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        print(func, getChildAnalysis<MemoryPlan>(func));
    markAllAnalysesPreserved();
  }

  void print(func::FuncOp func, const MemoryPlan &plan) {
    llvm::raw_ostream &os = llvm::outs();
    os << "plan of @" << func.getName();
    if (const std::optional<SymbolicPlan> &symbolic = plan.getSymbolic()) {
      printSymbolic(os, plan, *symbolic);
      return;
    }
    if (!plan.getLiveness().isStatic()) {
      os << ": none (not static)\n";
      return;
    }
    if (!plan.isPlanned()) {
      os << ": none (" << plan.getError() << ")\n";
      return;
    }
    os << ": peak " << plan.getPeakBytes() << ", arena "
       << plan.getArenaBytes() << "\n";
    for (auto [buffer, offset] :
         llvm::zip(plan.getLiveness().getBuffers(), plan.getOffsets()))
      os << "  " << buffer.role << " at " << offset << "\n";
    if (std::optional<PhaseBytes> phases = plan.getPhases())
      os << "  backward from " << *plan.getBackwardStart() << ": fwd "
         << phases->fwdPeak << ", bwd " << phases->bwdPeak << ", saved "
         << phases->saved << "\n";
  }

  /// A plan in T, B, P (K, N): the peak, the size classes (the arena is the
  /// sum of each class's slots of its size rounded up to 64 bytes), each
  /// buffer's class and slot, the phases.
  void printSymbolic(llvm::raw_ostream &os, const MemoryPlan &plan,
                     const SymbolicPlan &symbolic) {
    os << ": peak " << symbolic.peak.str();
    const SizeSymbols &symbols = plan.getLiveness().getSizeSymbols();
    if (symbols.rows)
      os << " (P: blocks of " << *symbols.rows << " rows)";
    if (symbols.chunk)
      os << " (K, N: chunks of " << *symbols.chunk << " steps)";
    os << "\n";
    for (auto [i, sizeClass] : llvm::enumerate(symbolic.classes))
      os << "  class " << i << ": " << sizeClass.slots << " x "
         << sizeClass.size.str() << "\n";
    for (auto [buffer, place] :
         llvm::zip(plan.getLiveness().getBuffers(), symbolic.placement))
      os << "  " << buffer.role << " in class " << place.first << " slot "
         << place.second << "\n";
    if (symbolic.saved)
      os << "  backward from " << *plan.getBackwardStart() << ": fwd "
         << symbolic.fwdPeak->str() << ", bwd " << symbolic.bwdPeak->str()
         << ", saved " << symbolic.saved->str() << "\n";
  }
};
} // namespace

namespace mlir {
namespace rnn {
void registerTestMemoryPlanPass() { PassRegistration<TestMemoryPlanPass>(); }
} // namespace rnn
} // namespace mlir
