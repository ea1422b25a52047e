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
// The state is per thread (two threads calling at once have their own
// streams and events) and lives as long as the thread.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "rnn/Runtime/Cuda.h"

#include <atomic>
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

thread_local Lanes lanes;

/// The most lanes a step of any thread has used, lane 0 included.
std::atomic<unsigned> lanesHighWater{1};

/// A timing-free event in `event`, created if null.
bool ensureEvent(CudaState &s, CUevent &event, const char *what) {
  if (event)
    return true;
  return check(s, s.api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), what);
}

/// The runtime state, with the lanes bound to it; null with an error
/// recorded naming `what` if the runtime is not up or the lanes are not
/// forked (unless `forking`).
CudaState *enter(const char *what, bool forking = false) {
  CudaState *s = acquire(what);
  if (!s)
    return nullptr;
  if (lanes.state && lanes.state != s) {
    recordError(std::string(what) + ": lanes of another runtime state");
    return nullptr;
  }
  lanes.state = s;
  if (lanes.open == forking) {
    recordError(std::string(what) +
                (forking ? ": lanes already forked" : ": lanes not forked"));
    return nullptr;
  }
  return s;
}

} // namespace

CUstream rnn::runtime::cuda::laneStream() {
  return lanes.open && lanes.current > 0 ? lanes.streams[lanes.current - 1]
                                         : nullptr;
}

unsigned rnn::runtime::cuda::currentLane() {
  return lanes.open ? lanes.current : 0;
}

unsigned rnn::runtime::cuda::lanesUsed() { return lanesHighWater.load(); }

void rnn::runtime::cuda::resetLanes() {
  lanes.open = false;
  lanes.current = 0;
}

extern "C" void rnnrt_cuda_fork() {
  CudaState *s = enter("rnnrt_cuda_fork", /*forking=*/true);
  if (!s || !ensureEvent(*s, lanes.fork, "rnnrt_cuda_fork"))
    return;
  lanes.main = currentStream(*s);
  if (!check(*s, s->api.cuEventRecord(lanes.fork, lanes.main),
             "rnnrt_cuda_fork"))
    return;
  lanes.forked.assign(lanes.forked.size(), false);
  lanes.signalled.assign(lanes.signalled.size(), false);
  lanes.open = true;
  lanes.current = 0;
}

extern "C" void rnnrt_cuda_lane(int64_t lane) {
  const char *what = "rnnrt_cuda_lane";
  CudaState *s = enter(what);
  if (!s)
    return;
  if (lane < 0 || lane > kMaxLanes) {
    recordError(std::string(what) + ": lane " + std::to_string(lane) +
                " out of range [0, " + std::to_string(kMaxLanes) + "]");
    return;
  }
  if (lane > 0) {
    size_t i = static_cast<size_t>(lane - 1);
    if (lanes.streams.size() <= i) {
      lanes.streams.resize(i + 1, nullptr);
      lanes.forked.resize(i + 1, false);
      lanes.joins.resize(i + 1, nullptr);
      unsigned used = static_cast<unsigned>(lane) + 1;
      unsigned seen = lanesHighWater.load();
      while (seen < used && !lanesHighWater.compare_exchange_weak(seen, used)) {
      }
    }
    if (!lanes.streams[i] &&
        !check(*s,
               s->api.cuStreamCreate(&lanes.streams[i], CU_STREAM_NON_BLOCKING),
               what))
      return;
    if (!lanes.forked[i]) {
      if (!check(*s, s->api.cuStreamWaitEvent(lanes.streams[i], lanes.fork, 0),
                 what))
        return;
      lanes.forked[i] = true;
    }
  }
  lanes.current = static_cast<unsigned>(lane);
}

extern "C" void rnnrt_cuda_signal(int64_t slot) {
  const char *what = "rnnrt_cuda_signal";
  CudaState *s = enter(what);
  if (!s)
    return;
  if (slot < 0) {
    recordError(std::string(what) + ": negative slot");
    return;
  }
  size_t i = static_cast<size_t>(slot);
  if (lanes.slots.size() <= i) {
    lanes.slots.resize(i + 1, nullptr);
    lanes.signalled.resize(i + 1, false);
  }
  if (ensureEvent(*s, lanes.slots[i], what) &&
      check(*s, s->api.cuEventRecord(lanes.slots[i], currentStream(*s)), what))
    lanes.signalled[i] = true;
}

extern "C" void rnnrt_cuda_wait(int64_t slot) {
  const char *what = "rnnrt_cuda_wait";
  CudaState *s = enter(what);
  if (!s)
    return;
  // Waiting for an event never recorded would order nothing.
  if (slot < 0 || static_cast<size_t>(slot) >= lanes.signalled.size() ||
      !lanes.signalled[slot]) {
    recordError(std::string(what) + ": slot " + std::to_string(slot) +
                " was not signalled since the fork");
    return;
  }
  check(*s, s->api.cuStreamWaitEvent(currentStream(*s), lanes.slots[slot], 0),
        what);
}

extern "C" void rnnrt_cuda_join() {
  const char *what = "rnnrt_cuda_join";
  CudaState *s = enter(what);
  if (!s)
    return;
  lanes.current = 0;
  lanes.open = false;
  for (size_t i = 0; i < lanes.forked.size(); ++i) {
    if (!lanes.forked[i])
      continue;
    if (!ensureEvent(*s, lanes.joins[i], what) ||
        !check(*s, s->api.cuEventRecord(lanes.joins[i], lanes.streams[i]),
               what) ||
        !check(*s, s->api.cuStreamWaitEvent(lanes.main, lanes.joins[i], 0),
               what))
      return;
  }
}
