//===- CudaWrappers.cpp - Modules, kernels, streams, events ---------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the `mgpu*` entry points for modules, kernel launches, streams and
// events (memory is in CudaMemory.cpp), and the CUDA JIT symbol table.
//
// Why: Debian's MLIR ships no CUDA runtime wrappers, so the runtime provides
// the functions that gpu-to-llvm and the gpu.binary translation emit calls
// to, with upstream's names and signatures (MLIR 22: mgpuModuleLoad takes
// the image size, mgpuModuleLoadJIT the optimization level, mgpuLaunchKernel
// the parameter count, mgpuMemAlloc the host-shared flag). Unlike upstream,
// failures are recorded for takeError() rather than printed, all work goes
// to one stream (the runtime's, or the caller's during a library call), a
// module is loaded into a device on its first kernel lookup there rather
// than when it is registered at start-up, and mgpuModuleGetFunction, which
// the translation calls before every launch, asks the driver once per
// kernel and device.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "rnn/Runtime/Cuda.h"

#include "rnn/Runtime/Runtime.h"

#include <cstdint>
#include <map>
#include <mutex>

using namespace rnn::runtime::cuda;

namespace {

/// Replaces line breaks so that a driver log fits in a one-line error.
std::string oneLine(const char *text) {
  std::string out(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  for (char &c : out)
    if (c == '\n' || c == '\r')
      c = ' ';
  return out;
}

/// A module loaded into one device's context.
struct DeviceModule {
  CUmodule loaded = nullptr;
  /// Whether loading failed (the error was recorded then; not retried).
  bool failed = false;
  /// Kernels resolved so far. The translation of gpu.launch_func passes the
  /// address of a constant string, so the address identifies the name.
  std::map<const char *, CUfunction> functions;
};

/// A module image registered by mgpuModuleLoad(JIT) and loaded into the
/// driver on its first mgpuModuleGetFunction on each device. The
/// translation of gpu.binary registers the module from a global
/// constructor, which runs when a program starts or a library is loaded:
/// deferring the load keeps that from initializing CUDA, so a library's
/// caller still chooses the devices (rnnc_context_create), and a program
/// that never launches a kernel never touches the GPU. Compiled code only
/// passes the handle along; the kernel it gets is that of the device of
/// the calling thread's call.
struct LazyModule {
  const void *image = nullptr;
  /// mgpuModuleLoadJIT's optimization level; -1 for mgpuModuleLoad.
  int optLevel = -1;
  std::mutex mutex;
  /// By device ordinal.
  std::map<int, DeviceModule> devices;
};

LazyModule *registerModule(const char *entry, const void *image, int optLevel) {
  if (!image) {
    recordError(std::string(entry) + ": no module image");
    return nullptr;
  }
  auto *module = new LazyModule();
  module->image = image;
  module->optLevel = optLevel;
  return module;
}

/// Loads `module` into `s`'s device unless done, as `loaded`; holds
/// module.mutex. A failure is recorded once and not retried.
bool ensureLoaded(CudaState &s, const LazyModule &module,
                  DeviceModule &loaded) {
  if (loaded.loaded || loaded.failed)
    return loaded.loaded != nullptr;
  void *image = const_cast<void *>(module.image);
  CUresult r;
  std::string what;
  if (module.optLevel < 0) {
    what = "mgpuModuleLoad";
    r = s.api.cuModuleLoadData(&loaded.loaded, image);
  } else {
    char log[4096] = {0};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {
        log, reinterpret_cast<void *>(sizeof(log)),
        reinterpret_cast<void *>(static_cast<intptr_t>(module.optLevel))};
    what = "mgpuModuleLoadJIT";
    r = s.api.cuModuleLoadDataEx(&loaded.loaded, image, 3, options, values);
    if (r != CUDA_SUCCESS && log[0])
      what += " (" + oneLine(log) + ")";
  }
  if (check(s, r, what.c_str()))
    return true;
  loaded.loaded = nullptr;
  loaded.failed = true;
  return false;
}

} // namespace

extern "C" CUmodule mgpuModuleLoad(void *data, size_t /*size*/) {
  return reinterpret_cast<CUmodule>(registerModule("mgpuModuleLoad", data, -1));
}

extern "C" CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  return reinterpret_cast<CUmodule>(
      registerModule("mgpuModuleLoadJIT", data, optLevel < 0 ? 0 : optLevel));
}

