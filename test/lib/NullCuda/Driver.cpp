//===- Driver.cpp - the CUDA driver's entry points ------------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//

#include "NullCuda.h"


using namespace nullcuda;

//===----------------------------------------------------------------------===//
// CUDA driver entry points.
//===----------------------------------------------------------------------===//

extern "C" {

NULLCUDA_EXPORT CUresult CUDAAPI cuInit(unsigned int flags) {
  std::lock_guard<std::mutex> lock(enter());
  if (flags != 0)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuInit: flags must be 0");
  state().initialized = true;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error,
                                                const char **pStr) {
  std::lock_guard<std::mutex> lock(enter());
  if (!pStr)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuGetErrorName: null result");
  const ErrorText *known = findError(error);
  *pStr = known ? known->name : nullptr;
  return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error,
                                                  const char **pStr) {
  std::lock_guard<std::mutex> lock(enter());
  if (!pStr)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuGetErrorString: null result");
  const ErrorText *known = findError(error);
  *pStr = known ? known->text : nullptr;
  return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count) {
  std::lock_guard<std::mutex> lock(enter());
  if (!state().initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuDeviceGetCount: no cuInit");
  if (!count)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetCount: null result");
  *count = deviceCount();
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  std::lock_guard<std::mutex> lock(enter());
  if (!state().initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuDeviceGet: no cuInit");
  if (!device)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGet: null result");
  if (!primaryContext(ordinal))
    return fail(
        CUDA_ERROR_INVALID_DEVICE,
        "cuDeviceGet: device " + std::to_string(ordinal) + " (there " +
            (deviceCount() == 1
                 ? "is 1 device)"
                 : "are " + std::to_string(deviceCount()) + " devices)"));
  *device = ordinal;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx,
                                                          CUdevice dev) {
  std::lock_guard<std::mutex> lock(enter());
  State &s = state();
  if (!s.initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED,
                "cuDevicePrimaryCtxRetain: no cuInit");
  if (!pctx)
    return fail(CUDA_ERROR_INVALID_VALUE,
                "cuDevicePrimaryCtxRetain: null result");
  if (!primaryContext(dev))
    return fail(CUDA_ERROR_INVALID_DEVICE,
                "cuDevicePrimaryCtxRetain: device " + std::to_string(dev));
  ++s.primaryRetains[dev];
  *pctx = primaryContext(dev);
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  std::lock_guard<std::mutex> lock(enter());
  State &s = state();
  if (!s.initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED,
                "cuDevicePrimaryCtxRelease: no cuInit");
  if (!primaryContext(dev))
    return fail(CUDA_ERROR_INVALID_DEVICE,
                "cuDevicePrimaryCtxRelease: device " + std::to_string(dev));
  if (s.primaryRetains[dev] == 0)
    return fail(CUDA_ERROR_INVALID_CONTEXT,
                "cuDevicePrimaryCtxRelease: the primary context is not "
                "retained");
  --s.primaryRetains[dev];
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(enter());
  State &s = state();
  if (!s.initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuCtxSetCurrent: no cuInit");
  bool known = !ctx;
  for (int ordinal = 0; ordinal < deviceCount(); ++ordinal)
    known = known || ctx == primaryContext(ordinal);
  if (!known)
    return fail(CUDA_ERROR_INVALID_CONTEXT,
                "cuCtxSetCurrent: unknown context " + hex(ctx));
  currentContext = ctx;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx) {
  std::lock_guard<std::mutex> lock(enter());
  if (!state().initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuCtxGetCurrent: no cuInit");
  if (!pctx)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuCtxGetCurrent: null result");
  *pctx = currentContext;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module,
                                                  const void *image) {
  std::lock_guard<std::mutex> lock(enter());
  return loadModule("cuModuleLoadData", module, image, nullptr, 0);
}

NULLCUDA_EXPORT CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module,
                                                    const void *image,
                                                    unsigned int numOptions,
                                                    CUjit_option *options,
                                                    void **optionValues) {
  std::lock_guard<std::mutex> lock(enter());
  if (numOptions > 0 && (!options || !optionValues))
    return fail(CUDA_ERROR_INVALID_VALUE,
                "cuModuleLoadDataEx: null options or option values");
  // The error log is filled like the driver's JIT log; other options do
  // not apply.
  char *log = nullptr;
  size_t logBytes = 0;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      log = static_cast<char *>(optionValues[i]);
    else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      logBytes = reinterpret_cast<uintptr_t>(optionValues[i]);
  }
  return loadModule("cuModuleLoadDataEx", module, image, log, logBytes);
}

NULLCUDA_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  std::lock_guard<std::mutex> lock(enter());
  if (CUresult r = ready("cuModuleUnload"))
    return r;
  State &s = state();
  if (!s.modules.erase(hmod))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                "cuModuleUnload: unknown module " + hex(hmod));
  for (auto &function : hmod->functions)
    s.functions.erase(function.second.get());
  delete hmod;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc,
                                                     CUmodule hmod,
                                                     const char *name) {
  std::lock_guard<std::mutex> lock(enter());
  State &s = state();
  ++s.count.getFunction;
  if (CUresult r = ready("cuModuleGetFunction"))
    return r;
  if (!hfunc || !name)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuModuleGetFunction: null argument");
  if (!s.modules.count(hmod))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                "cuModuleGetFunction: unknown module " + hex(hmod));
  auto it = hmod->functions.find(name);
  if (it == hmod->functions.end())
    return fail(CUDA_ERROR_NOT_FOUND, std::string("cuModuleGetFunction: no "
                                                  "kernel named ") +
                                          name + " in the module");
  *hfunc = it->second.get();
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc,
                                                    CUfunction_attribute attrib,
                                                    int value) {
  std::lock_guard<std::mutex> lock(enter());
  if (CUresult r = ready("cuFuncSetAttribute"))
    return r;
  if (!state().functions.count(hfunc))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                "cuFuncSetAttribute: unknown function " + hex(hfunc));
  if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 || value > kMaxDynamicShared)
      return fail(CUDA_ERROR_INVALID_VALUE,
                  "cuFuncSetAttribute(" + hfunc->info->name +
                      "): dynamic shared memory limit " +
                      std::to_string(value) + " outside [0, " +
                      std::to_string(kMaxDynamicShared) + "]");
    hfunc->maxDynamicShared = value;
  }
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuLaunchKernel(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
    unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
    unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
    void **kernelParams, void **extra) {
  std::lock_guard<std::mutex> lock(enter());
  State &s = state();
  if (CUresult r = ready("cuLaunchKernel"))
    return r;
  if (!s.functions.count(f))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                "cuLaunchKernel: unknown function " + hex(f));
  const KernelInfo &kernel = *f->info;
  std::string entry = "cuLaunchKernel(" + kernel.name + ")";
  // A kernel runs in its module's context, on a stream of that context.
  if (f->context != currentContext)
    return violation(CUDA_ERROR_INVALID_HANDLE,
                     entry + ": a kernel of " + deviceName(f->context) +
                         " launched with " + deviceName(currentContext) +
                         " current");
  if (streamContext(hStream) != currentContext)
    return violation(CUDA_ERROR_INVALID_HANDLE,
                     entry + ": stream " + hex(hStream) + " of " +
                         deviceName(streamContext(hStream)) + " with " +
                         deviceName(currentContext) + " current");
  CUstream_st *capture = nullptr;
  if (CUresult r = routeWork(entry, hStream, capture))
    return r;
  if (extra)
    return failCapture(capture, fail(CUDA_ERROR_INVALID_VALUE,
                                     entry + ": `extra` is not supported; pass "
                                             "kernelParams"));
  LaunchConfig config{{gridDimX, gridDimY, gridDimZ},
                      {blockDimX, blockDimY, blockDimZ},
                      sharedMemBytes,
                      f->maxDynamicShared};
  std::vector<Span> spans;
  if (CUresult r = checkLaunch(entry, kernel, config, kernelParams, spans))
    return failCapture(capture, r);
  if (!capture) {
    kernelAccesses(hStream, kernel, spans, entry);
    ++s.count.launches;
    ++s.count.launchesByDevice[currentContext->ordinal];
    return CUDA_SUCCESS;
  }
  Node node(NodeKind::Kernel);
  node.function = f;
  node.kernel = f->info;
  node.launch = config;
  node.params.resize(kernel.totalParamBytes);
  for (size_t i = 0; i < kernel.paramBytes.size(); ++i)
    std::memcpy(node.params.data() + kernel.paramOffsets[i], kernelParams[i],
                kernel.paramBytes[i]);
  capture->nodes.push_back(std::move(node));
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *phStream,
                                                unsigned int flags) {
  std::lock_guard<std::mutex> lock(enter());
  if (CUresult r = ready("cuStreamCreate"))
    return r;
  if (!phStream)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate: null result");
  if (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING))
    return fail(CUDA_ERROR_INVALID_VALUE,
                "cuStreamCreate: unknown flags " + hex(flags));
  auto *stream = new CUstream_st();
  stream->context = currentContext;
  stream->flags = flags;
  state().streams.insert(stream);
  *phStream = stream;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuMemGetInfo(size_t *free, size_t *total) {
  std::lock_guard<std::mutex> lock(enter());
  if (CUresult r = ready("cuMemGetInfo"))
    return r;
  if (!free || !total)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuMemGetInfo: null result");
  *total = deviceMemoryBytes();
  *free = deviceMemoryBytes() - state().count.liveBytes;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuStreamGetCtx(CUstream hStream,
                                                CUcontext *pctx) {
  std::lock_guard<std::mutex> lock(enter());
  if (CUresult r = ready("cuStreamGetCtx"))
    return r;
  if (!pctx)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuStreamGetCtx: null result");
  State &s = state();
  if (hStream != nullptr && hStream != CU_STREAM_LEGACY &&
      hStream != CU_STREAM_PER_THREAD && !s.streams.count(hStream))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                "cuStreamGetCtx: unknown stream " + hex(hStream));
  *pctx = streamContext(hStream);
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI
cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuStreamIsCapturing";
  if (CUresult r = ready(entry))
    return r;
  if (!captureStatus)
    return fail(CUDA_ERROR_INVALID_VALUE, entry + ": null result");
  *captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
  // As the driver: asking about the legacy default stream while a blocking
  // stream captures fails (without invalidating the capture).
  if (hStream == nullptr || hStream == CU_STREAM_LEGACY) {
    for (CUstream_st *stream : state().streams)
      if (stream->capturing && !(stream->flags & CU_STREAM_NON_BLOCKING))
        return fail(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                    entry +
                        ": the legacy default stream, while the blocking "
                        "stream " +
                        hex(stream) + " is capturing");
    return CUDA_SUCCESS;
  }
  if (hStream == CU_STREAM_PER_THREAD)
    return CUDA_SUCCESS;
  if (!state().streams.count(hStream))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                entry + ": unknown stream " + hex(hStream));
  // A stream that joined a capture (by waiting for an event recorded in
  // it) captures too, as with the driver.
  CUstream_st *origin = hStream->capturing ? hStream : hStream->joined;
  if (origin)
    *captureStatus = origin->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                         : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
  std::lock_guard<std::mutex> lock(enter());
  if (CUresult r = ready("cuStreamDestroy"))
    return r;
  State &s = state();
  if (!s.streams.count(hStream))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                "cuStreamDestroy: unknown stream " + hex(hStream));
  if (hStream->capturing)
    return fail(CUDA_ERROR_ILLEGAL_STATE,
                "cuStreamDestroy: the stream is capturing");
  s.streams.erase(hStream);
  for (CUevent_st *event : s.events)
    if (event->captureStream == hStream)
      event->captureStream = nullptr;
  delete hStream;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuStreamSynchronize";
  if (CUresult r = ready(entry))
    return r;
  CUstream_st *capture = nullptr;
  if (CUresult r = routeWork(entry, hStream, capture))
    return r;
  if (capture) {
    capture->invalidated = true;
    return violation(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                     entry + ": the stream is capturing; the capture is "
                             "invalidated");
  }
  Ordering &o = state().ordering;
  merge(o.host, o.streams[streamKey(hStream)]);
  ++state().count.syncs;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream,
                                                   CUevent hEvent,
                                                   unsigned int flags) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuStreamWaitEvent";
  if (CUresult r = ready(entry))
    return r;
  // All work has completed when it is issued, so waiting adds only to the
  // order the races are checked against; in a capture the stream's nodes
  // are already in order.
  CUstream_st *capture = nullptr;
  if (CUresult r = routeWork(entry, hStream, capture))
    return r;
  if (!state().events.count(hEvent))
    return failCapture(capture, fail(CUDA_ERROR_INVALID_HANDLE,
                                     entry + ": unknown event " + hex(hEvent)));
  if (flags & ~static_cast<unsigned>(CU_EVENT_WAIT_EXTERNAL))
    return failCapture(capture, fail(CUDA_ERROR_INVALID_VALUE,
                                     entry + ": unknown flags " + hex(flags)));
  Ordering &o = state().ordering;
  auto recorded = o.events.find(hEvent);
  if (!capture && recorded != o.events.end())
    merge(o.streams[streamKey(hStream)], recorded->second);
  // Waiting for an event recorded in a capture joins the capture (the
  // stream's later work is captured); the capture waiting for an event
  // recorded on a stream that joined it, after all that stream's work,
  // joins that stream back.
  CUstream_st *origin = hEvent->captureStream;
  bool inCapture = hEvent->recorded == Recorded::InCapture ||
                   hEvent->recorded == Recorded::AsNode;
  if (inCapture && origin && origin->capturing) {
    if (!capture) {
      if (hStream == nullptr || hStream == CU_STREAM_LEGACY ||
          hStream == CU_STREAM_PER_THREAD)
        return fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                    entry + ": a default stream cannot join a capture");
      hStream->joined = origin;
    } else if (capture == origin && hEvent->joinedStream &&
               hEvent->joinedStream->joined == origin &&
               hEvent->joinedWork == hEvent->joinedStream->work) {
      hEvent->joinedStream->unjoined = false;
    }
  }
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI
cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuStreamBeginCapture";
  if (CUresult r = ready(entry))
    return r;
  if (hStream == nullptr || hStream == CU_STREAM_LEGACY ||
      hStream == CU_STREAM_PER_THREAD)
    return fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                entry + ": the default stream cannot be captured");
  if (!state().streams.count(hStream))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                entry + ": unknown stream " + hex(hStream));
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
      mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return fail(CUDA_ERROR_INVALID_VALUE,
                entry + ": unknown mode " + std::to_string(mode));
  if (hStream->capturing)
    return fail(CUDA_ERROR_ILLEGAL_STATE,
                entry + ": the stream is already capturing");
  hStream->capturing = true;
  hStream->invalidated = false;
  hStream->mode = mode;
  hStream->thread = std::this_thread::get_id();
  hStream->nodes.clear();
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream hStream,
                                                    CUgraph *phGraph) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuStreamEndCapture";
  if (CUresult r = ready(entry))
    return r;
  State &s = state();
  if (!phGraph)
    return fail(CUDA_ERROR_INVALID_VALUE, entry + ": null result");
  *phGraph = nullptr;
  if (!s.streams.count(hStream))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                entry + ": unknown stream " + hex(hStream));
  if (!hStream->capturing)
    return fail(CUDA_ERROR_ILLEGAL_STATE,
                entry + ": the stream is not capturing");
  if (hStream->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
      hStream->thread != std::this_thread::get_id())
    return fail(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
                entry + ": the capture was begun on another thread");
  hStream->capturing = false;
  std::vector<Node> nodes = std::move(hStream->nodes);
  hStream->nodes.clear();
  // Every stream that joined the capture must have been joined back.
  bool unjoined = false;
  for (CUstream_st *stream : s.streams) {
    if (stream->joined != hStream)
      continue;
    unjoined |= stream->unjoined;
    stream->joined = nullptr;
    stream->unjoined = false;
  }
  if (unjoined)
    return violation(CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
                     entry + ": a stream that joined the capture has work "
                             "the capture does not wait for");
  if (hStream->invalidated)
    return fail(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                entry + ": the capture was invalidated by an earlier call");
  auto *graph = new CUgraph_st();
  graph->nodes = std::move(nodes);
  s.graphs.insert(graph);
  ++s.count.captures;
  s.count.capturedNodes += graph->nodes.size();
  *phGraph = graph;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuEventCreate(CUevent *phEvent,
                                               unsigned int flags) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuEventCreate";
  if (CUresult r = ready(entry))
    return r;
  if (!phEvent)
    return fail(CUDA_ERROR_INVALID_VALUE, entry + ": null result");
  unsigned known =
      CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if ((flags & ~known) ||
      ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING)))
    return fail(CUDA_ERROR_INVALID_VALUE,
                entry + ": invalid flags " + hex(flags));
  auto *event = new CUevent_st();
  event->flags = flags;
  state().events.insert(event);
  *phEvent = event;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuEventDestroy(CUevent hEvent) {
  CUresult r = destroyHandle("cuEventDestroy", state().events, hEvent,
                             CUDA_ERROR_INVALID_HANDLE, "event");
  if (r == CUDA_SUCCESS) {
    std::lock_guard<std::mutex> lock(enter());
    state().ordering.events.erase(hEvent);
  }
  return r;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent,
                                               CUstream hStream) {
  std::lock_guard<std::mutex> lock(enter());
  return recordEvent("cuEventRecord", hEvent, hStream, CU_EVENT_RECORD_DEFAULT);
}

