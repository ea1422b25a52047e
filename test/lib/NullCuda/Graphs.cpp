//===- Graphs.cpp - graph replay ------------------------------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//

#include "NullCuda.h"

namespace nullcuda {

//===----------------------------------------------------------------------===//
// Graph replay.
//===----------------------------------------------------------------------===//


/// Runs a graph's nodes in order, as work on `stream`.
CUresult replay(const std::vector<Node> &nodes, CUstream stream) {
  State &s = state();
  const std::string entry = "cuGraphLaunch";
  for (const Node &node : nodes) {
    switch (node.kind) {
    case NodeKind::Kernel: {
      std::string where = entry + ": kernel " + node.kernel->name;
      if (!s.functions.count(node.function))
        return violation(CUDA_ERROR_INVALID_HANDLE,
                         where + ": its module was unloaded");
      std::vector<const void *> params;
      for (size_t offset : node.kernel->paramOffsets)
        params.push_back(node.params.data() + offset);
      std::vector<Span> spans;
      if (CUresult r = checkLaunch(where, *node.kernel, node.launch,
                                   params.data(), spans))
        return r;
      kernelAccesses(stream, *node.kernel, spans, where);
      ++s.count.replayedLaunches;
      if (currentContext)
        ++s.count.launchesByDevice[currentContext->ordinal];
      break;
    }
    case NodeKind::Copy:
      if (CUresult r = checkBuffer(entry + ": copy", "destination", node.dst,
                                   node.bytes, !node.dstOnDevice))
        return r;
      if (CUresult r = checkBuffer(entry + ": copy", "source", node.src,
                                   node.bytes, !node.srcOnDevice))
        return r;
      copyAccesses(stream, node.dst, node.src, node.bytes, entry + ": copy");
      std::memmove(reinterpret_cast<void *>(node.dst),
                   reinterpret_cast<const void *>(node.src), node.bytes);
      break;
    case NodeKind::Set:
      if (CUresult r = checkBuffer(entry + ": memset", "destination", node.dst,
                                   node.count * node.elementBytes, false))
        return r;
      copyAccesses(stream, node.dst, 0, node.count * node.elementBytes,
                   entry + ": memset");
      fill(node.dst, node.value, node.elementBytes, node.count);
      break;
    case NodeKind::EventRecord:
      if (!s.events.count(node.event))
        return fail(CUDA_ERROR_INVALID_HANDLE,
                    entry + ": a recorded event was destroyed");
      node.event->recorded = Recorded::Eagerly;
      node.event->hasTime = true;
      node.event->time = std::chrono::steady_clock::now();
      s.ordering.events[node.event] =
          s.ordering.streams[beginOperation(stream)];
      break;
    case NodeKind::Gemm:
      if (!s.blasHandles.count(node.gemm.handle))
        return fail(CUDA_ERROR_INVALID_HANDLE,
                    entry + ": the cuBLAS handle of a GEMM was destroyed");
      if (checkGemmOperands(
              entry + (node.gemm.bf16 ? ": cublasGemmEx" : ": cublasSgemm"),
              node.gemm))
        return CUDA_ERROR_INVALID_VALUE;
      gemmAccesses(stream, node.gemm,
                   entry +
                       (node.gemm.bf16 ? ": cublasGemmEx" : ": cublasSgemm"));
      runGemm(node.gemm);
      ++s.count.replayedGemms;
      ++s.count.gemmsByDevice[node.gemm.handle->context->ordinal];
      if (!node.gemm.workspace)
        ++s.count.replayedGemmsWithoutWorkspace;
      break;
    }
  }
  return CUDA_SUCCESS;
}

/// Records `event` on `stream`. Outside a capture the time is taken now.
/// In a capture a CU_EVENT_RECORD_EXTERNAL record becomes a node that takes
/// the time at every replay; a plain record only marks a point of the
/// capture (for cuStreamWaitEvent) and, as with the driver, gives no time.
CUresult recordEvent(const std::string &entry, CUevent event, CUstream stream,
                     unsigned flags) {
  if (CUresult r = ready(entry))
    return r;
  CUstream_st *capture = nullptr;
  if (CUresult r = routeWork(entry, stream, capture))
    return r;
  if (!state().events.count(event))
    return failCapture(capture, fail(CUDA_ERROR_INVALID_HANDLE,
                                     entry + ": unknown event " + hex(event)));
  if (flags & ~static_cast<unsigned>(CU_EVENT_RECORD_EXTERNAL))
    return failCapture(capture, fail(CUDA_ERROR_INVALID_VALUE,
                                     entry + ": unknown flags " + hex(flags)));
  bool external = flags & CU_EVENT_RECORD_EXTERNAL;
  if (!capture) {
    if (external)
      return fail(CUDA_ERROR_INVALID_VALUE,
                  entry + ": CU_EVENT_RECORD_EXTERNAL outside stream capture");
    event->recorded = Recorded::Eagerly;
    event->hasTime = true;
    event->time = std::chrono::steady_clock::now();
    Ordering &o = state().ordering;
    o.events[event] = o.streams[beginOperation(stream)];
    return CUDA_SUCCESS;
  }
  // Recorded in a capture, the event orders nothing outside it.
  state().ordering.events.erase(event);
  event->captureStream = capture;
  event->joinedStream = stream != capture ? stream : nullptr;
  event->joinedWork = stream != capture ? stream->work : 0;
  event->recorded = external ? Recorded::AsNode : Recorded::InCapture;
  if (external) {
    Node node(NodeKind::EventRecord);
    node.event = event;
    capture->nodes.push_back(std::move(node));
  }
  return CUDA_SUCCESS;
}

/// cuMemsetD32Async and cuMemsetD16Async: the destination must be aligned
/// device memory.
CUresult memsetAsync(const std::string &entry, CUdeviceptr dst, unsigned value,
                     unsigned elementBytes, size_t count, CUstream stream) {
  if (CUresult r = ready(entry))
    return r;
  CUstream_st *capture = nullptr;
  if (CUresult r = routeWork(entry, stream, capture))
    return r;
  if (count == 0)
    return CUDA_SUCCESS;
  if (dst % elementBytes != 0)
    return failCapture(
        capture, violation(CUDA_ERROR_INVALID_VALUE,
                           entry + ": destination " + hex(dst) + " is not " +
                               std::to_string(elementBytes) + "-byte aligned"));
  if (count > SIZE_MAX / elementBytes)
    return failCapture(capture, fail(CUDA_ERROR_INVALID_VALUE,
                                     entry + ": element count overflows"));
  if (CUresult r = checkBuffer(entry, "destination", dst, count * elementBytes,
                               /*hostAllowed=*/false))
    return failCapture(capture, r);
  if (!capture) {
    copyAccesses(stream, dst, 0, count * elementBytes, entry);
    fill(dst, value, elementBytes, count);
    return CUDA_SUCCESS;
  }
  Node node(NodeKind::Set);
  node.dst = dst;
  node.value = value;
  node.elementBytes = elementBytes;
  node.count = count;
  capture->nodes.push_back(std::move(node));
  return CUDA_SUCCESS;
}

} // namespace nullcuda
