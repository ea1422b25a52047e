//===- CudaLibrary.cpp - The calls of a compiled cuda library -------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: what the entry points of a library compiled for the cuda target
// (rnn-compile --target=cuda) call around the compiled function:
// rnnrt_cuda_enter and rnnrt_cuda_leave (see rnn-emit-c-abi), and the
// functions the library exports besides its entry points:
// rnnc_context_create and rnnc_context_destroy, rnnc_last_error and
// rnnc_set_graph_replay.
//
// Why: a library's caller owns the streams and the devices. An entry point
// takes a context, made per device by rnnc_context_create, and the
// caller's stream on that device: it enqueues the work on the stream and
// returns without waiting, as a CUDA kernel of the caller's framework
// would, leaves the caller's current context as it found it (PyTorch keeps
// its current device there), and reports a failure as a return code with a
// message, since nothing may be printed or aborted in a process that is not
// ours. One loaded library serves every device: the runtime keeps its
// state per device (CudaDriver.cpp), and a context adds its graph replay.
//
// Graph replay (opt-in per context, rnnc_set_graph_replay): a call issues a few
// launches per time step, whose host cost dominates small batches. With
// replay on, the context keeps the last N pointer sets each entry point was
// called with; the second call with a set captures the call's work into a
// CUDA graph, and later calls with the same set replay it as one launch.
// The pointers and the buffers' sizes are the whole of a call's inputs
// (the sizes give an entry point of dynamic shape its T and B, and the
// dropout seed is read from device memory), so a replay does what the
// call would do. Graphs run on the context's own stream, ordered after the
// caller's earlier work and before its later work by two events, so any
// caller stream, the legacy default stream included, can be used. A call
// made while the caller captures its own stream runs as without replay,
// into the caller's graph. The first call with a set runs eagerly: it
// loads the kernels and creates cuBLAS's handle, which a capture forbids.
// The graphs' GEMMs have cuBLAS workspaces of their own, one per lane
// (CudaBlas.cpp), the size of an eager call's, allocated before the first
// capture.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "rnn/Runtime/Cuda.h"

#include <cstdint>
#include <cstdio>
#include <list>
#include <mutex>
#include <string>
#include <vector>

using namespace rnn::runtime::cuda;

