//===- CIFGLowering.cpp - CIFG LSTM kernels to loops ----------------------===//
//
// The kernels of the LSTM with coupled input and forget gates (rnn.cifg;
// Greff et al., "LSTM: A Search Space Odyssey", 2017): the LSTM's steps
// (LSTMSteps.h) with three gate blocks f, g, o and the input gate
// i = 1 - f, so that
//
//   c = f (r ? 0 : c) + (1 - f) g
//
// and f's pre-activation receives dc (c_prev - g) f (1 - f).
//
//===----------------------------------------------------------------------===//

#include "LSTMSteps.h"

using namespace mlir;
using namespace mlir::rnn;

void mlir::rnn::attachCIFGLowering(MLIRContext &context) {
  CIFGCellAttr::attachInterface<
      LoopLowering<CIFGCellAttr, LSTMCellSteps</*CoupledInputGate=*/true>>>(
      context);
}
