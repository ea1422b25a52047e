//===- MemoryPlan.h - the static memory plan of a function ------*- C++ -*-===//
//
// The memory plan of a lowered function: an arena offset for every buffer
// it allocates at its top level (first fit over the live ranges of
// BufferLiveness), the arena's size, the predicted peak of bytes held, and
// for a training function the figures of its forward and backward phases.
//
// A function compiled for every T and B (BufferLiveness::isSymbolic) has a
// plan in closed form instead (SymbolicPlan): the peak and the phase
// figures as expressions in T, B and P, and an arena laid out by size
// class, the buffers of one size expression sharing slots by first fit
// over their live ranges (which does not depend on the shape, as the sizes
// of a class are equal at every shape), the classes one after the other.
// A caller evaluates it per call in time linear in the number of buffers;
// at every shape it places no two live buffers on the same bytes.
// An analysis (`getAnalysis<MemoryPlan>()` on a func.func): rnn-plan-memory
// attaches it to the IR, the memory report describes it
// (buildMemoryReport), and
// -test-rnn-memory-plan prints it.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_ANALYSIS_MEMORYPLAN_H
#define RNN_ANALYSIS_MEMORYPLAN_H

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Analysis/MemoryReport.h"

#include <optional>
#include <string>

namespace mlir {
namespace rnn {

/// The plan of a symbolic function.
struct SymbolicPlan {
  /// One size class: the size of its buffers and its number of slots.
  struct SizeClass {
    SizeExpr size;
    int64_t slots = 0;
  };
  llvm::SmallVector<SizeClass> classes;
  /// The class and slot of each buffer, in BufferLiveness order.
  llvm::SmallVector<std::pair<unsigned, int64_t>> placement;
  SizeMax peak;
  /// With a forward/backward boundary: the phase peaks and what the
  /// forward leaves held for the backward (results excluded).
  std::optional<SizeMax> fwdPeak, bwdPeak;
  std::optional<SizeExpr> saved;

  /// The arena as an expression: "2*align(20*T*B) + 6*align(20*B) + ...",
  /// align(n) being n rounded up to the alignment.
  std::string arenaStr() const;
  /// The arena of `shape`: each class's slots of its size rounded up to
  /// the alignment, class after class; nothing if it overflows.
  std::optional<int64_t> arenaBytes(const CallShape &shape) const;
  /// The phase figures at `shape` (a training function's); nothing
  /// without them or if they overflow.
  std::optional<PhaseBytes> phasesAt(const CallShape &shape) const;
  /// The arena offset of each buffer at `shape` (arenaBytes's layout),
  /// and in `arena` (if given) the arena's size.
  std::optional<llvm::SmallVector<int64_t>>
  offsets(const CallShape &shape, int64_t *arena = nullptr) const;
};

class MemoryPlan {
public:
  /// Offsets are multiples of this, as the runtime aligns each buffer.
  static constexpr int64_t kAlignment = 64;

  /// Plans `op`, a func.func.
  explicit MemoryPlan(Operation *op);

  /// False if some allocation is nested in a region or has a dynamic size
  /// (no static plan covers the function), or the plan overflows 64-bit
  /// offsets (getError() says which).
  bool isPlanned() const { return liveness.isStatic() && error.empty(); }
  /// Why an otherwise static function has no plan; empty if it has one.
  llvm::StringRef getError() const { return error; }

  const BufferLiveness &getLiveness() const { return liveness; }
  /// The arena offset of each buffer of getLiveness(), in its order.
  llvm::ArrayRef<int64_t> getOffsets() const { return offsets; }
  /// The peak of bytes held (in program order, each buffer on its own).
  int64_t getPeakBytes() const { return peakBytes; }
  /// The size of an arena holding every buffer at its offset.
  int64_t getArenaBytes() const { return arenaBytes; }
  /// Position of the forward/backward boundary, if the function has one.
  std::optional<unsigned> getBackwardStart() const { return backwardStart; }
  /// The phase figures of a function with a boundary.
  std::optional<PhaseBytes> getPhases() const { return phases; }
  /// The plan in T, B and P of a symbolic function that is not static.
  const std::optional<SymbolicPlan> &getSymbolic() const { return symbolic; }

  /// The function planned.
  func::FuncOp getFunction() const;

private:
  Operation *op;
  BufferLiveness liveness;
  std::string error;
  llvm::SmallVector<int64_t> offsets;
  int64_t peakBytes = 0;
  int64_t arenaBytes = 0;
  std::optional<unsigned> backwardStart;
  std::optional<PhaseBytes> phases;
  std::optional<SymbolicPlan> symbolic;

  /// Builds `symbolic`.
  void planSymbolic();
};

} // namespace rnn
} // namespace mlir

#endif // RNN_ANALYSIS_MEMORYPLAN_H
