//===- Accounting.h - Byte accounting for one memory space ------*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: `MemoryAccounting`, the ledger behind every buffer a compiled program
// allocates in one memory space (host or device): exact requested bytes, the
// peak, live and total counts, bad frees, per-step and per-phase peaks, and
// a "frozen" state in which allocating or freeing is refused.
//
// Why: rnnc is measured by the memory a training step uses, on the CPU and on
// the GPU alike, so both memory spaces are accounted by the same code. The
// ledger owns no memory: each call is given the `MemoryBackend` that obtains
// and releases the raw memory (aligned_alloc, cuMemAlloc, or a fake one in
// tests), so the bookkeeping can be tested without a GPU. The frozen state
// serves CUDA graphs: a captured step is replayed without running host code,
// so a buffer allocated or freed while capturing would be stale in every
// replay; device memory must therefore be allocated before capture begins.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_RUNTIME_ACCOUNTING_H
#define RNN_RUNTIME_ACCOUNTING_H

#include <cstddef>
#include <mutex>
#include <unordered_map>

namespace rnn {
namespace runtime {

/// Obtains and releases raw memory for a MemoryAccounting.
class MemoryBackend {
public:
  virtual ~MemoryBackend();
  /// Returns at least `bytes` bytes aligned to at least `alignment`, or null
  /// on failure.
  virtual void *allocate(size_t bytes, size_t alignment) = 0;
  /// Releases memory returned by allocate().
  virtual void release(void *p) = 0;
};

/// Byte figures of one step in one memory space, as accounted.
struct MemoryFigures {
  /// Peak bytes over the whole step (starting from the bytes live when the
  /// step began).
  size_t peakBytes = 0;
  /// Peak bytes while in the forward phase.
  size_t fwdPeakBytes = 0;
  /// Peak bytes while in the backward phase (starting from the bytes live at
  /// the backward marker); 0 without a marker.
  size_t bwdPeakBytes = 0;
  /// Bytes live when the backward marker was reached; 0 without a marker.
  size_t bytesAtBackwardStart = 0;
  /// Bytes live when the step ended.
  size_t bytesAtEnd = 0;
};

/// The ledger of one memory space. Thread-safe; every figure is in bytes as
/// requested by the caller, never as rounded by the backend.
class MemoryAccounting {
public:
  /// Allocates `bytes` bytes through `backend` and records them. Returns
  /// null, recording nothing, if the backend fails or the ledger is frozen
  /// (the latter counts as a frozen violation and does not call `backend`).
  void *allocate(MemoryBackend &backend, size_t bytes, size_t alignment);

  /// Releases `p` through `backend`. Null is a no-op. A pointer the ledger
  /// does not know is counted in badFrees() and not released. While frozen,
  /// a known pointer is not released either (a frozen violation) and stays
  /// accounted as live.
  void deallocate(MemoryBackend &backend, void *p);

  /// Bytes currently allocated.
  size_t currentBytes() const;
  /// Highest currentBytes() since the last beginStep() or resetCounters().
  size_t peakBytes() const;
  /// Allocations not yet freed.
  size_t liveAllocations() const;
  /// Successful allocations since construction or resetCounters().
  size_t totalAllocations() const;
  /// Frees of unknown pointers since construction or resetCounters().
  size_t badFrees() const;
  /// Whether `p` is a live allocation of this ledger.
  bool owns(const void *p) const;

  /// Resets peakBytes() to currentBytes() and zeroes totalAllocations(),
  /// badFrees() and frozenViolations(). Live allocations are unaffected.
  void resetCounters();

  /// Starts a step: the peak is reset to the current bytes and the phase to
  /// forward. A step already in progress is discarded.
  void beginStep();
  /// Marks the forward->backward boundary of the current step. Only the
  /// first call in a step counts; outside a step it is ignored.
  void beginBackward();
  /// Ends the step and returns its figures. Without a step in progress,
  /// only bytesAtEnd is set.
  MemoryFigures endStep();

  /// Refuses every allocation and free until thaw(); see the file comment.
  void freeze();
  void thaw();
  bool isFrozen() const;
  /// Allocations and frees refused because the ledger was frozen, since
  /// construction or resetCounters().
  size_t frozenViolations() const;

private:
  mutable std::mutex mutex;
  std::unordered_map<void *, size_t> sizes;
  size_t current = 0;
  size_t peak = 0;
  size_t total = 0;
  size_t bad = 0;
  size_t violations = 0;
  bool frozen = false;

  bool inStep = false;
  bool sawBackward = false;
  size_t fwdPeak = 0;
  size_t bwdPeak = 0;
  size_t atBackwardStart = 0;
};

} // namespace runtime
} // namespace rnn

#endif // RNN_RUNTIME_ACCOUNTING_H
