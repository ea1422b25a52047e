//===- LSTMLowering.cpp - LSTM kernels to loops ---------------------------===//
//
// The LSTM's kernels on the loops of CellLoops.h, by the steps of
// LSTMSteps.h (where the step formulas are).
//
//===----------------------------------------------------------------------===//

#include "LSTMSteps.h"

using namespace mlir;
using namespace mlir::rnn;

void mlir::rnn::attachLSTMLowering(MLIRContext &context) {
  LSTMCellAttr::attachInterface<
      LoopLowering<LSTMCellAttr, LSTMCellSteps</*CoupledInputGate=*/false>>>(
      context);
}
