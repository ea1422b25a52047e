//===- CudaGraph.cpp - Whole-step CUDA graphs and event timing ------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: capture of the work issued on the runtime's stream into a CUDA
// graph, its instantiation, replay and destruction, and timing with events:
// single events, and the step timer whose backward event is recorded by
// the phase marker of compiled code.
//
// Why: one training step launches many small kernels (a few per time step);
// replaying the step as one graph removes the per-launch host cost that
// otherwise dominates small shapes. A replay runs no host code, so the step
// must not allocate or free device memory while it is captured: the device
// ledger is frozen for the capture and any attempt fails the capture. The
// launches of a step are asynchronous, so the host's clock measures when
// work was issued, not when it ran: step and phase times come from events
// on the stream. A replay runs no host code either, so the backward event
// is recorded as an external event node of the captured graph.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "rnn/Runtime/Cuda.h"
#include "rnn/Runtime/Runtime.h"

using namespace rnn::runtime;
using namespace rnn::runtime::cuda;

namespace rnn {
namespace runtime {
namespace cuda {

/// A captured graph and its executable instance.
struct Graph {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
};

} // namespace cuda
} // namespace runtime
} // namespace rnn

namespace {

/// Frozen-ledger violations when the current capture began.
size_t violationsAtCaptureStart = 0;

/// The step timer's events, created on first use and kept. Used from the
/// thread that runs the steps.
struct StepTimer {
  CUevent start = nullptr;
  CUevent backward = nullptr;
  CUevent end = nullptr;
  /// Whether the backward event was recorded in the current eager step.
  bool backwardThisStep = false;
  /// Whether the graph captured last records the backward event.
  bool backwardInGraph = false;
};

StepTimer &stepTimer() {
  static StepTimer *timer = new StepTimer();
  return *timer;
}

/// Creates the timer's events if needed.
bool createTimerEvents(CudaState &s, StepTimer &timer) {
  for (CUevent *event : {&timer.start, &timer.backward, &timer.end})
    if (!*event &&
        !check(s, s.api.cuEventCreate(event, CU_EVENT_DEFAULT), "step timer"))
      return false;
  return true;
}

} // namespace

