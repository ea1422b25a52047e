//===- Runtime.cpp - Host allocator, steps and phases ---------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the host and device ledgers, the aligned_alloc backend behind the
// `_mlir_memref_to_llvm_*` entry points, the step/phase bookkeeping
// (`beginStep`, `rnnrt_begin_phase`, `endStep`).
//
// Why: every buffer a compiled program allocates passes through a ledger, so
// steps and phases are marked here on both ledgers at once and timed with
// one clock. All state is never destroyed, so that frees issued during
// process teardown still find it.
//
//===----------------------------------------------------------------------===//

#include "rnn/Runtime/Runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

using Clock = std::chrono::steady_clock;

namespace {

/// Minimum alignment of every host buffer handed out (a cache line; also
/// enough for any vector width the compiled code uses).
constexpr size_t kMinAlignment = 64;

/// Rounds `alignment` up to a power of two no smaller than kMinAlignment.
size_t normalizeAlignment(size_t alignment) {
  size_t a = kMinAlignment;
  while (a < alignment && a <= (SIZE_MAX >> 1))
    a <<= 1;
  return a;
}

/// Host memory from std::aligned_alloc. A zero-byte request still gets a
/// distinct, freeable block.
class HostBackend final : public rnn::runtime::MemoryBackend {
public:
  void *allocate(size_t bytes, size_t alignment) override {
    size_t align = normalizeAlignment(alignment);
    // std::aligned_alloc requires the size to be a multiple of the alignment.
    size_t request = std::max<size_t>(bytes, 1);
    if (request > SIZE_MAX - (align - 1))
      return nullptr;
    size_t rounded = (request + align - 1) & ~(align - 1);
    return std::aligned_alloc(align, rounded);
  }
  void release(void *p) override { std::free(p); }
};

HostBackend &hostBackend() {
  static HostBackend *backend = new HostBackend();
  return *backend;
}

/// Step timing; the byte figures live in the ledgers. Guarded by `mutex`.
struct StepClock {
  std::mutex mutex;
  bool inStep = false;
  bool sawBackward = false;
  Clock::time_point stepStart;
  Clock::time_point backwardStart;
};

/// Intentionally leaked, like the ledgers.
StepClock &stepClock() {
  static StepClock *c = new StepClock();
  return *c;
}

double millisBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

namespace rnn {
namespace runtime {

MemoryAccounting &hostMemory() {
  static MemoryAccounting *ledger = new MemoryAccounting();
  return *ledger;
}

MemoryAccounting &deviceMemory() {
  static MemoryAccounting *ledger = new MemoryAccounting();
  return *ledger;
}

void *allocateAligned(size_t alignment, size_t bytes) {
  return hostMemory().allocate(hostBackend(), bytes, alignment);
}

void *allocate(size_t bytes) { return allocateAligned(kMinAlignment, bytes); }

void deallocate(void *p) { hostMemory().deallocate(hostBackend(), p); }

size_t currentBytes() { return hostMemory().currentBytes(); }

size_t peakBytes() { return hostMemory().peakBytes(); }

size_t liveAllocations() { return hostMemory().liveAllocations(); }

size_t totalAllocations() { return hostMemory().totalAllocations(); }

size_t badFrees() { return hostMemory().badFrees(); }

void resetCounters() { hostMemory().resetCounters(); }

static std::atomic<size_t> gemmCallCount{0};

size_t gemmCalls() { return gemmCallCount.load(std::memory_order_relaxed); }

void countGemmCall() { gemmCallCount.fetch_add(1, std::memory_order_relaxed); }

static std::atomic<size_t> kernelLaunchCount{0};

size_t kernelLaunches() {
  return kernelLaunchCount.load(std::memory_order_relaxed);
}

void countKernelLaunch() {
  kernelLaunchCount.fetch_add(1, std::memory_order_relaxed);
}

static std::atomic<size_t> synchronizationCount{0};

size_t synchronizations() {
  return synchronizationCount.load(std::memory_order_relaxed);
}

void countSynchronization() {
  synchronizationCount.fetch_add(1, std::memory_order_relaxed);
}

void beginStep() {
  StepClock &c = stepClock();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.inStep = true;
  c.sawBackward = false;
  hostMemory().beginStep();
  deviceMemory().beginStep();
  c.stepStart = Clock::now();
}

StepStats endStep() {
  Clock::time_point end = Clock::now();
  StepClock &c = stepClock();
  std::lock_guard<std::mutex> lock(c.mutex);
  StepStats stats;
  static_cast<MemoryFigures &>(stats) = hostMemory().endStep();
  stats.device = deviceMemory().endStep();
  if (!c.inStep)
    return stats;
  c.inStep = false;
  stats.totalMs = millisBetween(c.stepStart, end);
  stats.sawBackward = c.sawBackward;
  if (c.sawBackward) {
    stats.fwdMs = millisBetween(c.stepStart, c.backwardStart);
    stats.bwdMs = millisBetween(c.backwardStart, end);
  } else {
    stats.fwdMs = stats.totalMs;
  }
  return stats;
}

bool inStep() {
  StepClock &c = stepClock();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.inStep;
}

} // namespace runtime
} // namespace rnn

//===----------------------------------------------------------------------===//
// C entry points.
//===----------------------------------------------------------------------===//

/// Compiled code cannot handle a null buffer (it would pass it on to the
/// BLAS or store through it): a failed allocation ends the process with one
/// line naming the request, exit status 2.
static void *checkedAllocation(void *p, size_t size) {
  if (!p) {
    std::fprintf(stderr,
                 "rnnrt: out of host memory: allocating %zu bytes failed "
                 "(%zu bytes held by the program)\n",
                 size, rnn::runtime::currentBytes());
    std::exit(2);
  }
  return p;
}

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return checkedAllocation(rnn::runtime::allocate(size), size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  return checkedAllocation(rnn::runtime::allocateAligned(alignment, size),
                           size);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  rnn::runtime::deallocate(ptr);
}

extern "C" void rnnrt_begin_phase(int64_t phase) {
  if (phase < 1)
    return;
  Clock::time_point now = Clock::now();
  StepClock &c = stepClock();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.inStep || c.sawBackward)
    return;
  c.sawBackward = true;
  c.backwardStart = now;
  rnn::runtime::hostMemory().beginBackward();
  rnn::runtime::deviceMemory().beginBackward();
}
