//===- AccountingTest.cpp - Tests for the memory ledger -------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: unit tests for MemoryAccounting driven by a fake backend (exact
// bytes, peaks, bad frees, backend failures, per-phase figures, the frozen
// state of graph capture), and for the device ledger's place in steps.
//
// Why: device memory is accounted by the same ledger as host memory but
// cannot be exercised without a GPU; a backend that hands out fake
// addresses and checks every release tests the bookkeeping anywhere.
//
//===----------------------------------------------------------------------===//

#include "rnn/Runtime/Accounting.h"
#include "rnn/Runtime/Runtime.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <set>

using namespace rnn::runtime;

namespace {

/// Hands out distinct fake addresses (never dereferenced) and checks that
/// only live ones are released.
class FakeBackend : public MemoryBackend {
public:
  void *allocate(size_t bytes, size_t alignment) override {
    ++allocations;
    lastAlignment = alignment;
    if (failNext) {
      failNext = false;
      return nullptr;
    }
    void *p = reinterpret_cast<void *>(next);
    next += 0x1000 + bytes;
    live.insert(p);
    return p;
  }
  void release(void *p) override {
    ++releases;
    EXPECT_EQ(live.erase(p), 1u) << "release of a pointer not handed out";
  }

  std::set<void *> live;
  int allocations = 0;
  int releases = 0;
  size_t lastAlignment = 0;
  bool failNext = false;

private:
  uintptr_t next = 0x100000;
};

TEST(Accounting, ExactBytesPeakAndCounts) {
  MemoryAccounting ledger;
  FakeBackend backend;
  void *a = ledger.allocate(backend, 100, 256);
  void *b = ledger.allocate(backend, 1000, 256);
  void *c = ledger.allocate(backend, 7, 256);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(backend.lastAlignment, 256u);
  EXPECT_EQ(ledger.currentBytes(), 1107u);
  EXPECT_EQ(ledger.peakBytes(), 1107u);
  EXPECT_EQ(ledger.liveAllocations(), 3u);
  EXPECT_EQ(ledger.totalAllocations(), 3u);
  EXPECT_TRUE(ledger.owns(b));

  ledger.deallocate(backend, b);
  EXPECT_FALSE(ledger.owns(b));
  EXPECT_EQ(backend.releases, 1);
  EXPECT_EQ(ledger.currentBytes(), 107u);
  EXPECT_EQ(ledger.peakBytes(), 1107u);
  EXPECT_EQ(ledger.liveAllocations(), 2u);

  ledger.resetCounters();
  EXPECT_EQ(ledger.peakBytes(), 107u);
  EXPECT_EQ(ledger.totalAllocations(), 0u);
  ledger.deallocate(backend, a);
  ledger.deallocate(backend, c);
  EXPECT_EQ(ledger.currentBytes(), 0u);
  EXPECT_EQ(ledger.liveAllocations(), 0u);
  EXPECT_TRUE(backend.live.empty());
  EXPECT_EQ(ledger.badFrees(), 0u);
}

TEST(Accounting, BadFreesAreCountedAndNotReleased) {
  MemoryAccounting ledger;
  FakeBackend backend;
  int onStack = 0;
  ledger.deallocate(backend, &onStack);
  EXPECT_EQ(ledger.badFrees(), 1u);
  void *p = ledger.allocate(backend, 64, 1);
  ledger.deallocate(backend, p);
  ledger.deallocate(backend, p); // Double free.
  ledger.deallocate(backend, nullptr);
  EXPECT_EQ(ledger.badFrees(), 2u);
  EXPECT_EQ(backend.releases, 1);
  EXPECT_EQ(ledger.currentBytes(), 0u);
}

TEST(Accounting, BackendFailureRecordsNothing) {
  MemoryAccounting ledger;
  FakeBackend backend;
  backend.failNext = true;
  EXPECT_EQ(ledger.allocate(backend, 4096, 1), nullptr);
  EXPECT_EQ(backend.allocations, 1);
  EXPECT_EQ(ledger.currentBytes(), 0u);
  EXPECT_EQ(ledger.peakBytes(), 0u);
  EXPECT_EQ(ledger.liveAllocations(), 0u);
  EXPECT_EQ(ledger.totalAllocations(), 0u);
  EXPECT_EQ(ledger.frozenViolations(), 0u);
}

TEST(Accounting, StepFiguresPerPhase) {
  MemoryAccounting ledger;
  FakeBackend backend;
  void *held = ledger.allocate(backend, 100, 1); // Live across the step.
  ledger.deallocate(backend, ledger.allocate(backend, 1 << 20, 1));
  ledger.beginStep();
  EXPECT_EQ(ledger.peakBytes(), 100u); // The earlier peak does not leak in.
  void *w = ledger.allocate(backend, 1000, 1);
  ledger.deallocate(backend, ledger.allocate(backend, 2000, 1));
  ledger.beginBackward(); // Boundary at 1100.
  void *g = ledger.allocate(backend, 500, 1);
  ledger.beginBackward(); // Only the first marker counts.
  ledger.deallocate(backend, w);
  MemoryFigures f = ledger.endStep();
  EXPECT_EQ(f.fwdPeakBytes, 3100u);
  EXPECT_EQ(f.bytesAtBackwardStart, 1100u);
  EXPECT_EQ(f.bwdPeakBytes, 1600u);
  EXPECT_EQ(f.peakBytes, 3100u);
  EXPECT_EQ(f.bytesAtEnd, 600u);

  // Without a marker everything is forward; the backward can peak higher.
  ledger.beginStep();
  void *x = ledger.allocate(backend, 10, 1);
  f = ledger.endStep();
  EXPECT_EQ(f.fwdPeakBytes, 610u);
  EXPECT_EQ(f.bwdPeakBytes, 0u);
  EXPECT_EQ(f.bytesAtBackwardStart, 0u);
  ledger.beginStep();
  ledger.beginBackward();
  ledger.deallocate(backend, ledger.allocate(backend, 4000, 1));
  f = ledger.endStep();
  EXPECT_EQ(f.bwdPeakBytes, 4610u);
  EXPECT_EQ(f.peakBytes, 4610u);

  // Outside a step: only the bytes at the end, and markers are ignored.
  ledger.beginBackward();
  f = ledger.endStep();
  EXPECT_EQ(f.bytesAtEnd, 610u);
  EXPECT_EQ(f.peakBytes, 0u);
  EXPECT_EQ(f.bytesAtBackwardStart, 0u);
  ledger.deallocate(backend, x);
  ledger.deallocate(backend, g);
  ledger.deallocate(backend, held);
  EXPECT_TRUE(backend.live.empty());
}

TEST(Accounting, FrozenLedgerRefusesAllocationAndFree) {
  MemoryAccounting ledger;
  FakeBackend backend;
  void *before = ledger.allocate(backend, 300, 1);
  ledger.freeze();
  EXPECT_TRUE(ledger.isFrozen());
  EXPECT_EQ(ledger.allocate(backend, 64, 1), nullptr);
  EXPECT_EQ(backend.allocations, 1); // The backend was not asked.
  ledger.deallocate(backend, before);
  EXPECT_EQ(backend.releases, 0); // Still owned and accounted.
  EXPECT_TRUE(ledger.owns(before));
  EXPECT_EQ(ledger.currentBytes(), 300u);
  EXPECT_EQ(ledger.frozenViolations(), 2u);
  int onStack = 0;
  ledger.deallocate(backend, &onStack); // Unknown: a bad free, as always.
  EXPECT_EQ(ledger.badFrees(), 1u);
  EXPECT_EQ(ledger.frozenViolations(), 2u);

  ledger.thaw();
  EXPECT_FALSE(ledger.isFrozen());
  void *after = ledger.allocate(backend, 64, 1);
  ASSERT_NE(after, nullptr);
  ledger.deallocate(backend, before);
  ledger.deallocate(backend, after);
  EXPECT_EQ(ledger.currentBytes(), 0u);
  EXPECT_EQ(ledger.frozenViolations(), 2u);
  ledger.resetCounters();
  EXPECT_EQ(ledger.frozenViolations(), 0u);
  EXPECT_TRUE(backend.live.empty());
}

TEST(Accounting, StepsCoverHostAndDeviceLedgers) {
  MemoryAccounting &device = deviceMemory();
  EXPECT_NE(&device, &hostMemory());
  FakeBackend backend;
  size_t hostBase = currentBytes();
  size_t deviceBase = device.currentBytes();

  beginStep();
  void *h = allocate(40); // Host: the host ledger only.
  EXPECT_EQ(hostMemory().currentBytes(), hostBase + 40);
  void *d1 = device.allocate(backend, 1000, 256);
  rnnrt_begin_phase(1);
  void *d2 = device.allocate(backend, 200, 256);
  device.deallocate(backend, d1);
  StepStats s = endStep();

  EXPECT_EQ(s.peakBytes, hostBase + 40);
  EXPECT_EQ(s.device.fwdPeakBytes, deviceBase + 1000);
  EXPECT_EQ(s.device.bytesAtBackwardStart, deviceBase + 1000);
  EXPECT_EQ(s.device.bwdPeakBytes, deviceBase + 1200);
  EXPECT_EQ(s.device.peakBytes, deviceBase + 1200);
  EXPECT_EQ(s.device.bytesAtEnd, deviceBase + 200);
  EXPECT_EQ(s.bytesAtBackwardStart, hostBase + 40);
  deallocate(h);
  device.deallocate(backend, d2);
  EXPECT_EQ(device.currentBytes(), deviceBase);
  EXPECT_TRUE(backend.live.empty());
}

} // namespace
