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
// to the runtime's one stream, and mgpuModuleGetFunction, which the
// translation calls before every launch, asks the driver once per kernel.
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

/// Kernels resolved by mgpuModuleGetFunction, by module and name. The
/// translation of gpu.launch_func passes the address of a constant string,
/// so the name's address identifies it; the cache is emptied for a module
/// when it is unloaded.
struct FunctionCache {
  std::mutex mutex;
  std::map<std::pair<CUmodule, const char *>, CUfunction> functions;
};

FunctionCache &functionCache() {
  static FunctionCache *cache = new FunctionCache();
  return *cache;
}

} // namespace

extern "C" CUmodule mgpuModuleLoad(void *data, size_t /*size*/) {
  CudaState *s = acquire("mgpuModuleLoad");
  CUmodule module = nullptr;
  if (s)
    check(*s, s->api.cuModuleLoadData(&module, data), "mgpuModuleLoad");
  return module;
}

extern "C" CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  CudaState *s = acquire("mgpuModuleLoadJIT");
  if (!s)
    return nullptr;
  char log[4096] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  CUmodule module = nullptr;
  CUresult r = s->api.cuModuleLoadDataEx(&module, data, 3, options, values);
  if (r != CUDA_SUCCESS) {
    std::string what = "mgpuModuleLoadJIT";
    if (log[0])
      what += " (" + oneLine(log) + ")";
    check(*s, r, what.c_str());
    return nullptr;
  }
  return module;
}

extern "C" void mgpuModuleUnload(CUmodule module) {
  if (!module)
    return;
  {
    FunctionCache &cache = functionCache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto &functions = cache.functions;
    auto it = functions.lower_bound({module, nullptr});
    while (it != functions.end() && it->first.first == module)
      it = functions.erase(it);
  }
  if (CudaState *s = acquire("mgpuModuleUnload"))
    check(*s, s->api.cuModuleUnload(module), "mgpuModuleUnload");
}

extern "C" CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  CudaState *s = acquire("mgpuModuleGetFunction");
  if (!s)
    return nullptr;
  std::string kernel = name ? name : "<null>";
  if (!module || !name) {
    recordError("mgpuModuleGetFunction: no module for kernel " + kernel);
    return nullptr;
  }
  FunctionCache &cache = functionCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto [it, inserted] = cache.functions.try_emplace({module, name}, nullptr);
  if (!inserted)
    return it->second;
  CUfunction function = nullptr;
  std::string what = "mgpuModuleGetFunction(" + kernel + ")";
  if (!check(*s, s->api.cuModuleGetFunction(&function, module, name),
             what.c_str())) {
    cache.functions.erase(it);
    return nullptr;
  }
  it->second = function;
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
  return s ? s->stream : nullptr;
}

extern "C" void mgpuStreamDestroy(CUstream stream) {
  CudaState *s = acquire("mgpuStreamDestroy");
  if (s && stream && stream != s->stream)
    check(*s, s->api.cuStreamDestroy(stream), "mgpuStreamDestroy");
}

extern "C" void mgpuStreamSynchronize(CUstream stream) {
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
      // The phase marker also records the device timer's event.
      {"rnnrt_begin_phase", reinterpret_cast<void *>(&rnnrt_cuda_begin_phase)},
  };
#undef RNN_CUDA_SYMBOL_ENTRY
}
