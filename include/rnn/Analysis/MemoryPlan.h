//===- MemoryPlan.h - the static memory plan of a function ------*- C++ -*-===//
//
// The memory plan of a lowered function: an arena offset for every buffer
// it allocates at its top level (first fit over the live ranges of
// BufferLiveness), the arena's size, the predicted peak of bytes held, and
// for a training function the figures of its forward and backward phases.
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
};

} // namespace rnn
} // namespace mlir

#endif // RNN_ANALYSIS_MEMORYPLAN_H
