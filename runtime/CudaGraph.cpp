//===- CudaGraph.cpp - Whole-step CUDA graphs and event timing ------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: capture of the work issued on the runtime's stream into a CUDA
// graph, its instantiation, replay and destruction, and timing with events.
//
// Why: one training step launches many small kernels (a few per time step);
// replaying the step as one graph removes the per-launch host cost that
// otherwise dominates small shapes. A replay runs no host code, so the step
// must not allocate or free device memory while it is captured: the device
// ledger is frozen for the capture and any attempt fails the capture.
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
  if (!check(*s, s->api.cuEventSynchronize(end), "elapsedMs") ||
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
