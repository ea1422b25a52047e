//===- CudaDriver.h - The CUDA driver, loaded at run time -------*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the table of driver entry points the runtime uses, the initialized
// runtime state (driver, device, primary context, stream), and the error
// recording shared by every CUDA source file of the runtime. Private to the
// runtime.
//
// Why: the driver is dlopen'ed, so each entry point is a pointer resolved by
// name. cuda.h maps API names to versioned symbols (cuMemAlloc is
// cuMemAlloc_v2); the table takes both the symbol name and the function type
// from the header's own macros, so the two cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_RUNTIME_CUDADRIVER_H
#define RNN_RUNTIME_CUDADRIVER_H

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

/// The symbol a CUDA API name stands for, after the header's macros.
#define RNN_CUDA_SYMBOL(name) RNN_CUDA_SYMBOL_EXPANDED(name)
#define RNN_CUDA_SYMBOL_EXPANDED(name) #name

/// Every driver entry point the runtime calls.
#define RNN_CUDA_DRIVER_FUNCTIONS(X)                                           \
  X(cuInit)                                                                    \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxGetCurrent)                                                           \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamGetCtx)                                                            \
  X(cuStreamIsCapturing)                                                       \
  X(cuStreamWaitEvent)                                                         \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventRecordWithFlags)                                                    \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemGetInfo)                                                              \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuMemcpyAsync)                                                             \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)                                                          \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)

namespace rnn {
namespace runtime {
namespace cuda {

/// Driver entry points. Members carry the macro-expanded names, so
/// `api.cuMemAlloc(...)` calls the cuMemAlloc_v2 pointer.
struct DriverApi {
#define RNN_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  RNN_CUDA_DRIVER_FUNCTIONS(RNN_CUDA_DECLARE)
#undef RNN_CUDA_DECLARE
};

/// The most devices the runtime serves (ordinals 0 to kMaxDevices - 1).
constexpr int kMaxDevices = 64;

/// cuBLAS on one device, and its entry points (CudaBlas.cpp).
struct BlasState;
struct BlasApi;

/// The runtime on one device: the driver's entry points, the device's
/// primary context and the runtime's stream there. Created once per device
/// (at initialize() for the default device, at the first rnnc_context of
/// another) and never destroyed.
struct CudaState {
  std::string libraryName;
  DriverApi api;
  int ordinal = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  /// Whether beginCapture() is in effect (synchronizing is skipped).
  std::atomic<bool> capturing{false};
  /// The device's cuBLAS, started at its first GEMM (CudaBlas.cpp).
  std::atomic<BlasState *> blas{nullptr};
};

/// Returns the runtime state of the calling thread's device (the device of
/// the library call in progress, else the default device) with its
/// context current on the thread, initializing on first use. On failure
/// records "`entry`: <why>" and returns null.
CudaState *acquire(const char *entry);

/// The runtime state of device `ordinal`, started if it is not yet (the
/// driver too). On failure records "`entry`: <why>" and returns null.
CudaState *openDevice(int ordinal, const char *entry);

/// Each device's state started so far, by ordinal (null where none).
CudaState *startedDevice(int ordinal);

/// Makes `state`'s context current on the calling thread; false with the
/// error recorded naming `entry` on failure.
bool makeCurrent(CudaState &state, const char *entry);

/// Makes `previous` current again on the calling thread after it was
/// changed by hand (`state` gives the driver); false with the error
/// recorded naming `entry` on failure.
bool restoreContext(CudaState &state, CUcontext previous, const char *entry);

/// Allocates `bytes` of device memory (managed if `managed`) recorded in
/// deviceMemory(). Zero bytes give null without an error; a failure, or a
/// refusal while device memory is frozen, records an error naming `entry`.
void *allocateAccounted(CudaState &state, const char *entry, size_t bytes,
                        bool managed);

/// Frees device memory from allocateAccounted() or allocateDevice(), of
/// either kind. Null is a no-op; errors are recorded naming `entry`.
void releaseDevice(CudaState &state, const char *entry, void *p);

/// Records `message` unless an earlier error is still pending.
void recordError(std::string message);

/// "NAME: description" of a driver result.
std::string describe(const CudaState &state, CUresult result);

/// Returns true if `result` is CUDA_SUCCESS; otherwise records "`what`:
/// <error name>: <description>" and returns false.
bool check(CudaState &state, CUresult result, const char *what);

/// Waits for `stream` (or `event`), counted in runtime::synchronizations();
/// false with a recorded error naming `what` on failure.
bool waitForStream(CudaState &state, CUstream stream, const char *what);
bool waitForEvent(CudaState &state, CUevent event, const char *what);

/// The stream compiled code issues its work to on the calling thread on
/// `state`'s device: the current lane's while one other than lane 0 is
/// (CudaLanes.cpp), else the
/// caller's stream during a library call (between rnnrt_cuda_enter and
/// rnnrt_cuda_leave), the runtime's stream otherwise.
CUstream currentStream(const CudaState &state);

/// The most lanes besides lane 0 a thread may use.
constexpr int64_t kMaxLanes = 64;
/// The stream of the calling thread's current lane on `state`'s device,
/// or null on lane 0 or outside a fork (CudaLanes.cpp).
CUstream laneStream(const CudaState &state);
/// Ends any fork of the calling thread left open by a call that failed.
void resetLanes();
/// The calling thread's current lane on `state`'s device (0 outside a
/// fork).
unsigned currentLane(const CudaState &state);
/// The most lanes a step of any thread has used, lane 0 included.
unsigned lanesUsed();

/// Whether the calling thread is inside a library call whose caller's
/// stream is `stream`. Such a stream belongs to the caller: the runtime
/// issues work to it but never waits for it.
bool isCallerStream(CUstream stream);

/// Starts a library call on `device` on the calling thread
/// (CudaLibrary.cpp): makes its context current, remembering the context
/// the caller had current, and returns it, or null with the error
/// recorded.
CudaState *enterCall(const char *entry, CudaState &device);
/// Routes the call's work to `stream`, the caller's, until leaveCall.
void beginCallerStream(CUstream stream);
/// Marks the calling thread's call, until leaveCall, as captured into a
/// graph of the library's graph replay (CudaLibrary.cpp): its GEMMs use
/// the replay workspaces (readyReplayWorkspaces).
void beginReplayCapture();
/// Whether the calling thread's call is captured for graph replay.
bool inReplayCapture();
/// Makes sure cuBLAS has a workspace per lane (lanesUsed()) for the GEMMs
/// of calls captured for graph replay, allocated now, before a capture
/// begins (CudaBlas.cpp). Every such graph runs on the library's replay
/// stream, one after another, so one set serves them all. Nothing to do
/// before cuBLAS starts. False with the error recorded naming `entry`.
bool readyReplayWorkspaces(CudaState &state, const char *entry);
/// Ends the call: the runtime's stream again, and the caller's context
/// current again. Returns false with the error recorded if it cannot be.
bool leaveCall();

} // namespace cuda
} // namespace runtime
} // namespace rnn

#endif // RNN_RUNTIME_CUDADRIVER_H
