//===- Passes.h - rnn transformation passes ---------------------*- C++ -*-===//
//
// Declares the rnn passes: tensor level (autodiff, rematerialization,
// forward expansion) and memory (DSE, early free, plan), and the pieces of
// rematerialization that tools reuse (policies, plans, cost).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TRANSFORMS_PASSES_H
#define RNN_TRANSFORMS_PASSES_H

#include "rnn/Analysis/SizeExpr.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace cf {
class ControlFlowDialect;
} // namespace cf
namespace func {
class FuncOp;
} // namespace func
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace math {
class MathDialect;
} // namespace math
namespace memref {
class MemRefDialect;
} // namespace memref
namespace scf {
class SCFDialect;
} // namespace scf
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

/// Rewrites every backward kernel in `root` (a module or function, output
/// of rnn-autodiff) and its forward to follow `plan`, and records it on the
/// function as `rnn.remat`.
void applyRematPlan(Operation *root, const RematPlan &plan);

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

/// What the cost model reads of a layer besides T, B and its GEMM block P:
/// its input and hidden sizes, the rows of its gates (G*H), and the bytes
/// of an element and of a stored gate.
struct RematLayer {
  double I = 0, H = 0, G = 0, elementBytes = 0, storageBytes = 0;
};

/// The plans a budget chooses from where T and B are known per call: each
/// variant of a training function is compiled with one of them, in this
/// order: none, gates, and chunks of 1, 2, 4, ... up to kMaxVariantChunk
/// steps asked for (each call rounds a chunk up to whole GEMM blocks, at
/// most T, so that these give the chunks of P, 2P, ... and T a budget
/// considers at a static shape whose T is at most kMaxVariantChunk).
constexpr int64_t kMaxVariantChunk = 1024;
SmallVector<RematPlan> variantPlans();

/// A variant of a training function compiled for every T and B under a
/// budget, as rnn-rematerialize and rnn-plan-memory describe it on the
/// function (rnn.remat_variant, rnn.symbolic_peak).
struct RematVariant {
  /// The training function it is a variant of, and its index there.
  std::string of;
  int64_t index = 0;
  RematPlan plan;
  int64_t budget = 0;
  SmallVector<RematLayer> layers;
};

/// The variant `func` is, or nothing if it is none.
std::optional<RematVariant> readRematVariant(func::FuncOp func);

/// A variant's peak in closed form and what its sizes read besides T and
/// B (rnn.symbolic_peak, set by rnn-plan-memory).
struct RematPeak {
  SizeMax peak;
  SizeSymbols symbols;
};

/// The peak of the variant `func`, or nothing if it has none.
std::optional<RematPeak> readRematPeak(func::FuncOp func);

/// The name of variant `index` of the training function `name`:
/// `<base>__remat<index><suffix>`, `suffix` being "_grad" if `name` ends
/// with it; the split's forward and backward of the variant keep the
/// infix (`<base>__remat<index>_fwd`).
std::string rematVariantName(StringRef name, int64_t index);

/// Appends the training function `of`'s variants in `module` to
/// `variants`, by index: variant 0, 1, ... up to the first missing.
void trainingVariantsOf(ModuleOp module, StringRef of,
                        SmallVectorImpl<func::FuncOp> &variants);

/// The function a variant function `name` stands in for: the name without
/// its `__remat<index>` infix; empty if it has none.
std::string rematDispatchName(StringRef name, int64_t index);

/// What a library of every T and B chooses at (T, B) among `variants`,
/// the fused training functions of the variants of one function in index
/// order after rnn-plan-memory: the cheapest whose peak fits the budget
/// (equal costs: the smaller peak), if any, and the one of the smallest
/// peak with that peak (the smallest feasible budget).
struct RematChoice {
  std::optional<unsigned> chosen;
  unsigned smallest = 0;
  int64_t smallestPeak = 0;
};
FailureOr<RematChoice> chooseRematVariant(ArrayRef<func::FuncOp> variants,
                                          int64_t seqLen, int64_t batch);

#define GEN_PASS_REGISTRATION
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

#endif // RNN_TRANSFORMS_PASSES_H
