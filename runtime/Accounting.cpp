//===- Accounting.cpp - Byte accounting for one memory space --------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the MemoryAccounting ledger declared in Accounting.h.
//
// Why: compiled programs free without a size, hence the pointer->size map;
// the backend is called under the ledger's mutex so that the map and the
// memory it describes never disagree, even if several threads allocate.
//
//===----------------------------------------------------------------------===//

#include "rnn/Runtime/Accounting.h"

#include <algorithm>

using namespace rnn::runtime;

MemoryBackend::~MemoryBackend() = default;

void *MemoryAccounting::allocate(MemoryBackend &backend, size_t bytes,
                                 size_t alignment) {
  std::lock_guard<std::mutex> lock(mutex);
  if (frozen) {
    ++violations;
    return nullptr;
  }
  void *p = backend.allocate(bytes, alignment);
  if (!p)
    return nullptr;
  sizes.emplace(p, bytes);
  current += bytes;
  ++total;
  peak = std::max(peak, current);
  if (inStep) {
    size_t &phasePeak = sawBackward ? bwdPeak : fwdPeak;
    phasePeak = std::max(phasePeak, current);
  }
  return p;
}

void MemoryAccounting::deallocate(MemoryBackend &backend, void *p) {
  if (!p)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = sizes.find(p);
  if (it == sizes.end()) {
    ++bad;
    return;
  }
  if (frozen) {
    ++violations;
    return;
  }
  current -= it->second;
  sizes.erase(it);
  backend.release(p);
}

size_t MemoryAccounting::currentBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return current;
}

size_t MemoryAccounting::peakBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return peak;
}

size_t MemoryAccounting::liveAllocations() const {
  std::lock_guard<std::mutex> lock(mutex);
  return sizes.size();
}

size_t MemoryAccounting::totalAllocations() const {
  std::lock_guard<std::mutex> lock(mutex);
  return total;
}

size_t MemoryAccounting::badFrees() const {
  std::lock_guard<std::mutex> lock(mutex);
  return bad;
}

bool MemoryAccounting::owns(const void *p) const {
  std::lock_guard<std::mutex> lock(mutex);
  return sizes.count(const_cast<void *>(p)) != 0;
}

void MemoryAccounting::resetCounters() {
  std::lock_guard<std::mutex> lock(mutex);
  peak = current;
  total = 0;
  bad = 0;
  violations = 0;
}

void MemoryAccounting::beginStep() {
  std::lock_guard<std::mutex> lock(mutex);
  inStep = true;
  sawBackward = false;
  peak = current;
  fwdPeak = current;
  bwdPeak = 0;
  atBackwardStart = 0;
}

void MemoryAccounting::beginBackward() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!inStep || sawBackward)
    return;
  sawBackward = true;
  atBackwardStart = current;
  bwdPeak = current;
}

MemoryFigures MemoryAccounting::endStep() {
  std::lock_guard<std::mutex> lock(mutex);
  MemoryFigures figures;
  figures.bytesAtEnd = current;
  if (!inStep)
    return figures;
  inStep = false;
  figures.fwdPeakBytes = fwdPeak;
  if (sawBackward) {
    figures.bwdPeakBytes = bwdPeak;
    figures.bytesAtBackwardStart = atBackwardStart;
  }
  figures.peakBytes = std::max(figures.fwdPeakBytes, figures.bwdPeakBytes);
  return figures;
}

void MemoryAccounting::freeze() {
  std::lock_guard<std::mutex> lock(mutex);
  frozen = true;
}

void MemoryAccounting::thaw() {
  std::lock_guard<std::mutex> lock(mutex);
  frozen = false;
}

bool MemoryAccounting::isFrozen() const {
  std::lock_guard<std::mutex> lock(mutex);
  return frozen;
}

size_t MemoryAccounting::frozenViolations() const {
  std::lock_guard<std::mutex> lock(mutex);
  return violations;
}
