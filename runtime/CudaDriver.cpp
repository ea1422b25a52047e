//===- CudaDriver.cpp - Loading and initializing the CUDA driver ----------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: initialize() (dlopen the driver, resolve its entry points, cuInit,
// retain the primary context of the selected device, create the runtime's
// stream), the same for any further device (openDevice, for a library's
// contexts), the per-thread context binding behind acquire(), the error
// record behind takeError(), and mgpuSetDefaultDevice.
//
// Why: a machine without a GPU must get one clear line, not a crash or a
// link error, so every step of start-up is checked and named. The driver's
// own failure codes for the common cases (no library, the toolkit's stub
// library, no device) are turned into plain words. Start-up happens once
// per device: afterwards the state is read without locking. No state is ever
// destroyed.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "rnn/Runtime/Cuda.h"
#include "rnn/Runtime/Runtime.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>

using namespace rnn::runtime::cuda;

namespace {

/// Default driver library; `RNNRT_LIBCUDA` overrides it.
constexpr const char *kDriverLibrary = "libcuda.so.1";

/// Start-up state. Intentionally leaked, so that entry points called while
/// static objects are destroyed (a JIT-compiled module's unload hook, for
/// one) still find it.
struct Globals {
  std::mutex initMutex;
  /// The driver once loaded and initialized (its entry points, its library
  /// and the number of devices); guarded by initMutex.
  bool driverUp = false;
  std::string libraryName;
  DriverApi api;
  int deviceCount = 0;
  /// Each device's state, once started.
  std::atomic<CudaState *> devices[kMaxDevices] = {};
  /// The default device's state (initialize()).
  std::atomic<CudaState *> initialized{nullptr};
  /// Device ordinal initialize() uses; guarded by initMutex.
  int requestedOrdinal = 0;
};

Globals &globals() {
  static Globals *g = new Globals();
  return *g;
}

/// The context made current on this thread by acquire().
thread_local CUcontext boundContext = nullptr;

/// The first error the calling thread recorded since its last takeError().
/// Per thread: two threads calling libraries at once must each get their
/// own failure, and one entering a call must not discard another's.
thread_local std::string pendingError;

/// The library call in progress on this thread: the caller's stream, and
/// the context the caller had current, given back when the call ends (a
/// framework such as PyTorch keeps its current device there).
struct CallerStream {
  /// The call's device.
  CudaState *device = nullptr;
  bool active = false;
  CUstream stream = nullptr;
  bool entered = false;
  CUcontext previous = nullptr;
  /// Captured for graph replay (beginReplayCapture).
  bool replay = false;
};
thread_local CallerStream callerStream;

/// The v1 symbol to use when a versioned one is missing, for entry points
/// whose signature did not change (cuEventElapsedTime_v2 needs a 12.8
/// driver; timing is not worth refusing an older one).
const char *fallbackSymbol(const char *symbol) {
  return std::strcmp(symbol, "cuEventElapsedTime_v2") == 0
             ? "cuEventElapsedTime"
             : nullptr;
}

template <typename Fn> bool resolve(void *library, const char *symbol, Fn &fn) {
  void *address = dlsym(library, symbol);
  if (!address)
    if (const char *fallback = fallbackSymbol(symbol))
      address = dlsym(library, fallback);
  fn = reinterpret_cast<Fn>(address);
  return address != nullptr;
}

/// "NAME: description" for a driver result, or "CUDA error N" when the
/// driver cannot name it (the stub library, for one).
std::string describeResult(const DriverApi &api, CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api.cuGetErrorName)
    api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString)
    api.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(": ") + text;
  return out;
}

/// The message for a failed cuInit of the driver in `libraryName`.
std::string initFailure(const std::string &libraryName, const DriverApi &api,
                        CUresult result) {
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return "CUDA driver is the toolkit stub (CUDA_ERROR_STUB_LIBRARY): no GPU "
           "driver installed (loaded " +
           libraryName + ")";
  if (result == CUDA_ERROR_NO_DEVICE)
    return "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)";
  return "CUDA driver initialization failed: cuInit: " +
         describeResult(api, result);
}

