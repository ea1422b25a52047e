//===- CellLoops.cpp - the loop skeleton every cell's kernels share -------===//
//
// The operands of a kernel as the skeleton (CellLoops.h) reads them.
//
//===----------------------------------------------------------------------===//

#include "CellLoops.h"

using namespace mlir;
using namespace mlir::rnn;

static int64_t dim(Value v, unsigned i) {
  return cast<MemRefType>(v.getType()).getDimSize(i);
}

LayerInputs::LayerInputs(KernelOpInterface op)
    : x(op.getInput()), isInit(op.getResetMask()),
      weightIh(op.getInputWeight()), weightHh(op.getRecurrentWeight()),
      // The backward of saved values reads no bias (null).
      biasIh(op.get("bias_ih")), biasHh(op.get("bias_hh")),
      states(op.getInitialStates()), T(dim(x, 0)), B(dim(x, 1)),
      H(dim(weightHh, 1)), P(op.getBlockSteps()) {}

BackwardIO::BackwardIO(KernelOpInterface op)
    : y(op.getOutput()), gradY(op.get("grad_y")), gradX(op.get("grad_x")),
      gradWeightIh(op.get("grad_weight_ih")),
      gradWeightHh(op.get("grad_weight_hh")),
      gradBiasIh(op.get("grad_bias_ih")), gradBiasHh(op.get("grad_bias_hh")) {}