extern "C" void mgpuModuleUnload(CUmodule handle) {
  auto *module = reinterpret_cast<LazyModule *>(handle);
  if (!module)
    return;
  // A module is unloaded in its device's context; the thread's current
  // context is given back afterwards.
  CUcontext previous = nullptr;
  CudaState *any = nullptr;
  for (auto &[ordinal, loaded] : module->devices) {
    CudaState *s = startedDevice(ordinal);
    if (!loaded.loaded || !s)
      continue;
    if (!any &&
        !check(*s, s->api.cuCtxGetCurrent(&previous), "mgpuModuleUnload"))
      break;
    any = s;
    if (check(*s, s->api.cuCtxSetCurrent(s->context), "mgpuModuleUnload"))
      check(*s, s->api.cuModuleUnload(loaded.loaded), "mgpuModuleUnload");
  }
  if (any)
    restoreContext(*any, previous, "mgpuModuleUnload");
  delete module;
}

extern "C" CUfunction mgpuModuleGetFunction(CUmodule handle, const char *name) {
  std::string kernel = name ? name : "<null>";
  auto *module = reinterpret_cast<LazyModule *>(handle);
  if (!module || !name) {
    recordError("mgpuModuleGetFunction: no module for kernel " + kernel);
    return nullptr;
  }
  CudaState *s = acquire("mgpuModuleGetFunction");
  if (!s)
    return nullptr;
  std::lock_guard<std::mutex> lock(module->mutex);
  DeviceModule &loaded = module->devices[s->ordinal];
  auto it = loaded.functions.find(name);
  if (it != loaded.functions.end())
    return it->second;
  if (!ensureLoaded(*s, *module, loaded))
    return nullptr;
  CUfunction function = nullptr;
  std::string what = "mgpuModuleGetFunction(" + kernel + ")";
  if (!check(*s, s->api.cuModuleGetFunction(&function, loaded.loaded, name),
             what.c_str()))
    return nullptr;
  loaded.functions.emplace(name, function);
  return function;
}

extern "C" void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                 intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY,
                                 intptr_t blockZ, int32_t smem, CUstream stream,
                                 void **params, void **extra,
                                 size_t /*paramsCount*/) {
  CudaState *s = acquire("mgpuLaunchKernel");
  if (!s)
    return;
  if (!function) {
    recordError("mgpuLaunchKernel: no kernel (its module or function failed "
                "to load)");
    return;
  }
  // Above 48 KiB, dynamic shared memory must be opted into per kernel.
  if (smem > 0 &&
      !check(
          *s,
          s->api.cuFuncSetAttribute(
              function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
          "mgpuLaunchKernel: dynamic shared memory"))
    return;
  rnn::runtime::countKernelLaunch();
  check(*s,
        s->api.cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                              blockZ, smem, stream, params, extra),
        "mgpuLaunchKernel");
}

extern "C" CUstream mgpuStreamCreate() {
  CudaState *s = acquire("mgpuStreamCreate");
  return s ? currentStream(*s) : nullptr;
}

extern "C" void mgpuStreamDestroy(CUstream stream) {
  if (isCallerStream(stream))
    return;
  CudaState *s = acquire("mgpuStreamDestroy");
  if (s && stream && stream != s->stream)
    check(*s, s->api.cuStreamDestroy(stream), "mgpuStreamDestroy");
}

extern "C" void mgpuStreamSynchronize(CUstream stream) {
  // The caller orders its own stream; a library call only enqueues.
  if (isCallerStream(stream))
    return;
  CudaState *s = acquire("mgpuStreamSynchronize");
  if (s && !s->capturing)
    waitForStream(*s, stream, "mgpuStreamSynchronize");
}