/// Brings up the driver into `g` (initMutex held); returns an empty
/// string or the error. `library` receives the dlopen handle if it may be
/// closed again after a failure: once cuInit has run, the driver may have
/// started threads or registered exit handlers, so it stays loaded.
std::string startDriver(Globals &g, void *&library) {
  const char *override = std::getenv("RNNRT_LIBCUDA");
  g.libraryName = override && *override ? override : kDriverLibrary;
  library = dlopen(g.libraryName.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return "CUDA driver not found: dlopen(" + g.libraryName +
           "): " + (why ? why : "unknown error");
  }
  DriverApi &api = g.api;
#define RNN_CUDA_RESOLVE(name)                                                 \
  if (!resolve(library, RNN_CUDA_SYMBOL(name), api.name))                      \
    return "CUDA driver " + g.libraryName + " lacks " +                        \
           RNN_CUDA_SYMBOL(name) + " (driver too old for this runtime)";
  RNN_CUDA_DRIVER_FUNCTIONS(RNN_CUDA_RESOLVE)
#undef RNN_CUDA_RESOLVE

  library = nullptr; // Loaded for good from here on.
  if (CUresult r = api.cuInit(0))
    return initFailure(g.libraryName, api, r);
  int count = 0;
  if (CUresult r = api.cuDeviceGetCount(&count))
    return "CUDA cuDeviceGetCount failed: " + describeResult(api, r);
  if (count == 0)
    return "no CUDA device";
  g.deviceCount = count;
  g.driverUp = true;
  return "";
}

/// Brings up device `s.ordinal` into `s` (its driver entry points set):
/// retains its primary context and creates the runtime's stream there,
/// leaving the thread's current context as it found it. Returns an empty
/// string or the error.
std::string startDevice(CudaState &s) {
  CUdevice device = 0;
  if (CUresult r = s.api.cuDeviceGet(&device, s.ordinal))
    return "CUDA cuDeviceGet failed: " + describeResult(s.api, r);
  CUcontext previous = nullptr;
  if (CUresult r = s.api.cuCtxGetCurrent(&previous))
    return "CUDA cuCtxGetCurrent failed: " + describeResult(s.api, r);
  if (CUresult r = s.api.cuDevicePrimaryCtxRetain(&s.context, device))
    return "CUDA cuDevicePrimaryCtxRetain failed: " + describeResult(s.api, r);
  CUresult r = s.api.cuCtxSetCurrent(s.context);
  if (r == CUDA_SUCCESS)
    r = s.api.cuStreamCreate(&s.stream, CU_STREAM_NON_BLOCKING);
  // The thread's current context (a caller's) is left as it was.
  CUresult restored = s.api.cuCtxSetCurrent(previous);
  if (r == CUDA_SUCCESS)
    r = restored;
  if (r != CUDA_SUCCESS) {
    if (s.stream)
      s.api.cuStreamDestroy(s.stream);
    s.api.cuDevicePrimaryCtxRelease(device);
    s.context = nullptr;
    s.stream = nullptr;
    return "CUDA context setup failed: " + describeResult(s.api, r);
  }
  return "";
}

/// The state of device `ordinal`, started with the driver if need be
/// (initMutex held); null with `error` set on failure.
CudaState *deviceLocked(Globals &g, int ordinal, std::string &error) {
  if (!g.driverUp) {
    void *library = nullptr;
    error = startDriver(g, library);
    if (!error.empty()) {
      if (library)
        dlclose(library);
      g.api = DriverApi();
      return nullptr;
    }
  }
  if (ordinal < 0 || ordinal >= g.deviceCount) {
    error = "CUDA device " + std::to_string(ordinal) + " not present (" +
            std::to_string(g.deviceCount) + " device" +
            (g.deviceCount == 1 ? "" : "s") + ")";
    return nullptr;
  }
  if (ordinal >= kMaxDevices) {
    error = "CUDA device " + std::to_string(ordinal) +
            ": the runtime serves "
            "devices 0 to " +
            std::to_string(kMaxDevices - 1);
    return nullptr;
  }
  if (CudaState *s = g.devices[ordinal].load(std::memory_order_relaxed))
    return s;
  auto *s = new CudaState();
  s->libraryName = g.libraryName;
  s->api = g.api;
  s->ordinal = ordinal;
  error = startDevice(*s);
  if (!error.empty()) {
    delete s;
    return nullptr;
  }
  g.devices[ordinal].store(s, std::memory_order_release);
  return s;
}

} // namespace

std::string rnn::runtime::cuda::initialize() {
  Globals &g = globals();
  if (g.initialized.load(std::memory_order_acquire))
    return "";
  std::lock_guard<std::mutex> lock(g.initMutex);
  if (g.initialized.load(std::memory_order_relaxed))
    return "";
  std::string error;
  CudaState *s = deviceLocked(g, g.requestedOrdinal, error);
  if (!s)
    return error;
  if (CUresult r = s->api.cuCtxSetCurrent(s->context))
    return "CUDA cuCtxSetCurrent failed: " + describeResult(s->api, r);
  boundContext = s->context;
  g.initialized.store(s, std::memory_order_release);
  return "";
}

bool rnn::runtime::cuda::isInitialized() {
  return globals().initialized.load(std::memory_order_acquire) != nullptr;
}

