//===- MemRefEffects.h - Memory effects of an op on buffers -----*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Whether an op has a given kind of memory effect on a memref, as the passes
// that guard the buffer pipelines ask it (rnn-check-pipeline-input: frees;
// rnn-device-buffers: host reads and writes). Upstream's hasEffect asks
// about one value or any value; these passes ask about any memref.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_ANALYSIS_MEMREFEFFECTS_H
#define RNN_ANALYSIS_MEMREFEFFECTS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace rnn {

/// Whether `op` declares an effect of one of `EffectTys` on a memref operand
/// or result. An op without declared effects has none.
template <typename... EffectTys>
bool hasMemRefEffect(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    Value value = e.getValue();
    return value && isa<BaseMemRefType>(value.getType()) &&
           isa<EffectTys...>(e.getEffect());
  });
}

} // namespace rnn
} // namespace mlir

#endif // RNN_ANALYSIS_MEMREFEFFECTS_H
