//===- TestBufferLiveness.cpp - -test-rnn-liveness ------------------------===//
//
// Prints the BufferLiveness of every function: each top-level buffer with
// its role, bytes, allocation, last use and dealloc positions, and the
// simulated peak, so that lit tests can check the analysis directly.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/BufferLiveness.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::rnn;

namespace {
struct TestBufferLivenessPass
    : public PassWrapper<TestBufferLivenessPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestBufferLivenessPass)

  StringRef getArgument() const final { return "test-rnn-liveness"; }
  StringRef getDescription() const final {
    return "Print the live ranges of each function's buffers";
  }

  /// Functions in module order, so that the output is deterministic.
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        print(func);
  }

  void print(func::FuncOp func) {
    BufferLiveness liveness(func);
    llvm::raw_ostream &os = llvm::outs();
    os << "liveness of @" << func.getName()
       << (liveness.isStatic()     ? ""
           : liveness.isSymbolic() ? " (symbolic)"
                                   : " (not static)")
       << "\n";
    for (const BufferInfo &buffer : liveness.getBuffers()) {
      os << "  " << buffer.role << " "
         << (buffer.size ? buffer.size->str() : std::string("?"))
         << " bytes: alloc " << buffer.allocIndex << ", last use "
         << buffer.lastUseIndex;
      if (buffer.dealloc)
        os << ", dealloc " << buffer.deallocIndex;
      if (buffer.returned)
        os << ", returned";
      if (buffer.escapes)
        os << ", escapes";
      os << "\n";
    }
    if (!liveness.isStatic() && liveness.isSymbolic()) {
      SizeMax peak;
      for (const SizeExpr &held : liveness.getHeldSizes())
        peak.add(held);
      os << "  peak " << peak.str() << " bytes\n";
      return;
    }
    os << "  peak " << liveness.getPeakBytes() << " bytes\n";
  }
};
} // namespace

namespace mlir {
namespace rnn {
void registerTestGemmCallsPass();
void registerTestCellFactsPass();
void registerTestMemoryPlanPass();
void registerTestRematChoicePass();
void registerTestPasses() {
  PassRegistration<TestBufferLivenessPass>();
  registerTestGemmCallsPass();
  registerTestCellFactsPass();
  registerTestMemoryPlanPass();
  registerTestRematChoicePass();
}
} // namespace rnn
} // namespace mlir
