//===- TestGemmCalls.cpp - -test-rnn-gemm-calls ---------------------------===//
//
// Counts the GEMMs a function issues when it runs once: every linalg.matmul
// and every call to a runtime sgemm (`rnnrt_sgemm`, `rnnrt_cuda_sgemm`),
// weighted by the trip counts of the scf.for loops around it. Prints the
// total per function and, for each loop that issues GEMMs, its trip count,
// its GEMMs per iteration and how many of those are in its own body (not
// in nested loops), indented by depth, so that lit tests can check where
// the GEMMs of a kernel are (one per time step, the rest per block of
// steps) and benchmarks can report GEMM calls per training step.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Whether `op` issues one GEMM.
static bool isGemm(Operation *op) {
  if (isa<linalg::MatmulOp>(op))
    return true;
  auto call = dyn_cast<func::CallOp>(op);
  return call && (call.getCallee() == "rnnrt_sgemm" ||
                  call.getCallee() == "rnnrt_cuda_sgemm");
}

namespace {
struct TestGemmCallsPass
    : public PassWrapper<TestGemmCallsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestGemmCallsPass)

  StringRef getArgument() const final { return "test-rnn-gemm-calls"; }
  StringRef getDescription() const final {
    return "Print the GEMMs each function issues per run and per loop "
           "iteration";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      std::string lines;
      llvm::raw_string_ostream os(lines);
      std::optional<int64_t> total = count(func.getBody(), 1, os);
      llvm::outs() << "gemm calls of @" << func.getName() << ": ";
      if (total)
        llvm::outs() << *total;
      else
        llvm::outs() << "unknown (a loop without constant bounds)";
      llvm::outs() << "\n" << lines;
    }
  }

  /// GEMMs issued by one run of `region`; prints a line per loop that
  /// issues GEMMs directly. None if a loop has no constant trip count.
  std::optional<int64_t> count(Region &region, unsigned depth,
                               llvm::raw_ostream &os) {
    std::optional<int64_t> total = 0;
    for (Operation &op : region.getOps()) {
      if (isGemm(&op)) {
        *total += 1;
        continue;
      }
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop) {
        for (Region &nested : op.getRegions()) {
          std::optional<int64_t> inner = count(nested, depth, os);
          total = inner && total ? std::optional<int64_t>(*total + *inner)
                                 : std::nullopt;
        }
        continue;
      }
      std::optional<APInt> trips = loop.getStaticTripCount();
      int64_t direct = 0;
      for (Operation &bodyOp : loop.getBody()->getOperations())
        direct += isGemm(&bodyOp);
      std::string nestedLines;
      llvm::raw_string_ostream nestedOs(nestedLines);
      std::optional<int64_t> perIteration =
          count(loop.getRegion(), depth + 1, nestedOs);
      if (!perIteration || *perIteration) {
        os.indent(2 * depth) << "loop of ";
        if (trips)
          os << trips->getZExtValue();
        else
          os << "?";
        os << " iterations: ";
        if (perIteration)
          os << *perIteration;
        else
          os << "?";
        os << " per iteration (" << direct << " directly)\n";
      }
      os << nestedLines;
      if (!trips || !perIteration || !total)
        total = std::nullopt;
      else
        *total += static_cast<int64_t>(trips->getZExtValue()) * *perIteration;
    }
    return total;
  }
};
} // namespace

namespace mlir {
namespace rnn {
void registerTestGemmCallsPass() { PassRegistration<TestGemmCallsPass>(); }
} // namespace rnn
} // namespace mlir
