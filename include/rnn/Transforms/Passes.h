//===- Passes.h - rnn transformation passes ---------------------*- C++ -*-===//
//
// Declares the rnn passes: tensor level (autodiff, rematerialization,
// forward expansion) and memory (DSE, early free, plan), and the pieces of
// rematerialization that tools reuse (policies, plans, cost).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TRANSFORMS_PASSES_H
#define RNN_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <optional>
#include <string>

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace func {
class FuncOp;
} // namespace func
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace memref {
class MemRefDialect;
} // namespace memref
namespace tensor {
class TensorDialect;
} // namespace tensor

namespace rnn {
#define GEN_PASS_DECL
#include "rnn/Transforms/Passes.h.inc"

/// What the forward saves for the backward, for every layer. A multi-level
/// (Revolve-style) plan would add the chunk lengths of outer levels here;
/// the chunked backward kernels then replay an outer chunk into the
/// checkpoints of the next level before replaying those.
struct RematPlan {
  enum class Kind { None, Gates, Chunk };
  Kind kind = Kind::None;
  /// Steps per chunk (Kind::Chunk).
  int64_t chunk = 0;

  /// The policy string that selects this plan: none, gates, chunk:K.
  std::string str() const;
};

/// A parsed `policy=` value: a plan, or a byte budget to choose one under.
struct RematPolicy {
  RematPlan plan;
  std::optional<int64_t> budget;
};

/// Parses none | gates | chunk:K | budget:BYTES; on failure `message` says
/// what is wrong.
FailureOr<RematPolicy> parseRematPolicy(StringRef text, std::string &message);

/// Rewrites every backward kernel of `module` (output of rnn-autodiff) and
/// its forward to follow `plan`, and records it on the function as
/// `rnn.remat`.
void applyRematPlan(ModuleOp module, const RematPlan &plan);

/// The machine the budget policy's cost model assumes: the cache a chunk's
/// replay scratch should fit in (a core's share of the last-level cache)
/// and the FLOPs that take as long as moving one byte to or from memory.
struct RematCostModel {
  double cacheBytes = 8 << 20;
  double flopsPerByte = 8;
};

/// The cost model of the budget policy: FLOPs `plan` adds to a training
/// step of `module` (output of rnn-autodiff), memory traffic included.
double rematCost(ModuleOp module, const RematPlan &plan,
                 const RematCostModel &model);

#define GEN_PASS_REGISTRATION
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

#endif // RNN_TRANSFORMS_PASSES_H