NULLCUDA_EXPORT CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent,
                                                        CUstream hStream,
                                                        unsigned int flags) {
  std::lock_guard<std::mutex> lock(enter());
  return recordEvent("cuEventRecordWithFlags", hEvent, hStream, flags);
}

NULLCUDA_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuEventSynchronize";
  if (CUresult r = ready(entry))
    return r;
  State &s = state();
  if (!s.events.count(hEvent))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                entry + ": unknown event " + hex(hEvent));
  CUstream_st *stream = hEvent->captureStream;
  bool inCapture = hEvent->recorded == Recorded::InCapture ||
                   hEvent->recorded == Recorded::AsNode;
  if (inCapture && s.streams.count(stream) && stream->capturing) {
    stream->invalidated = true;
    return violation(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                     entry + ": the event was recorded in a capture still in "
                             "progress; the capture is invalidated");
  }
  // A plain record in a capture stands for no work that will be scheduled,
  // so the event cannot be waited for (or timed) until recorded again.
  if (hEvent->recorded == Recorded::InCapture)
    return violation(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                     entry + ": the event was last recorded in a stream "
                             "capture without CU_EVENT_RECORD_EXTERNAL");
  if (auto recorded = s.ordering.events.find(hEvent);
      recorded != s.ordering.events.end())
    merge(s.ordering.host, recorded->second);
  ++s.count.syncs;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds,
                                                    CUevent hStart,
                                                    CUevent hEnd) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuEventElapsedTime";
  if (CUresult r = ready(entry))
    return r;
  if (!pMilliseconds)
    return fail(CUDA_ERROR_INVALID_VALUE, entry + ": null result");
  const std::pair<const char *, CUevent> events[] = {{"start", hStart},
                                                     {"end", hEnd}};
  for (const auto &event : events) {
    std::string which = entry + ": the " + event.first + " event ";
    if (!state().events.count(event.second))
      return fail(CUDA_ERROR_INVALID_HANDLE, which + "is unknown");
    if (event.second->flags & CU_EVENT_DISABLE_TIMING)
      return fail(CUDA_ERROR_INVALID_HANDLE,
                  which + "was created with CU_EVENT_DISABLE_TIMING");
    if (event.second->recorded == Recorded::InCapture)
      return fail(CUDA_ERROR_INVALID_HANDLE,
                  which + "was last recorded in a stream capture without "
                          "CU_EVENT_RECORD_EXTERNAL, which gives no time");
    if (!event.second->hasTime)
      return fail(CUDA_ERROR_INVALID_HANDLE, which + "has not been recorded");
  }
  *pMilliseconds =
      std::chrono::duration<float, std::milli>(hEnd->time - hStart->time)
          .count();
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr,
                                            size_t bytesize) {
  std::lock_guard<std::mutex> lock(enter());
  return allocate("cuMemAlloc", dptr, bytesize, /*managed=*/false);
}

