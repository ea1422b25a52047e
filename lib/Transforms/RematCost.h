//===- RematCost.h - the budget policy's cost formula -----------*- C++ -*-===//
//
// The cost model of the budget policy (rematCost, Passes.h) as one formula
// over a number type: evaluated on doubles where the shape is static
// (rnn-rematerialize, tools), and built as f64 arithmetic in the IR where
// each call gives T and B (rnn-dispatch-remat's selector). Both evaluate
// the same operations in the same order, so that a library of every shape
// chooses the plan a library of the call's shape chooses.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_LIB_TRANSFORMS_REMATCOST_H
#define RNN_LIB_TRANSFORMS_REMATCOST_H

#include "rnn/Dialect/RNNOps.h"
#include "rnn/Transforms/Passes.h"

#include <algorithm>
#include <cmath>

namespace mlir {
namespace rnn {

/// The figures of the layer of forward kernel `fwd`.
RematLayer rematLayerOf(KernelOpInterface fwd);

inline double ceilOf(double x) { return std::ceil(x); }
inline double minOf(double x, double y) { return std::min(x, y); }
inline double maxOf(double x, double y) { return std::max(x, y); }

/// `cost` plus what `plan` adds for the layer `s` at T steps of B columns
/// in GEMM blocks of P steps (see RematCostModel).
template <typename Num>
Num addReplayCost(Num cost, const RematLayer &s, Num T, Num B, Num P,
                  const RematPlan &plan, const RematCostModel &model) {
  // The replay recomputes both GEMMs of every step and the gate math
  // (about 10 operations per gate element).
  cost = cost + T * B * (2 * s.G * (s.I + s.H) + 10 * s.G);
  // The gates policy replays all steps at once; a chunk is a whole
  // number of GEMM blocks.
  Num chunk = plan.kind == RematPlan::Kind::Chunk
                  ? minOf(ceilOf(static_cast<double>(plan.chunk) / P) * P, T)
                  : T;
  Num chunks = ceilOf(T / chunk);
  // Each block's input-projection GEMM in the replay packs W_ih (read and
  // written).
  Num packing = ceilOf(T / P) * 2 * s.elementBytes * s.G * s.I;
  // The replay writes a chunk of gates (in the storage type) and states
  // that the backward reads back: what exceeds the cache goes to memory
  // and back.
  Num scratch = chunk * B * (s.storageBytes * s.G + s.elementBytes * s.H);
  Num spill = chunks * 2 * maxOf(0.0, scratch - model.cacheBytes);
  return cost + model.flopsPerByte * (packing + spill);
}

} // namespace rnn
} // namespace mlir

#endif // RNN_LIB_TRANSFORMS_REMATCOST_H
