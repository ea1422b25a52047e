//===- MemoryPlan.cpp - the static memory plan of a function --------------===//
//
// Implements MemoryPlan.h: first fit over live ranges. Buffers are placed in
// allocation order; a buffer may take any space whose previous holder was
// freed before the buffer is allocated.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/MemoryPlan.h"

#include "rnn/Dialect/RNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rnn;

/// Position of the top-level `rnn.begin_backward` of `func`, the
/// forward/backward boundary, if there is one.
static std::optional<unsigned> findBackwardStart(func::FuncOp func) {
  unsigned position = 0;
  for (Operation &op : func.getBody().front()) {
    if (isa<BeginBackwardOp>(op))
      return position;
    ++position;
  }
  return std::nullopt;
}

/// The phase figures of a function whose boundary is at `backwardStart`.
static PhaseBytes predictPhaseBytes(const BufferLiveness &liveness,
                                    unsigned backwardStart) {
  SmallVector<int64_t> held = liveness.getHeldBytes();
  ArrayRef<int64_t> fwd = ArrayRef(held).take_front(backwardStart);
  ArrayRef<int64_t> bwd = ArrayRef(held).drop_front(backwardStart);
  PhaseBytes phases;
  for (int64_t bytes : fwd)
    phases.fwdPeak = std::max(phases.fwdPeak, bytes);
  for (int64_t bytes : bwd)
    phases.bwdPeak = std::max(phases.bwdPeak, bytes);
  phases.saved = bwd.empty() ? 0 : bwd.front();
  for (const BufferInfo &buffer : liveness.getBuffers())
    if (buffer.returned && buffer.allocIndex <= backwardStart)
      phases.saved -= buffer.bytes;
  return phases;
}

MemoryPlan::MemoryPlan(Operation *op)
    : op(op), liveness(cast<func::FuncOp>(op)) {
  if (!liveness.isStatic())
    return;
  unsigned end = liveness.getNumPositions();
  struct Placed {
    int64_t offset, size;
    unsigned freedAt;
  };
  SmallVector<Placed> placed;
  for (const BufferInfo &info : liveness.getBuffers()) {
    int64_t size = 0;
    if (llvm::AddOverflow(info.bytes, kAlignment - 1, size)) {
      error = "a buffer of " + std::to_string(info.bytes) +
              " bytes cannot be placed in 64-bit offsets";
      return;
    }
    size = size / kAlignment * kAlignment;
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (const Placed &p : placed)
      if (p.freedAt > info.allocIndex)
        busy.push_back({p.offset, p.offset + p.size});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (offset <= lo - size)
        break;
      offset = std::max(offset, hi);
    }
    int64_t top = 0;
    if (llvm::AddOverflow(offset, size, top)) {
      error = "the arena of @" + getFunction().getName().str() +
              " would exceed 64-bit offsets";
      return;
    }
    placed.push_back({offset, size, info.dealloc ? info.deallocIndex : end});
    offsets.push_back(offset);
    arenaBytes = std::max(arenaBytes, top);
  }
  peakBytes = liveness.getPeakBytes();
  backwardStart = findBackwardStart(getFunction());
  if (backwardStart)
    phases = predictPhaseBytes(liveness, *backwardStart);
}

func::FuncOp MemoryPlan::getFunction() const { return cast<func::FuncOp>(op); }