CudaState *rnn::runtime::cuda::openDevice(int ordinal, const char *entry) {
  if (CudaState *s = startedDevice(ordinal))
    return s;
  Globals &g = globals();
  std::lock_guard<std::mutex> lock(g.initMutex);
  std::string error;
  CudaState *s = deviceLocked(g, ordinal, error);
  if (!s)
    recordError(std::string(entry) + ": " + error);
  return s;
}

CudaState *rnn::runtime::cuda::startedDevice(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxDevices)
    return nullptr;
  return globals().devices[ordinal].load(std::memory_order_acquire);
}

bool rnn::runtime::cuda::makeCurrent(CudaState &s, const char *entry) {
  if (boundContext == s.context)
    return true;
  if (!check(s, s.api.cuCtxSetCurrent(s.context), entry))
    return false;
  boundContext = s.context;
  return true;
}

bool rnn::runtime::cuda::restoreContext(CudaState &s, CUcontext previous,
                                        const char *entry) {
  boundContext = nullptr;
  if (!check(s, s.api.cuCtxSetCurrent(previous), entry))
    return false;
  boundContext = previous;
  return true;
}

CudaState *rnn::runtime::cuda::acquire(const char *entry) {
  CudaState *s = callerStream.device;
  if (!s)
    s = globals().initialized.load(std::memory_order_acquire);
  if (!s) {
    std::string error = initialize();
    if (!error.empty()) {
      recordError(std::string(entry) + ": " + error);
      return nullptr;
    }
    s = globals().initialized.load(std::memory_order_acquire);
  }
  return makeCurrent(*s, entry) ? s : nullptr;
}

void rnn::runtime::cuda::recordError(std::string message) {
  if (pendingError.empty())
    pendingError = std::move(message);
}

std::string rnn::runtime::cuda::describe(const CudaState &state,
                                         CUresult result) {
  return describeResult(state.api, result);
}

bool rnn::runtime::cuda::check(CudaState &state, CUresult result,
                               const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  recordError(std::string(what) + ": " + describe(state, result));
  return false;
}

bool rnn::runtime::cuda::waitForStream(CudaState &state, CUstream stream,
                                       const char *what) {
  rnn::runtime::countSynchronization();
  return check(state, state.api.cuStreamSynchronize(stream), what);
}

bool rnn::runtime::cuda::waitForEvent(CudaState &state, CUevent event,
                                      const char *what) {
  rnn::runtime::countSynchronization();
  return check(state, state.api.cuEventSynchronize(event), what);
}

CUstream rnn::runtime::cuda::currentStream(const CudaState &state) {
  if (CUstream lane = laneStream(state))
    return lane;
  return callerStream.active ? callerStream.stream : state.stream;
}

bool rnn::runtime::cuda::isCallerStream(CUstream stream) {
  return callerStream.active && callerStream.stream == stream;
}

CudaState *rnn::runtime::cuda::enterCall(const char *entry, CudaState &device) {
  callerStream = CallerStream();
  resetLanes();
  CUcontext previous = nullptr;
  if (!check(device, device.api.cuCtxGetCurrent(&previous), entry))
    return nullptr;
  // makeCurrent() skips setting the context it believes current.
  boundContext = previous;
  callerStream.device = &device;
  callerStream.entered = true;
  callerStream.previous = previous;
  return acquire(entry);
}

void rnn::runtime::cuda::beginCallerStream(CUstream stream) {
  callerStream.active = true;
  callerStream.stream = stream;
}

void rnn::runtime::cuda::beginReplayCapture() { callerStream.replay = true; }

bool rnn::runtime::cuda::inReplayCapture() { return callerStream.replay; }

bool rnn::runtime::cuda::leaveCall() {
  CallerStream call = callerStream;
  callerStream = CallerStream();
  CudaState *s = call.device;
  if (!call.entered || !s || boundContext == call.previous)
    return true;
  if (!check(*s, s->api.cuCtxSetCurrent(call.previous),
             "rnnc: restoring the caller's CUDA context"))
    return false;
  boundContext = call.previous;
  return true;
}

std::string rnn::runtime::cuda::takeError() {
  std::string error = std::move(pendingError);
  pendingError.clear();
  return error;
}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  Globals &g = globals();
  std::lock_guard<std::mutex> lock(g.initMutex);
  CudaState *s = g.initialized.load(std::memory_order_relaxed);
  if (!s) {
    g.requestedOrdinal = device;
    return;
  }
  if (device != s->ordinal)
    recordError("mgpuSetDefaultDevice: device " + std::to_string(device) +
                " requested, but the runtime already runs on device " +
                std::to_string(s->ordinal));
}
