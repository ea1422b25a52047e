//===- CudaLanes.cpp - Lanes: streams beside the step's own ---------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: rnnrt_cuda_fork, rnnrt_cuda_lane, rnnrt_cuda_signal,
// rnnrt_cuda_wait and rnnrt_cuda_join, which compiled code calls around a
// wavefront (the layers of a step, each on a lane of its own, ordered block
// by block through numbered signals), and laneStream(), which makes the
// work of the current lane go on its stream.
//
// Why: upstream's async tokens join streams by creating a new stream at
// every join and cannot carry a stream through a loop, while a wavefront
// joins two long-lived streams once per block of steps. Lane 0 is the
// step's own stream (the runtime's, or the caller's in a library call);
// lane n > 0 is a non-blocking stream of the calling thread, forked from
// lane 0 at rnnrt_cuda_fork (it waits for an event recorded there) and
// joined back at rnnrt_cuda_join (lane 0 waits for an event recorded on
// it). Everything is ordered by events, never by the host, so a step on
// lanes is still one capturable sequence: inside a capture the fork brings
// the lanes' streams into it and the join takes them out.
//
// The state is per thread and device (two threads calling at once have
// their own streams and events, and a stream belongs to one device) and
// lives as long as the thread.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "rnn/Runtime/Cuda.h"

#include <atomic>
#include <map>
#include <string>
#include <vector>

using namespace rnn::runtime::cuda;

namespace {

/// The lanes of the calling thread.
struct Lanes {
  CudaState *state = nullptr;
  /// Lane n's stream at n - 1, created on first use.
  std::vector<CUstream> streams;
  /// Per lane n > 0 at n - 1: whether it has forked since rnnrt_cuda_fork,
  /// and the event its join records.
  std::vector<bool> forked;
  std::vector<CUevent> joins;
  /// The signal slots, and whether each was signalled since the fork.
  std::vector<CUevent> slots;
  std::vector<bool> signalled;
  CUevent fork = nullptr;
  /// Lane 0's stream while forked.
  CUstream main = nullptr;
  bool open = false;
  unsigned current = 0;

  ~Lanes() {
    if (!state)
      return;
    // A library call leaves the caller's context current (often none): the
    // streams and events are destroyed in the context they were made in.
    CUcontext previous = nullptr;
    if (state->api.cuCtxGetCurrent(&previous) != CUDA_SUCCESS ||
        state->api.cuCtxSetCurrent(state->context) != CUDA_SUCCESS)
      return;
    for (CUstream stream : streams)
      state->api.cuStreamDestroy(stream);
    for (CUevent event : joins)
      if (event)
        state->api.cuEventDestroy(event);
    for (CUevent event : slots)
      if (event)
        state->api.cuEventDestroy(event);
    if (fork)
      state->api.cuEventDestroy(fork);
    state->api.cuCtxSetCurrent(previous);
  }
};

/// The calling thread's lanes, per device ordinal: a stream or event
/// belongs to the device it was made on.
thread_local std::map<int, Lanes> lanesByDevice;

/// The calling thread's lanes on `s`'s device.
Lanes &lanesOf(const CudaState &s) {
  Lanes &l = lanesByDevice[s.ordinal];
  l.state = const_cast<CudaState *>(&s);
  return l;
}

/// The most lanes a step of any thread has used, lane 0 included.
std::atomic<unsigned> lanesHighWater{1};

/// A timing-free event in `event`, created if null.
bool ensureEvent(CudaState &s, CUevent &event, const char *what) {
  if (event)
    return true;
  return check(s, s.api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), what);
}

/// The calling thread's lanes on its device; null with an error recorded
/// naming `what` if the runtime is not up or the lanes are not forked
/// (unless `forking`).
Lanes *enter(const char *what, bool forking = false) {
  CudaState *s = acquire(what);
  if (!s)
    return nullptr;
  Lanes &l = lanesOf(*s);
  if (l.open == forking) {
    recordError(std::string(what) +
                (forking ? ": lanes already forked" : ": lanes not forked"));
    return nullptr;
  }
  return &l;
}

} // namespace

CUstream rnn::runtime::cuda::laneStream(const CudaState &state) {
  auto found = lanesByDevice.find(state.ordinal);
  if (found == lanesByDevice.end())
    return nullptr;
  const Lanes &l = found->second;
  return l.open && l.current > 0 ? l.streams[l.current - 1] : nullptr;
}

