//===- TestCellFacts.cpp - -test-rnn-cell-facts ---------------------------===//
//
// Prints, for every model-level layer (LayerOpInterface), the facts of its
// cell (CellAttrInterface) and its shapes as the interfaces give them:
// gates, states, saved, replayed and checkpointed roles with their widths,
// weight shapes, the layer's named operands (reset states included) and
// results, and the roles of
// the operands of the cell's kernel in each phase; then, for every kernel
// (KernelOpInterface), the operand it finds for each role, so that lit tests
// check the interfaces against the op definitions.
//
//===----------------------------------------------------------------------===//

#include "rnn/Dialect/RNNOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static void printList(llvm::raw_ostream &os, ArrayRef<StringRef> names,
                      llvm::function_ref<void(StringRef)> each = nullptr) {
  os << "[";
  llvm::interleaveComma(names, os, [&](StringRef name) {
    os << name;
    if (each)
      each(name);
  });
  os << "]";
}

/// ", <name><suffix> <type>" for each state.
static void printStates(llvm::raw_ostream &os, ArrayRef<StringRef> names,
                        ArrayRef<Value> values, StringRef suffix) {
  for (auto [name, value] : llvm::zip_equal(names, values))
    os << ", " << name << suffix << " " << value.getType();
}

namespace {
struct TestCellFactsPass
    : public PassWrapper<TestCellFactsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestCellFactsPass)

  StringRef getArgument() const final { return "test-rnn-cell-facts"; }
  StringRef getDescription() const final {
    return "Print the cell facts and named operands of every model layer";
  }

  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    getOperation().walk([&](rnn::LayerOpInterface layer) {
      rnn::CellAttrInterface cell = layer.getCell();
      int64_t hidden = layer.getHiddenSize();
      os << layer->getName() << ": cell " << cell << " (" << cell.getCellName()
         << "), " << cell.getNumGates() << " gates; T=" << layer.getSeqLen()
         << " B=" << layer.getBatch() << " I=" << layer.getInputSize()
         << " H=" << hidden << "\n  states ";
      printList(os, cell.getStateNames());
      os << "\n  saved ";
      printList(os, cell.getSavedRoles(), [&](StringRef role) {
        os << " " << cell.getRoleWidth(role, hidden);
      });
      os << "\n  replayed ";
      printList(os, cell.getReplayedRoles());
      os << "\n  checkpoints ";
      printList(os, cell.getCheckpointRoles());
      os << "\n  weights";
      for (StringRef name : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}) {
        os << " " << name << " [";
        llvm::interleaveComma(
            cell.getWeightShape(name, layer.getInputSize(), hidden), os);
        os << "]";
      }
      os << "\n  x " << layer.getInput().getType() << ", is_init "
         << layer.getResetMask().getType();
      printStates(os, cell.getStateNames(), layer.getInitialStates(), "0");
      SmallVector<Value> resetStates = layer.getResetStates();
      if (!resetStates.empty())
        printStates(os, cell.getStateNames(), resetStates, "_reset");
      os << "\n  y " << layer.getOutput().getType();
      printStates(os, cell.getStateNames(), layer.getFinalStates(), "_n");
      for (rnn::KernelPhase phase : rnn::kKernelPhases) {
        os << "\n  " << rnn::stringifyKernelPhase(phase) << " kernel";
        for (const auto &group :
             rnn::kernelOperandGroups(cell, phase, !resetStates.empty())) {
          os << " (";
          llvm::interleaveComma(group, os);
          os << ")";
        }
      }
      os << "\n";
    });
    // Each kernel's operands as the kernel interface finds them by role.
    getOperation().walk([&](rnn::KernelOpInterface kernel) {
      os << kernel->getName() << " " << kernel.getCell() << " "
         << rnn::stringifyKernelPhase(kernel.getPhase()) << ":";
      for (const std::string &role : kernel.getOperandRoles())
        os << " " << role << "=#"
           << kernel.getOperandOf(role)->getOperandNumber();
      os << "\n  saved";
      for (StringRef role : kernel.getCell().getSavedRoles())
        if (OpOperand *saved = kernel.getSavedOperand(role))
          os << " " << role << "=#" << saved->getOperandNumber();
      os << "\n  initial states " << kernel.getInitialStates().size()
         << ", reset states " << kernel.getResetStates().size() << ", biases "
         << kernel.getBiases().size() << ", outputs "
         << kernel.getOutputOperands().size() << ", cotangents "
         << kernel.getCotangents().size() << ", destinations ";
      llvm::interleaveComma(kernel.getDestinationRoles(), os);
      os << "\n";
    });
  }
};
} // namespace

namespace mlir {
namespace rnn {
void registerTestCellFactsPass() { PassRegistration<TestCellFactsPass>(); }
} // namespace rnn
} // namespace mlir
