//===- CellLowering.h - how a cell's kernels become loops -------*- C++ -*-===//
//
// The cell lowering interface (CellLowering.td) and the attachment of each
// cell's lowering to its attribute.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_LIB_CONVERSION_RNNTOLOOPS_CELLLOWERING_H
#define RNN_LIB_CONVERSION_RNNTOLOOPS_CELLLOWERING_H

#include "KernelBuilder.h"

#include "rnn/Dialect/RNNOps.h"

#include "RNNToLoops/CellLowering.h.inc"

namespace mlir {
namespace rnn {
/// Emits the loops of one kernel at the builder's insertion point.
using KernelEmitter = void (*)(Operation *, KernelBuilder &);

/// The lowering of cell attribute `CellAttr` whose kernels of phases fwd,
/// bwd, chunked_bwd and replay the given emitters write.
template <typename CellAttr, KernelEmitter Fwd, KernelEmitter Bwd,
          KernelEmitter ChunkedBwd, KernelEmitter Replay>
struct PhaseLowering
    : public CellLoweringAttrInterface::ExternalModel<
          PhaseLowering<CellAttr, Fwd, Bwd, ChunkedBwd, Replay>, CellAttr> {
  void emitKernel(Attribute, KernelOpInterface kernel, KernelBuilder &k) const {
    StringRef phase = kernel.getPhase();
    KernelEmitter emit = phase == "fwd"           ? Fwd
                         : phase == "bwd"         ? Bwd
                         : phase == "chunked_bwd" ? ChunkedBwd
                                                  : Replay;
    emit(kernel, k);
  }
};

/// Attach each cell's lowering to its attribute (defined in the cell's
/// lowering file).
void attachLSTMLowering(MLIRContext &context);
void attachGRULowering(MLIRContext &context);
} // namespace rnn
} // namespace mlir

#endif // RNN_LIB_CONVERSION_RNNTOLOOPS_CELLLOWERING_H