extern "C" void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (CudaState *s = acquire("mgpuStreamWaitEvent"))
    check(*s, s->api.cuStreamWaitEvent(stream, event, /*Flags=*/0),
          "mgpuStreamWaitEvent");
}

extern "C" CUevent mgpuEventCreate() {
  CudaState *s = acquire("mgpuEventCreate");
  CUevent event = nullptr;
  if (s)
    check(*s, s->api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
          "mgpuEventCreate");
  return event;
}

extern "C" void mgpuEventDestroy(CUevent event) {
  if (!event)
    return;
  if (CudaState *s = acquire("mgpuEventDestroy"))
    check(*s, s->api.cuEventDestroy(event), "mgpuEventDestroy");
}

extern "C" void mgpuEventSynchronize(CUevent event) {
  CudaState *s = acquire("mgpuEventSynchronize");
  if (s && !s->capturing)
    waitForEvent(*s, event, "mgpuEventSynchronize");
}

extern "C" void mgpuEventRecord(CUevent event, CUstream stream) {
  if (CudaState *s = acquire("mgpuEventRecord"))
    check(*s, s->api.cuEventRecord(event, stream), "mgpuEventRecord");
}

std::vector<std::pair<const char *, void *>> rnn::runtime::cuda::jitSymbols() {
#define RNN_CUDA_SYMBOL_ENTRY(name)                                            \
  { #name, reinterpret_cast < void *>(&name) }
  return {
      RNN_CUDA_SYMBOL_ENTRY(mgpuModuleLoad),
      RNN_CUDA_SYMBOL_ENTRY(mgpuModuleLoadJIT),
      RNN_CUDA_SYMBOL_ENTRY(mgpuModuleUnload),
      RNN_CUDA_SYMBOL_ENTRY(mgpuModuleGetFunction),
      RNN_CUDA_SYMBOL_ENTRY(mgpuLaunchKernel),
      RNN_CUDA_SYMBOL_ENTRY(mgpuStreamCreate),
      RNN_CUDA_SYMBOL_ENTRY(mgpuStreamDestroy),
      RNN_CUDA_SYMBOL_ENTRY(mgpuStreamSynchronize),
      RNN_CUDA_SYMBOL_ENTRY(mgpuStreamWaitEvent),
      RNN_CUDA_SYMBOL_ENTRY(mgpuEventCreate),
      RNN_CUDA_SYMBOL_ENTRY(mgpuEventDestroy),
      RNN_CUDA_SYMBOL_ENTRY(mgpuEventSynchronize),
      RNN_CUDA_SYMBOL_ENTRY(mgpuEventRecord),
      RNN_CUDA_SYMBOL_ENTRY(mgpuMemAlloc),
      RNN_CUDA_SYMBOL_ENTRY(mgpuMemFree),
      RNN_CUDA_SYMBOL_ENTRY(mgpuMemcpy),
      RNN_CUDA_SYMBOL_ENTRY(mgpuMemset32),
      RNN_CUDA_SYMBOL_ENTRY(mgpuMemset16),
      RNN_CUDA_SYMBOL_ENTRY(mgpuSetDefaultDevice),
      RNN_CUDA_SYMBOL_ENTRY(_mlir_ciface_rnnrt_cuda_sgemm),
      RNN_CUDA_SYMBOL_ENTRY(_mlir_ciface_rnnrt_cuda_gemm_bf16),
      RNN_CUDA_SYMBOL_ENTRY(rnnrt_cuda_fork),
      RNN_CUDA_SYMBOL_ENTRY(rnnrt_cuda_lane),
      RNN_CUDA_SYMBOL_ENTRY(rnnrt_cuda_signal),
      RNN_CUDA_SYMBOL_ENTRY(rnnrt_cuda_wait),
      RNN_CUDA_SYMBOL_ENTRY(rnnrt_cuda_join),
      // The phase marker also records the device timer's event.
      {"rnnrt_begin_phase", reinterpret_cast<void *>(&rnnrt_cuda_begin_phase)},
  };
#undef RNN_CUDA_SYMBOL_ENTRY
}