NULLCUDA_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr,
                                                   size_t bytesize,
                                                   unsigned int flags) {
  std::lock_guard<std::mutex> lock(enter());
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
    return fail(CUDA_ERROR_INVALID_VALUE,
                "cuMemAllocManaged: invalid flags " + hex(flags));
  return allocate("cuMemAllocManaged", dptr, bytesize, /*managed=*/true);
}

NULLCUDA_EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuMemFree";
  if (CUresult r = ready(entry))
    return r;
  if (CUresult r = refuseDuringCapture(entry + " of " + hex(dptr)))
    return r;
  if (dptr == 0)
    return CUDA_SUCCESS;
  State &s = state();
  auto it = s.allocations.find(dptr);
  if (it == s.allocations.end())
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": " + hex(dptr) +
                         " is not the start of a live allocation");
  s.count.liveBytes -= it->second.bytes;
  ++s.count.frees;
  s.ordering.accesses.erase(dptr);
  s.allocations.erase(it);
  std::free(reinterpret_cast<void *>(dptr));
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src,
                                               size_t ByteCount,
                                               CUstream hStream) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuMemcpyAsync";
  if (CUresult r = ready(entry))
    return r;
  CUstream_st *capture = nullptr;
  if (CUresult r = routeWork(entry, hStream, capture))
    return r;
  if (ByteCount == 0)
    return CUDA_SUCCESS;
  bool dstOnDevice = false, srcOnDevice = false;
  if (CUresult r = checkBuffer(entry, "destination", dst, ByteCount,
                               /*hostAllowed=*/true, &dstOnDevice))
    return failCapture(capture, r);
  if (CUresult r = checkBuffer(entry, "source", src, ByteCount,
                               /*hostAllowed=*/true, &srcOnDevice))
    return failCapture(capture, r);
  if (!capture) {
    copyAccesses(hStream, dst, src, ByteCount, entry);
    std::memmove(reinterpret_cast<void *>(dst),
                 reinterpret_cast<const void *>(src), ByteCount);
    return CUDA_SUCCESS;
  }
  Node node(NodeKind::Copy);
  node.dst = dst;
  node.src = src;
  node.bytes = ByteCount;
  node.dstOnDevice = dstOnDevice;
  node.srcOnDevice = srcOnDevice;
  capture->nodes.push_back(std::move(node));
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice,
                                                  unsigned int ui, size_t N,
                                                  CUstream hStream) {
  std::lock_guard<std::mutex> lock(enter());
  return memsetAsync("cuMemsetD32Async", dstDevice, ui, 4, N, hStream);
}