bool rnn::runtime::cuda::beginCapture() {
  CudaState *s = acquire("beginCapture");
  if (!s)
    return false;
  if (s->capturing) {
    recordError("beginCapture: a capture is already in progress");
    return false;
  }
  MemoryAccounting &ledger = deviceMemory();
  violationsAtCaptureStart = ledger.frozenViolations();
  ledger.freeze();
  if (!check(*s,
             s->api.cuStreamBeginCapture(s->stream,
                                         CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
             "beginCapture")) {
    ledger.thaw();
    return false;
  }
  s->capturing = true;
  stepTimer().backwardInGraph = false;
  return true;
}

Graph *rnn::runtime::cuda::endCapture() {
  CudaState *s = acquire("endCapture");
  if (!s)
    return nullptr;
  if (!s->capturing) {
    recordError("endCapture: no capture in progress");
    return nullptr;
  }
  CUgraph graph = nullptr;
  bool ok =
      check(*s, s->api.cuStreamEndCapture(s->stream, &graph), "endCapture");
  s->capturing = false;
  MemoryAccounting &ledger = deviceMemory();
  ledger.thaw();
  size_t refused = ledger.frozenViolations() - violationsAtCaptureStart;
  if (ok && refused != 0) {
    recordError("endCapture: " + std::to_string(refused) +
                " device allocation(s) or free(s) during capture; device "
                "memory must be preallocated");
    ok = false;
  }
  CUgraphExec exec = nullptr;
  if (ok)
    ok = check(*s, s->api.cuGraphInstantiate(&exec, graph, /*flags=*/0),
               "endCapture: cuGraphInstantiate");
  if (!ok) {
    if (graph)
      s->api.cuGraphDestroy(graph);
    return nullptr;
  }
  return new Graph{graph, exec};
}

bool rnn::runtime::cuda::launchGraph(Graph *graph) {
  CudaState *s = acquire("launchGraph");
  if (!s)
    return false;
  if (!graph) {
    recordError("launchGraph: no graph");
    return false;
  }
  return check(*s, s->api.cuGraphLaunch(graph->exec, s->stream), "launchGraph");
}

void rnn::runtime::cuda::destroyGraph(Graph *graph) {
  if (!graph)
    return;
  if (CudaState *s = acquire("destroyGraph")) {
    check(*s, s->api.cuGraphExecDestroy(graph->exec), "destroyGraph");
    check(*s, s->api.cuGraphDestroy(graph->graph), "destroyGraph");
  }
  delete graph;
}

CUevent rnn::runtime::cuda::recordTimingEvent() {
  CudaState *s = acquire("recordTimingEvent");
  if (!s)
    return nullptr;
  CUevent event = nullptr;
  if (!check(*s, s->api.cuEventCreate(&event, CU_EVENT_DEFAULT),
             "recordTimingEvent"))
    return nullptr;
  if (!check(*s, s->api.cuEventRecord(event, s->stream), "recordTimingEvent")) {
    s->api.cuEventDestroy(event);
    return nullptr;
  }
  return event;
}

double rnn::runtime::cuda::elapsedMs(CUevent start, CUevent end) {
  CudaState *s = acquire("elapsedMs");
  if (!s)
    return -1.0;
  if (!start || !end) {
    recordError("elapsedMs: missing event");
    return -1.0;
  }
  float ms = 0.0f;
  if (!waitForEvent(*s, end, "elapsedMs") ||
      !check(*s, s->api.cuEventElapsedTime(&ms, start, end), "elapsedMs"))
    return -1.0;
  return ms;
}

void rnn::runtime::cuda::destroyEvent(CUevent event) {
  if (!event)
    return;
  if (CudaState *s = acquire("destroyEvent"))
    check(*s, s->api.cuEventDestroy(event), "destroyEvent");
}

bool rnn::runtime::cuda::startStepTimer() {
  CudaState *s = acquire("startStepTimer");
  StepTimer &timer = stepTimer();
  if (!s || !createTimerEvents(*s, timer))
    return false;
  timer.backwardThisStep = false;
  return check(*s, s->api.cuEventRecord(timer.start, s->stream),
               "startStepTimer");
}

bool rnn::runtime::cuda::stopStepTimer(bool replayed, DeviceStepTimes &times) {
  CudaState *s = acquire("stopStepTimer");
  StepTimer &timer = stepTimer();
  if (!s || !timer.start) {
    recordError("stopStepTimer: the step timer was not started");
    return false;
  }
  if (!check(*s, s->api.cuEventRecord(timer.end, s->stream), "stopStepTimer"))
    return false;
  float total = 0.0f, fwd = 0.0f;
  if (!waitForEvent(*s, timer.end, "stopStepTimer") ||
      !check(*s, s->api.cuEventElapsedTime(&total, timer.start, timer.end),
             "stopStepTimer"))
    return false;
  times = DeviceStepTimes();
  times.totalMs = total;
  times.fwdMs = total;
  times.sawBackward = replayed ? timer.backwardInGraph : timer.backwardThisStep;
  if (times.sawBackward) {
    if (!check(*s,
               s->api.cuEventElapsedTime(&fwd, timer.start, timer.backward),
               "stopStepTimer"))
      return false;
    times.fwdMs = fwd;
    times.bwdMs = total - fwd;
  }
  return true;
}

extern "C" void rnnrt_cuda_begin_phase(int64_t phase) {
  rnnrt_begin_phase(phase);
  if (phase < 1)
    return;
  CudaState *s = acquire("rnnrt_begin_phase");
  StepTimer &timer = stepTimer();
  // Outside a timed step (no start event yet) there is nothing to time.
  if (!s || !timer.start)
    return;
  // Inside a capture the record becomes a node of the graph; it must be an
  // external event record to be one.
  unsigned flags = s->capturing ? CU_EVENT_RECORD_EXTERNAL : CU_EVENT_RECORD_DEFAULT;
  if (!check(*s, s->api.cuEventRecordWithFlags(timer.backward, s->stream, flags),
             "rnnrt_begin_phase"))
    return;
  if (s->capturing)
    timer.backwardInGraph = true;
  else
    timer.backwardThisStep = true;
}
