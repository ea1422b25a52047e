//===- Runtime.cpp - Accounting allocator, steps and phases ---------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the accounting allocator behind the `_mlir_memref_to_llvm_*` entry
// points, the step/phase bookkeeping (`beginStep`, `rnnrt_begin_phase`,
// `endStep`) and the JIT symbol table.
//
// Why: every buffer a compiled program allocates passes through here, so
// this is where exact byte counts, peaks and per-phase figures are measured.
// The program frees without a size, hence the pointer->size map. All state
// sits behind one mutex (single-threaded use is expected, so contention is
// not a concern) and is never destroyed, so that frees issued during process
// teardown still find it.
//
//===----------------------------------------------------------------------===//

#include "rnn/Runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

using Clock = std::chrono::steady_clock;

namespace {

/// Minimum alignment of every buffer handed out (a cache line; also enough
/// for any vector width the compiled code uses).
constexpr size_t kMinAlignment = 64;

/// All runtime state. Guarded by `mutex`.
struct RuntimeState {
  std::mutex mutex;
  std::unordered_map<void *, size_t> sizes;
  size_t current = 0;
  size_t peak = 0;
  size_t total = 0;
  size_t badFrees = 0;

  // Step bookkeeping.
  bool inStep = false;
  bool sawBackward = false;
  size_t fwdPeak = 0;
  size_t bwdPeak = 0;
  size_t bytesAtBackwardStart = 0;
  Clock::time_point stepStart;
  Clock::time_point backwardStart;
};

/// The process-wide state; intentionally leaked so that it outlives every
/// static destructor that might still free memory.
RuntimeState &state() {
  static RuntimeState *s = new RuntimeState();
  return *s;
}

/// Rounds `alignment` up to a power of two no smaller than kMinAlignment.
size_t normalizeAlignment(size_t alignment) {
  size_t a = kMinAlignment;
  while (a < alignment && a <= (SIZE_MAX >> 1))
    a <<= 1;
  return a;
}

/// Records a newly allocated block; caller holds the mutex.
void recordAllocation(RuntimeState &s, void *p, size_t bytes) {
  s.sizes.emplace(p, bytes);
  s.current += bytes;
  ++s.total;
  s.peak = std::max(s.peak, s.current);
  if (s.inStep) {
    if (s.sawBackward)
      s.bwdPeak = std::max(s.bwdPeak, s.current);
    else
      s.fwdPeak = std::max(s.fwdPeak, s.current);
  }
}

double millisBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

namespace rnn {
namespace runtime {

void *allocateAligned(size_t alignment, size_t bytes) {
  size_t align = normalizeAlignment(alignment);
  // std::aligned_alloc requires the size to be a multiple of the alignment;
  // a zero-byte request still gets a distinct, freeable block.
  size_t request = std::max<size_t>(bytes, 1);
  if (request > SIZE_MAX - (align - 1))
    return nullptr;
  size_t rounded = (request + align - 1) & ~(align - 1);
  void *p = std::aligned_alloc(align, rounded);
  if (!p)
    return nullptr;
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  recordAllocation(s, p, bytes);
  return p;
}

void *allocate(size_t bytes) { return allocateAligned(kMinAlignment, bytes); }

void deallocate(void *p) {
  if (!p)
    return;
  RuntimeState &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.sizes.find(p);
    if (it == s.sizes.end()) {
      ++s.badFrees;
      return;
    }
    s.current -= it->second;
    s.sizes.erase(it);
  }
  std::free(p);
}

size_t currentBytes() {
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.current;
}

size_t peakBytes() {
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.peak;
}

size_t liveAllocations() {
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.sizes.size();
}

size_t totalAllocations() {
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.total;
}

size_t badFrees() {
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.badFrees;
}

void resetCounters() {
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.peak = s.current;
  s.total = 0;
  s.badFrees = 0;
}

void beginStep() {
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.inStep = true;
  s.sawBackward = false;
  s.peak = s.current;
  s.fwdPeak = s.current;
  s.bwdPeak = 0;
  s.bytesAtBackwardStart = 0;
  s.stepStart = Clock::now();
}

StepStats endStep() {
  Clock::time_point end = Clock::now();
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  StepStats stats;
  stats.bytesAtEnd = s.current;
  if (!s.inStep)
    return stats;
  s.inStep = false;
  stats.totalMs = millisBetween(s.stepStart, end);
  stats.sawBackward = s.sawBackward;
  stats.fwdPeakBytes = s.fwdPeak;
  if (s.sawBackward) {
    stats.fwdMs = millisBetween(s.stepStart, s.backwardStart);
    stats.bwdMs = millisBetween(s.backwardStart, end);
    stats.bwdPeakBytes = s.bwdPeak;
    stats.bytesAtBackwardStart = s.bytesAtBackwardStart;
  } else {
    stats.fwdMs = stats.totalMs;
  }
  stats.peakBytes = std::max(stats.fwdPeakBytes, stats.bwdPeakBytes);
  return stats;
}

bool inStep() {
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.inStep;
}

std::vector<std::pair<const char *, void *>> jitSymbols() {
  return {
      {"_mlir_memref_to_llvm_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc)},
      {"_mlir_memref_to_llvm_aligned_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc)},
      {"_mlir_memref_to_llvm_free",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_free)},
      {"rnnrt_begin_phase", reinterpret_cast<void *>(&rnnrt_begin_phase)},
      {"_mlir_ciface_rnnrt_sgemm",
       reinterpret_cast<void *>(&_mlir_ciface_rnnrt_sgemm)},
  };
}

} // namespace runtime
} // namespace rnn

//===----------------------------------------------------------------------===//
// C entry points.
//===----------------------------------------------------------------------===//

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return rnn::runtime::allocate(size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  return rnn::runtime::allocateAligned(alignment, size);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  rnn::runtime::deallocate(ptr);
}

extern "C" void rnnrt_begin_phase(int64_t phase) {
  if (phase < 1)
    return;
  Clock::time_point now = Clock::now();
  RuntimeState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.inStep || s.sawBackward)
    return;
  s.sawBackward = true;
  s.backwardStart = now;
  s.bytesAtBackwardStart = s.current;
  s.bwdPeak = s.current;
}