namespace {
/// The message of the calling thread's last failed call.
thread_local std::string lastError;

/// The alignment every caller buffer must have: the kernels load and store
/// vectors of 4 floats (convert-rnn-to-loops{whole-vectors}).
constexpr uintptr_t kBufferAlignment = 16;

std::string describePointer(const void *p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

/// Keeps the pending error, if any, as the thread's last error: 1 if there
/// was one, else 0.
int32_t keepError() {
  std::string error = takeError();
  if (error.empty())
    return 0;
  lastError = std::move(error);
  return 1;
}

/// A buffer the entry point writes (negative extent) that overlaps another
/// buffer, as a message; "" if there is none. Such a call would compute
/// garbage, and the kernels load the buffers they only read as read-only
/// data, which a write through another buffer must not change.
std::string findOverlap(void *const *buffers, const int64_t *extents,
                        int64_t count) {
  auto bytes = [&](int64_t i) {
    return static_cast<uintptr_t>(extents[i] < 0 ? -extents[i] : extents[i]);
  };
  for (int64_t i = 0; i < count; ++i) {
    auto begin = reinterpret_cast<uintptr_t>(buffers[i]);
    if (extents[i] >= 0 || bytes(i) == 0 || !begin)
      continue;
    for (int64_t j = 0; j < count; ++j) {
      auto other = reinterpret_cast<uintptr_t>(buffers[j]);
      if (j == i || bytes(j) == 0 || !other)
        continue;
      if (begin < other + bytes(j) && other < begin + bytes(i))
        return "rnnc: buffer " + std::to_string(i) + " (" +
               std::to_string(bytes(i)) + " bytes at " +
               describePointer(buffers[i]) +
               "), which the entry point writes, overlaps buffer " +
               std::to_string(j) + " (" + std::to_string(bytes(j)) +
               " bytes at " + describePointer(buffers[j]) +
               "); a written buffer must share no memory with another";
    }
  }
  return "";
}

/// The value of rnnrt_cuda_enter when it replayed the call: the entry
/// point returns 0 without running the function.
constexpr int32_t kReplayed = 2;

/// A pointer set an entry point was called with, and its graph once
/// captured.
struct ReplayedCall {
  const char *entry;
  std::vector<void *> buffers;
  /// The buffers' bytes: an entry point of dynamic shape replays only the
  /// shape it was captured at.
  std::vector<int64_t> extents;
  CUgraphExec exec = nullptr;
};

/// A context's captured calls. The mutex is held from the enter of a
/// capturing call to its leave, so one capture runs at a time and no other
/// thread changes the list meanwhile.
struct GraphReplay {
  std::mutex mutex;
  /// How many pointer sets are kept (rnnc_set_graph_replay); 0 is off.
  size_t capacity = 0;
  /// Most recently used first.
  std::list<ReplayedCall> calls;
  /// The stream graphs are captured on and replayed on, and the events
  /// that order it after the caller's earlier work and the caller's later
  /// work after it. Created at the first capture.
  CUstream stream = nullptr;
  CUevent fork = nullptr;
  CUevent join = nullptr;
};

} // namespace

/// What rnnc_context_create returns: a device, and the graph replay of the
/// calls made with the context.
struct rnnc_context {
  /// kContextMagic while the context lives, so that a pointer that is no
  /// context is refused rather than followed.
  uint64_t magic;
  CudaState *device;
  GraphReplay replay;
};

namespace {

constexpr uint64_t kContextMagic = 0x726e6e63637478ull; // "rnncctx"

/// The context `context` names, or null with the calling thread's last
/// error set naming `entry`.
rnnc_context *checkContext(rnnc_context *context, const char *entry) {
  if (!context) {
    lastError = std::string(entry) +
                ": no context; make one for the device with "
                "rnnc_context_create";
    return nullptr;
  }
  if (context->magic != kContextMagic) {
    lastError = std::string(entry) + ": " + describePointer(context) +
                " is not a live context (rnnc_context_create)";
    return nullptr;
  }
  return context;
}

/// The capture the calling thread's call makes, between enter and leave.
struct Capture {
  bool active = false;
  CudaState *state = nullptr;
  GraphReplay *replay = nullptr;
  CUstream caller = nullptr;
  std::list<ReplayedCall>::iterator call;
};
thread_local Capture capture;

/// Destroys the graphs of the calls beyond the first `keep`, and the calls.
void dropCalls(CudaState &s, GraphReplay &replay, size_t keep) {
  while (replay.calls.size() > keep) {
    if (CUgraphExec exec = replay.calls.back().exec)
      check(s, s.api.cuGraphExecDestroy(exec), "rnnc: dropping a graph");
    replay.calls.pop_back();
  }
}

/// Orders `to` after the work issued so far to `from`.
bool order(CudaState &s, CUevent event, CUstream from, CUstream to) {
  return check(s, s.api.cuEventRecord(event, from), "rnnc: cuEventRecord") &&
         check(s, s.api.cuStreamWaitEvent(to, event, 0),
               "rnnc: cuStreamWaitEvent");
}

/// Whether `stream` is capturing (the caller records a graph of its own).
bool isCapturing(CudaState &s, CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  // The legacy default stream cannot capture; asking about it fails while
  // a blocking stream captures, and work on it would fail the same way.
  if (s.api.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS)
    return true;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/// Creates the replay stream and events on first use.
bool createReplayStream(CudaState &s, GraphReplay &replay) {
  if (!replay.stream &&
      !check(s, s.api.cuStreamCreate(&replay.stream, CU_STREAM_NON_BLOCKING),
             "rnnc: creating the graph replay stream"))
    return false;
  for (CUevent *event : {&replay.fork, &replay.join})
    if (!*event &&
        !check(s, s.api.cuEventCreate(event, CU_EVENT_DISABLE_TIMING),
               "rnnc: creating the graph replay events"))
      return false;
  return true;
}

/// With graph replay on, runs or prepares the call of `entry` on `buffers`
/// (the caller's stream is current): returns kReplayed if a graph replayed
/// it, 0 if the function must run (eagerly, or captured with the capture
/// begun), 1 on failure with the error recorded.
int32_t replayOrCapture(CudaState &s, GraphReplay &replay, const char *entry,
                        CUstream caller, void *const *buffers,
                        const int64_t *extents, int64_t count) {
  std::unique_lock<std::mutex> lock(replay.mutex);
  if (replay.capacity == 0 || isCapturing(s, caller))
    return 0;
  std::vector<void *> key(buffers, buffers + count);
  std::vector<int64_t> sizes(extents, extents + count);
  auto call = replay.calls.begin();
  while (call != replay.calls.end() &&
         (call->entry != entry || call->buffers != key ||
          call->extents != sizes))
    ++call;
  if (call == replay.calls.end()) {
    replay.calls.push_front(
        ReplayedCall{entry, std::move(key), std::move(sizes)});
    dropCalls(s, replay, replay.capacity);
    return 0;
  }
  replay.calls.splice(replay.calls.begin(), replay.calls, call);
  if (!createReplayStream(s, replay) ||
      !order(s, replay.fork, caller, replay.stream))
    return 1;
  if (call->exec) {
    bool ok = check(s, s.api.cuGraphLaunch(call->exec, replay.stream),
                    "rnnc: replaying a call's graph") &&
              order(s, replay.join, replay.stream, caller);
    return ok ? kReplayed : 1;
  }
  if (!readyReplayWorkspaces(s, "rnnc: graph replay's cuBLAS workspaces") ||
      !check(s,
             s.api.cuStreamBeginCapture(replay.stream,
                                        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
             "rnnc: capturing a call for graph replay"))
    return 1;
  capture = Capture{true, &s, &replay, caller, call};
  beginCallerStream(replay.stream);
  beginReplayCapture();
  // Held until the capture ends in rnnrt_cuda_leave.
  lock.release();
  return 0;
}

/// Ends the calling thread's capture: instantiates the graph and launches
/// it, the captured work not having run. False with the error recorded if
/// the call failed or could not be captured.
bool finishCapture(CudaState &s) {
  GraphReplay &replay = *capture.replay;
  std::lock_guard<std::mutex> lock(replay.mutex, std::adopt_lock);
  Capture done = capture;
  capture = Capture();
  // An error the function recorded is the one reported, before any of
  // ending the capture.
  std::string error = takeError();
  bool failed = !error.empty();
  CUgraph graph = nullptr;
  CUresult ended = s.api.cuStreamEndCapture(replay.stream, &graph);
  if (failed)
    recordError(std::move(error));
  else
    failed = !check(s, ended, "rnnc: capturing a call for graph replay");
  CUgraphExec exec = nullptr;
  bool ok =
      !failed && check(s, s.api.cuGraphInstantiate(&exec, graph, /*flags=*/0),
                       "rnnc: instantiating a call's graph");
  if (graph)
    check(s, s.api.cuGraphDestroy(graph), "rnnc: cuGraphDestroy");
  if (!ok) {
    // The next call with these pointers starts over, eagerly.
    replay.calls.erase(done.call);
    return false;
  }
  done.call->exec = exec;
  return check(s, s.api.cuGraphLaunch(exec, replay.stream),
               "rnnc: launching a call's graph") &&
         order(s, replay.join, replay.stream, done.caller);
}
} // namespace

extern "C" int32_t rnnrt_cuda_enter(rnnc_context *context, const char *entry,
                                    void *stream, void *const *buffers,
                                    const int64_t *extents, int64_t count) {
  // An error left by earlier work outside a call (a module unloaded, say)
  // must not be blamed on this one.
  (void)takeError();
  for (int64_t i = 0; i < count; ++i)
    if (reinterpret_cast<uintptr_t>(buffers[i]) % kBufferAlignment != 0) {
      lastError = "rnnc: buffer " + std::to_string(i) + " (" +
                  describePointer(buffers[i]) + ") is not aligned to " +
                  std::to_string(kBufferAlignment) +
                  " bytes; the kernels access 16-byte vectors, so every "
                  "buffer must start at a multiple of 16 bytes";
      return 1;
    }
  if (std::string overlap = findOverlap(buffers, extents, count);
      !overlap.empty()) {
    lastError = std::move(overlap);
    return 1;
  }
  if (!checkContext(context, "rnnc"))
    return 1;
  CudaState *s = enterCall("rnnc", *context->device);
  if (!s) {
    leaveCall();
    return keepError();
  }
  // The stream must be one of the context's device (of its primary
  // context, which CUDA runtime users such as PyTorch share): work on
  // another device's stream would fail at the first launch, less clearly.
  auto caller = static_cast<CUstream>(stream);
  CUcontext streamContext = nullptr;
  if (CUresult r = s->api.cuStreamGetCtx(caller, &streamContext)) {
    lastError = "rnnc: the caller's stream " + describePointer(stream) +
                " is not a CUDA stream: cuStreamGetCtx: " + describe(*s, r);
    leaveCall();
    return 1;
  }
  if (streamContext != s->context) {
    lastError = "rnnc: the caller's stream " + describePointer(stream) +
                " belongs to another CUDA context than the rnnc context's "
                "device (the primary context of device " +
                std::to_string(s->ordinal) +
                "); call with a context of the stream's device "
                "(rnnc_context_create)";
    leaveCall();
    return 1;
  }
  beginCallerStream(caller);
  int32_t status = replayOrCapture(*s, context->replay, entry, caller, buffers,
                                   extents, count);
  if (status == 0)
    return 0;
  leaveCall();
  return status == kReplayed ? kReplayed : keepError();
}

extern "C" int32_t rnnrt_cuda_leave() {
  if (capture.active)
    finishCapture(*capture.state);
  leaveCall();
  return keepError();
}

extern "C" const char *rnnc_last_error() { return lastError.c_str(); }

extern "C" rnnc_context *rnnc_context_create(int32_t device) {
  (void)takeError();
  if (device < 0) {
    lastError = "rnnc_context_create: device " + std::to_string(device) +
                " is negative";
    return nullptr;
  }
  CudaState *s = openDevice(device, "rnnc_context_create");
  if (!s) {
    keepError();
    return nullptr;
  }
  return new rnnc_context{kContextMagic, s, {}};
}

extern "C" int32_t rnnc_context_destroy(rnnc_context *context) {
  (void)takeError();
  if (!context)
    return 0;
  if (!checkContext(context, "rnnc_context_destroy"))
    return 1;
  GraphReplay &replay = context->replay;
  {
    std::lock_guard<std::mutex> lock(replay.mutex);
    // Graphs, streams and events are destroyed in the device's context,
    // the caller's current context given back afterwards.
    if (CudaState *s = enterCall("rnnc_context_destroy", *context->device)) {
      dropCalls(*s, replay, 0);
      if (replay.stream)
        check(*s, s->api.cuStreamDestroy(replay.stream),
              "rnnc_context_destroy: the graph replay stream");
      for (CUevent event : {replay.fork, replay.join})
        if (event)
          check(*s, s->api.cuEventDestroy(event),
                "rnnc_context_destroy: the graph replay events");
    }
    leaveCall();
  }
  context->magic = 0;
  delete context;
  return keepError();
}

extern "C" int32_t rnnc_set_graph_replay(rnnc_context *context, int32_t calls) {
  (void)takeError();
  if (!checkContext(context, "rnnc_set_graph_replay"))
    return 1;
  if (calls < 0) {
    lastError = "rnnc_set_graph_replay: " + std::to_string(calls) +
                " pointer sets; give 0 (off) or more";
    return 1;
  }
  GraphReplay &replay = context->replay;
  std::lock_guard<std::mutex> lock(replay.mutex);
  replay.capacity = static_cast<size_t>(calls);
  if (replay.calls.size() <= replay.capacity)
    return 0;
  // Graphs are destroyed in the device's context, the caller's current
  // context given back afterwards.
  if (CudaState *s = enterCall("rnnc_set_graph_replay", *context->device))
    dropCalls(*s, replay, replay.capacity);
  leaveCall();
  return keepError();
}
