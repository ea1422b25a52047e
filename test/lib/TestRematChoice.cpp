//===- TestRematChoice.cpp - -test-rnn-remat-choice -----------------------===//
//
// Prints, for each training function whose remat variants a module holds
// (rnn-rematerialize under a budget for every T and B, after
// rnn-plan-memory), the variant chooseRematVariant takes at each shape of
// `shapes`, or the smallest feasible budget there: the choice the
// selector rnn-dispatch-remat builds makes per call, and rnn-run reports.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/Diagnostics.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace mlir;
using namespace mlir::rnn;

namespace {
struct TestRematChoicePass
    : public PassWrapper<TestRematChoicePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestRematChoicePass)

  TestRematChoicePass() = default;
  TestRematChoicePass(const TestRematChoicePass &pass) : PassWrapper(pass) {}

  StringRef getArgument() const final { return "test-rnn-remat-choice"; }
  StringRef getDescription() const final {
    return "Print the remat variant a budget takes at each shape";
  }

  ListOption<std::string> shapes{*this, "shapes",
                                 llvm::cl::desc("The shapes, each TxB (9x5)")};

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The training functions the module holds variants of.
    std::set<std::string> trained;
    for (auto func : module.getOps<func::FuncOp>())
      if (std::optional<RematVariant> variant = readRematVariant(func))
        trained.insert(variant->of);
    llvm::raw_ostream &os = llvm::outs();
    for (const std::string &of : trained) {
      SmallVector<func::FuncOp> variants;
      trainingVariantsOf(module, of, variants);
      for (StringRef shape : shapes) {
        auto [t, b] = shape.split('x');
        int64_t seqLen, batch;
        if (t.getAsInteger(10, seqLen) || b.getAsInteger(10, batch) ||
            seqLen < 1 || batch < 1) {
          rnn::emitErrorAt(module, "test-rnn-remat-choice: bad shape '")
              << shape << "' (expected TxB, T and B at least 1)";
          return signalPassFailure();
        }
        os << "@" << of << " at T=" << seqLen << ", B=" << batch << ": ";
        FailureOr<RematChoice> choice =
            chooseRematVariant(variants, seqLen, batch);
        if (failed(choice)) {
          os << "no figures\n";
          continue;
        }
        auto planOf = [&](unsigned index) {
          return readRematVariant(variants[index])->plan.str();
        };
        if (choice->chosen)
          os << "variant " << *choice->chosen << " (" << planOf(*choice->chosen)
             << ")";
        else
          os << "none fits";
        os << "; smallest peak " << choice->smallestPeak << " ("
           << planOf(choice->smallest) << ")\n";
      }
    }
    markAllAnalysesPreserved();
  }
};
} // namespace

namespace mlir {
namespace rnn {
void registerTestRematChoicePass() { PassRegistration<TestRematChoicePass>(); }
} // namespace rnn
} // namespace mlir
