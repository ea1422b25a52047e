//===- ForwardKernels.h - model op -> forward kernel ------------*- C++ -*-===//
//
// Shared by rnn-autodiff and rnn-expand-forward: builds the
// destination-style forward kernel of a model-level op.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_LIB_TRANSFORMS_FORWARDKERNELS_H
#define RNN_LIB_TRANSFORMS_FORWARDKERNELS_H

#include "rnn/Analysis/BufferLiveness.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace mlir {
namespace rnn {

/// Copies `from`'s kLayerAttr, if any, to `to`.
inline void copyLayer(Operation *from, Operation *to) {
  if (Attribute layer = from->getAttr(kLayerAttr))
    to->setAttr(kLayerAttr, layer);
}

/// Creates `tensor.empty` destinations and the forward kernel
/// (`rnn.lstm_fwd` for `rnn.lstm`, `rnn.gru_fwd` for `rnn.gru`) of
/// `modelOp` at the builder's insertion point, with operands looked up in
/// `mapping`. The first results of the kernel correspond to the results of
/// `modelOp`; the rest are the saved values. The kernel's GEMM block is
/// gemmBlockSteps of its shape.
Operation *createForwardKernel(OpBuilder &builder, Operation *modelOp,
                               const IRMapping &mapping, int64_t gemmRows);

/// The `cells` of an LSTM forward kernel under chunk(`chunk`): the cell
/// state entering each chunk, [ceil(T / chunk), B, H] for `cells`
/// [T, B, H].
RankedTensorType checkpointsType(RankedTensorType cells, int64_t chunk);

/// A zero tensor of `type` (tensor.empty + linalg.fill).
Value createZeroTensor(OpBuilder &builder, Location loc, Type type);

} // namespace rnn
} // namespace mlir

#endif // RNN_LIB_TRANSFORMS_FORWARDKERNELS_H