NULLCUDA_EXPORT CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice,
                                                  unsigned short us, size_t N,
                                                  CUstream hStream) {
  std::lock_guard<std::mutex> lock(enter());
  return memsetAsync("cuMemsetD16Async", dstDevice, us, 2, N, hStream);
}

NULLCUDA_EXPORT CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec,
                                                    CUgraph hGraph,
                                                    unsigned long long flags) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuGraphInstantiate";
  if (CUresult r = ready(entry))
    return r;
  State &s = state();
  if (!phGraphExec)
    return fail(CUDA_ERROR_INVALID_VALUE, entry + ": null result");
  if (!s.graphs.count(hGraph))
    return fail(CUDA_ERROR_INVALID_VALUE,
                entry + ": unknown graph " + hex(hGraph));
  unsigned long long known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                             CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                             CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
                             CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  if (flags & ~known)
    return fail(CUDA_ERROR_INVALID_VALUE,
                entry + ": unknown flags " + hex(flags));
  auto *exec = new CUgraphExec_st();
  exec->nodes = hGraph->nodes;
  s.execs.insert(exec);
  *phGraphExec = exec;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec,
                                               CUstream hStream) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cuGraphLaunch";
  if (CUresult r = ready(entry))
    return r;
  State &s = state();
  if (!s.execs.count(hGraphExec))
    return fail(CUDA_ERROR_INVALID_VALUE,
                entry + ": unknown executable graph " + hex(hGraphExec));
  CUstream_st *capture = nullptr;
  if (CUresult r = routeWork(entry, hStream, capture))
    return r;
  if (capture)
    return failCapture(capture,
                       fail(CUDA_ERROR_NOT_SUPPORTED,
                            entry + ": launching a graph into a capture is "
                                    "not supported by nullcuda"));
  ++s.count.graphLaunches;
  return replay(hGraphExec->nodes, hStream);
}

NULLCUDA_EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return destroyHandle("cuGraphExecDestroy", state().execs, hGraphExec,
                       CUDA_ERROR_INVALID_VALUE, "executable graph");
}

NULLCUDA_EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
  return destroyHandle("cuGraphDestroy", state().graphs, hGraph,
                       CUDA_ERROR_INVALID_VALUE, "graph");
}

} // extern "C"
