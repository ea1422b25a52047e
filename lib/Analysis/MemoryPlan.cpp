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
  if (!liveness.isStatic()) {
    if (liveness.isSymbolic())
      planSymbolic();
    return;
  }
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

void MemoryPlan::planSymbolic() {
  SymbolicPlan plan;
  unsigned end = liveness.getNumPositions();
  // Per class, the position each slot's last holder frees it at.
  SmallVector<SmallVector<unsigned>> freedAt;
  for (const BufferInfo &info : liveness.getBuffers()) {
    auto found = llvm::find_if(plan.classes, [&](const auto &sizeClass) {
      return sizeClass.size == *info.size;
    });
    unsigned index = found - plan.classes.begin();
    if (found == plan.classes.end()) {
      plan.classes.push_back({*info.size, 0});
      freedAt.emplace_back();
    }
    // First fit among the class's slots: one freed before the buffer is
    // allocated, else a new one.
    SmallVector<unsigned> &slots = freedAt[index];
    auto slot = llvm::find_if(
        slots, [&](unsigned freed) { return freed <= info.allocIndex; });
    int64_t chosen = slot - slots.begin();
    unsigned freed = info.dealloc ? info.deallocIndex : end;
    if (slot == slots.end())
      slots.push_back(freed);
    else
      *slot = freed;
    plan.classes[index].slots = slots.size();
    plan.placement.push_back({index, chosen});
  }
  SmallVector<SizeExpr> held = liveness.getHeldSizes();
  for (const SizeExpr &bytes : held)
    plan.peak.add(bytes);
  backwardStart = findBackwardStart(getFunction());
  if (backwardStart) {
    plan.fwdPeak.emplace();
    plan.bwdPeak.emplace();
    for (auto [position, bytes] : llvm::enumerate(held))
      (position < *backwardStart ? *plan.fwdPeak : *plan.bwdPeak).add(bytes);
    SizeExpr saved = held[*backwardStart];
    for (const BufferInfo &buffer : liveness.getBuffers())
      if (buffer.returned && buffer.allocIndex <= *backwardStart)
        saved = saved - *buffer.size;
    plan.saved = saved;
  }
  symbolic = std::move(plan);
}

/// `bytes` rounded up to the arena's alignment, or nothing on overflow.
static std::optional<int64_t> aligned(int64_t bytes) {
  int64_t rounded = 0;
  if (llvm::AddOverflow(bytes, MemoryPlan::kAlignment - 1, rounded))
    return std::nullopt;
  return rounded / MemoryPlan::kAlignment * MemoryPlan::kAlignment;
}

std::optional<SmallVector<int64_t>>
SymbolicPlan::offsets(const CallShape &shape, int64_t *arena) const {
  // The base of each class, and the aligned size of its slots.
  SmallVector<int64_t> base, slotBytes;
  int64_t next = 0;
  for (const SizeClass &sizeClass : classes) {
    std::optional<int64_t> bytes = sizeClass.size.evaluate(shape);
    std::optional<int64_t> size = bytes ? aligned(*bytes) : std::nullopt;
    int64_t extent = 0;
    if (!size || llvm::MulOverflow(*size, sizeClass.slots, extent))
      return std::nullopt;
    base.push_back(next);
    slotBytes.push_back(*size);
    if (llvm::AddOverflow(next, extent, next))
      return std::nullopt;
  }
  SmallVector<int64_t> result;
  for (auto [index, slot] : placement)
    result.push_back(base[index] + slot * slotBytes[index]);
  if (arena)
    *arena = next;
  return result;
}

std::string SymbolicPlan::arenaStr() const {
  std::string s;
  for (const SizeClass &sizeClass : classes) {
    s += s.empty() ? "" : " + ";
    if (sizeClass.slots != 1)
      s += std::to_string(sizeClass.slots) + "*";
    s += "align(" + sizeClass.size.str() + ")";
  }
  return s.empty() ? "0" : s;
}

std::optional<int64_t>
SymbolicPlan::arenaBytes(const CallShape &shape) const {
  int64_t arena = 0;
  if (!offsets(shape, &arena))
    return std::nullopt;
  return arena;
}

std::optional<PhaseBytes>
SymbolicPlan::phasesAt(const CallShape &shape) const {
  if (!fwdPeak || !bwdPeak || !saved)
    return std::nullopt;
  std::optional<int64_t> fwd = fwdPeak->evaluate(shape),
                         bwd = bwdPeak->evaluate(shape),
                         held = saved->evaluate(shape);
  if (!fwd || !bwd || !held)
    return std::nullopt;
  return PhaseBytes{*fwd, *bwd, *held};
}
