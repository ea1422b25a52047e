//===- CudaMemory.cpp - Device memory and host<->device copies ------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the cuMemAlloc backend of the device ledger, the memory entry points
// of compiled code (mgpuMemAlloc, mgpuMemFree, mgpuMemcpy, mgpuMemset32/16)
// and the tool's host<->device helpers.
//
// Why: the program's device buffers must be counted exactly as its host
// buffers are (requested bytes, per phase), so they go through the device
// ledger; the caller's inputs and parameters must not be, so the tool can
// allocate outside it. The ledger's frozen state turns an allocation during
// graph capture into a named error instead of a graph that replays into
// memory it no longer owns.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "rnn/Runtime/Cuda.h"
#include "rnn/Runtime/Runtime.h"

#include <mutex>
#include <unordered_set>

using namespace rnn::runtime;
using namespace rnn::runtime::cuda;

namespace {

/// Alignment of cuMemAlloc; the lowering asks for no more.
constexpr size_t kDeviceAlignment = 256;

/// Device memory for the device ledger. Driver errors are recorded naming
/// the entry point that asked.
class DeviceBackend final : public MemoryBackend {
public:
  DeviceBackend(CudaState &state, const char *entry, bool managed = false)
      : state(state), entry(entry), managed(managed) {}

  void *allocate(size_t bytes, size_t /*alignment*/) override {
    CUdeviceptr p = 0;
    CUresult r =
        managed ? state.api.cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL)
                : state.api.cuMemAlloc(&p, bytes);
    if (!check(state, r, entry))
      return nullptr;
    return reinterpret_cast<void *>(p);
  }

  void release(void *p) override {
    check(state, state.api.cuMemFree(reinterpret_cast<CUdeviceptr>(p)), entry);
  }

private:
  CudaState &state;
  const char *entry;
  bool managed;
};

/// Buffers from allocateDevice(..., accounted = false), which the ledger
/// does not know.
struct Unaccounted {
  std::mutex mutex;
  std::unordered_set<void *> buffers;
};

Unaccounted &unaccounted() {
  static Unaccounted *u = new Unaccounted();
  return *u;
}

} // namespace

void *rnn::runtime::cuda::allocateAccounted(CudaState &state, const char *entry,
                                            size_t bytes, bool managed) {
  if (bytes == 0)
    return nullptr;
  DeviceBackend backend(state, entry, managed);
  MemoryAccounting &ledger = deviceMemory();
  void *p = ledger.allocate(backend, bytes, kDeviceAlignment);
  if (!p && ledger.isFrozen())
    recordError(std::string(entry) + ": device allocation of " +
                std::to_string(bytes) +
                " bytes during CUDA graph capture; device memory must be "
                "preallocated");
  return p;
}

void rnn::runtime::cuda::releaseDevice(CudaState &state, const char *entry,
                                       void *p) {
  if (!p)
    return;
  {
    Unaccounted &u = unaccounted();
    std::lock_guard<std::mutex> lock(u.mutex);
    if (u.buffers.erase(p)) {
      check(state, state.api.cuMemFree(reinterpret_cast<CUdeviceptr>(p)),
            entry);
      return;
    }
  }
  DeviceBackend backend(state, entry);
  MemoryAccounting &ledger = deviceMemory();
  bool known = ledger.owns(p);
  ledger.deallocate(backend, p);
  if (!known)
    recordError(std::string(entry) + ": free of unknown device pointer");
  else if (ledger.isFrozen())
    recordError(std::string(entry) +
                ": device memory freed during CUDA graph capture; device "
                "memory must outlive the graph");
}

//===----------------------------------------------------------------------===//
// Entry points of compiled code.
//===----------------------------------------------------------------------===//

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, CUstream /*stream*/,
                              bool isHostShared) {
  CudaState *s = acquire("mgpuMemAlloc");
  return s ? allocateAccounted(*s, "mgpuMemAlloc", sizeBytes, isHostShared)
           : nullptr;
}

extern "C" void mgpuMemFree(void *ptr, CUstream /*stream*/) {
  if (!ptr)
    return;
  if (CudaState *s = acquire("mgpuMemFree"))
    releaseDevice(*s, "mgpuMemFree", ptr);
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           CUstream stream) {
  if (CudaState *s = acquire("mgpuMemcpy"))
    check(*s,
          s->api.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                               reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                               stream),
          "mgpuMemcpy");
}

extern "C" void mgpuMemset32(void *dst, unsigned int value, size_t count,
                             CUstream stream) {
  if (CudaState *s = acquire("mgpuMemset32"))
    check(*s,
          s->api.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                  count, stream),
          "mgpuMemset32");
}

extern "C" void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             CUstream stream) {
  if (CudaState *s = acquire("mgpuMemset16"))
    check(*s,
          s->api.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                  count, stream),
          "mgpuMemset16");
}

//===----------------------------------------------------------------------===//
// Host <-> device helpers.
//===----------------------------------------------------------------------===//

/// allocateDevice() on behalf of `entry`.
static void *allocateFor(CudaState &s, const char *entry, size_t bytes,
                         bool accounted) {
  if (bytes == 0)
    return nullptr;
  if (accounted)
    return allocateAccounted(s, entry, bytes, /*managed=*/false);
  CUdeviceptr p = 0;
  if (!check(s, s.api.cuMemAlloc(&p, bytes), entry))
    return nullptr;
  Unaccounted &u = unaccounted();
  std::lock_guard<std::mutex> lock(u.mutex);
  u.buffers.insert(reinterpret_cast<void *>(p));
  return reinterpret_cast<void *>(p);
}

void *rnn::runtime::cuda::allocateDevice(size_t bytes, bool accounted) {
  CudaState *s = acquire("allocateDevice");
  return s ? allocateFor(*s, "allocateDevice", bytes, accounted) : nullptr;
}

void *rnn::runtime::cuda::copyToDevice(const void *host, size_t bytes,
                                       bool accounted) {
  constexpr const char *kEntry = "copyToDevice";
  CudaState *s = acquire(kEntry);
  void *device = s ? allocateFor(*s, kEntry, bytes, accounted) : nullptr;
  if (!device)
    return nullptr;
  if (!check(*s,
             s->api.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(device),
                                  reinterpret_cast<CUdeviceptr>(host), bytes,
                                  s->stream),
             kEntry) ||
      !waitForStream(*s, s->stream, kEntry)) {
    releaseDevice(*s, kEntry, device);
    return nullptr;
  }
  return device;
}

bool rnn::runtime::cuda::copyToHost(void *host, const void *device,
                                    size_t bytes) {
  CudaState *s = acquire("copyToHost");
  return s &&
         check(*s,
               s->api.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(host),
                                    reinterpret_cast<CUdeviceptr>(device),
                                    bytes, s->stream),
               "copyToHost") &&
         waitForStream(*s, s->stream, "copyToHost");
}

void rnn::runtime::cuda::freeDevice(void *device) {
  if (!device)
    return;
  if (CudaState *s = acquire("freeDevice"))
    releaseDevice(*s, "freeDevice", device);
}

bool rnn::runtime::cuda::synchronize() {
  CudaState *s = acquire("synchronize");
  return s && waitForStream(*s, s->stream, "synchronize");
}

bool rnn::runtime::cuda::deviceMemoryInfo(size_t &free, size_t &total) {
  CudaState *s = acquire("deviceMemoryInfo");
  return s && check(*s, s->api.cuMemGetInfo(&free, &total),
                    "deviceMemoryInfo: cuMemGetInfo");
}