unsigned rnn::runtime::cuda::currentLane(const CudaState &state) {
  auto found = lanesByDevice.find(state.ordinal);
  return found != lanesByDevice.end() && found->second.open
             ? found->second.current
             : 0;
}

unsigned rnn::runtime::cuda::lanesUsed() { return lanesHighWater.load(); }

void rnn::runtime::cuda::resetLanes() {
  for (auto &[ordinal, l] : lanesByDevice) {
    l.open = false;
    l.current = 0;
  }
}

extern "C" void rnnrt_cuda_fork() {
  Lanes *found = enter("rnnrt_cuda_fork", /*forking=*/true);
  if (!found)
    return;
  Lanes &l = *found;
  CudaState *s = l.state;
  if (!ensureEvent(*s, l.fork, "rnnrt_cuda_fork"))
    return;
  l.main = currentStream(*s);
  if (!check(*s, s->api.cuEventRecord(l.fork, l.main), "rnnrt_cuda_fork"))
    return;
  l.forked.assign(l.forked.size(), false);
  l.signalled.assign(l.signalled.size(), false);
  l.open = true;
  l.current = 0;
}

extern "C" void rnnrt_cuda_lane(int64_t lane) {
  const char *what = "rnnrt_cuda_lane";
  Lanes *found = enter(what);
  if (!found)
    return;
  Lanes &l = *found;
  CudaState *s = l.state;
  if (lane < 0 || lane > kMaxLanes) {
    recordError(std::string(what) + ": lane " + std::to_string(lane) +
                " out of range [0, " + std::to_string(kMaxLanes) + "]");
    return;
  }
  if (lane > 0) {
    size_t i = static_cast<size_t>(lane - 1);
    if (l.streams.size() <= i) {
      l.streams.resize(i + 1, nullptr);
      l.forked.resize(i + 1, false);
      l.joins.resize(i + 1, nullptr);
      unsigned used = static_cast<unsigned>(lane) + 1;
      unsigned seen = lanesHighWater.load();
      while (seen < used && !lanesHighWater.compare_exchange_weak(seen, used)) {
      }
    }
    if (!l.streams[i] &&
        !check(*s, s->api.cuStreamCreate(&l.streams[i], CU_STREAM_NON_BLOCKING),
               what))
      return;
    if (!l.forked[i]) {
      if (!check(*s, s->api.cuStreamWaitEvent(l.streams[i], l.fork, 0), what))
        return;
      l.forked[i] = true;
    }
  }
  l.current = static_cast<unsigned>(lane);
}

extern "C" void rnnrt_cuda_signal(int64_t slot) {
  const char *what = "rnnrt_cuda_signal";
  Lanes *found = enter(what);
  if (!found)
    return;
  Lanes &l = *found;
  CudaState *s = l.state;
  if (slot < 0) {
    recordError(std::string(what) + ": negative slot");
    return;
  }
  size_t i = static_cast<size_t>(slot);
  if (l.slots.size() <= i) {
    l.slots.resize(i + 1, nullptr);
    l.signalled.resize(i + 1, false);
  }
  if (ensureEvent(*s, l.slots[i], what) &&
      check(*s, s->api.cuEventRecord(l.slots[i], currentStream(*s)), what))
    l.signalled[i] = true;
}

extern "C" void rnnrt_cuda_wait(int64_t slot) {
  const char *what = "rnnrt_cuda_wait";
  Lanes *found = enter(what);
  if (!found)
    return;
  Lanes &l = *found;
  CudaState *s = l.state;
  // Waiting for an event never recorded would order nothing.
  if (slot < 0 || static_cast<size_t>(slot) >= l.signalled.size() ||
      !l.signalled[slot]) {
    recordError(std::string(what) + ": slot " + std::to_string(slot) +
                " was not signalled since the fork");
    return;
  }
  check(*s, s->api.cuStreamWaitEvent(currentStream(*s), l.slots[slot], 0),
        what);
}

extern "C" void rnnrt_cuda_join() {
  const char *what = "rnnrt_cuda_join";
  Lanes *found = enter(what);
  if (!found)
    return;
  Lanes &l = *found;
  CudaState *s = l.state;
  l.current = 0;
  l.open = false;
  for (size_t i = 0; i < l.forked.size(); ++i) {
    if (!l.forked[i])
      continue;
    if (!ensureEvent(*s, l.joins[i], what) ||
        !check(*s, s->api.cuEventRecord(l.joins[i], l.streams[i]), what) ||
        !check(*s, s->api.cuStreamWaitEvent(l.main, l.joins[i], 0), what))
      return;
  }
}
