//===- ForwardKernels.h - model op -> forward kernel ------------*- C++ -*-===//
//
// Shared by rnn-autodiff and rnn-expand-forward: builds the
// destination-style forward kernel of a model-level op, and the training
// form of rnn.dropout.
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

/// Creates `tensor.empty` destinations and the forward kernel of the
/// layer `modelOp` (a LayerOpInterface) for its cell at the builder's
/// insertion point, with operands looked up in `mapping`. Its destinations
/// are the layer's results, then one sequence per saved role of the cell.
/// The kernel's GEMM block is gemmBlockSteps of its shape.
Operation *createForwardKernel(OpBuilder &builder, Operation *modelOp,
                               const IRMapping &mapping, int64_t gemmRows);

/// The results of forward kernel `kernel` that stand for its layer's
/// results: y and the final states.
SmallVector<Value> forwardOutputs(Operation *kernel);

/// A checkpoint role's sequence under chunk(`chunk`) (LSTM's `cells`): the
/// state entering each chunk, [ceil(T / chunk), B, H] for [T, B, H].
RankedTensorType checkpointsType(RankedTensorType cells, int64_t chunk);

/// An empty tensor of the checkpoints of a kernel of input `x` (a
/// sequence [T, B, X]) of dynamic shape whose blocks aim for `rows` rows,
/// in chunks of `chunk` steps asked for: ceil(T / K') entries, K' the
/// chunk each call runs (rnn.chunk_steps of rnn.block_steps), each like
/// one step of `cells` ([T, B, H], B taken from x where dynamic).
Value createCheckpointsEmpty(OpBuilder &builder, Location loc,
                             RankedTensorType cells, Value x, int64_t rows,
                             int64_t chunk);

/// A tensor.empty of `like`'s type and sizes.
Value createEmptyLike(OpBuilder &builder, Location loc, Value like);

/// A tensor.empty of `type`, a [T, B, W] or [B, W] value of the layer of
/// input `x` [T, B, I]: its dynamic sizes are x's T and B.
Value createLayerEmpty(OpBuilder &builder, Location loc, Type type, Value x);

/// A zero tensor of `like`'s type and sizes (tensor.empty + linalg.fill).
Value createZeroTensor(OpBuilder &builder, Location loc, Value like);

class DropoutOp;

/// `input` (a [T, B, H] tensor: the dropout's x, or a cotangent of its
/// result) with the mask of `op` under `rng` applied and the kept
/// elements scaled (see rnn.dropout); `input` itself when p = 0.
Value applyDropout(OpBuilder &builder, DropoutOp op, Value input, Value rng);

} // namespace rnn
} // namespace mlir

#endif // RNN_LIB_TRANSFORMS_FORWARDKERNELS_H
