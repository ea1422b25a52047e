//===- Cuda.h - CUDA side of the rnnc runtime -------------------*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the GPU half of the runtime. It provides
//
//   * the `mgpu*` functions that MLIR's gpu-to-llvm lowering and the
//     gpu.binary translation call (module load, kernel launch, streams,
//     events, device memory), with upstream's names and ABI;
//   * `rnnrt_cuda_sgemm`, the device twin of `rnnrt_sgemm`, and
//     `rnnrt_cuda_gemm_bf16` (bf16 operands, f32 accumulation), through
//     cuBLAS;
//   * a C++ API for the host tool: initialization with a one-line error,
//     host<->device copies, CUDA graph capture and replay, event timing.
//
// The CUDA driver (libcuda.so.1) and cuBLAS are loaded with dlopen when
// first needed, so the runtime builds and links on machines without a GPU
// and fails there with a message, not at load time. Device buffers of the
// compiled program are recorded in `deviceMemory()` (Runtime.h), the same
// kind of ledger as host memory, so steps report device peaks per phase.
//
// Errors. No entry point aborts or prints, except on inconsistent GEMM
// shapes (a compiler bug, handled exactly as by `rnnrt_sgemm`). Every failure
// is recorded as one line, per thread; takeError() returns the first one the
// calling thread recorded since it last called it. A failed call returns
// null (or does nothing), so code compiled for the GPU keeps running to its
// end on a machine without one, and the caller reports takeError()
// afterwards. Entry points initialize
// the runtime themselves if initialize() was not called.
//
// Streams. Work runs in order on one stream owned by the runtime:
// mgpuStreamCreate returns it and mgpuStreamDestroy ignores it, so a whole
// step can be captured into one CUDA graph. Beside it, a step may run
// lanes (rnnrt_cuda_fork ... rnnrt_cuda_join, CudaLanes.cpp): the layers
// of a wavefront, each on a stream of its own forked from and joined back
// into the step's by events; mgpuStreamCreate and the GEMMs then use the
// current lane's stream. A compiled library's entry point instead
// runs on its caller's stream (rnnrt_cuda_enter to rnnrt_cuda_leave): its
// kernels, copies and GEMMs are enqueued there and nothing waits, so the
// caller orders the work with its own (PyTorch's current stream, say) and
// may capture it into a graph of its own.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_RUNTIME_CUDA_H
#define RNN_RUNTIME_CUDA_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// The driver's opaque handle types, as cuda.h declares them (CUmodule is
// CUmod_st *, and so on), so that this header needs no CUDA headers.
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;

//===----------------------------------------------------------------------===//
// C entry points called from compiled code (upstream MLIR names and ABI).
//===----------------------------------------------------------------------===//

extern "C" {
/// Registers a cubin, fatbin or NUL-terminated PTX image of `size` bytes,
/// which must stay valid until mgpuModuleUnload. The driver loads it on
/// the module's first mgpuModuleGetFunction: registering touches no GPU.
CUmod_st *mgpuModuleLoad(void *data, size_t size);
/// Registers a NUL-terminated PTX image as mgpuModuleLoad does, to be
/// compiled by the driver at `optLevel` (0-4) when loaded; the driver's
/// error log becomes part of the recorded error.
CUmod_st *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(CUmod_st *module);
CUfunc_st *mgpuModuleGetFunction(CUmod_st *module, const char *name);
/// Launches `function` on `stream`; `params` points to one pointer per
/// kernel argument (`paramsCount` of them).
void mgpuLaunchKernel(CUfunc_st *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, CUstream_st *stream,
                      void **params, void **extra, size_t paramsCount);
/// Returns the runtime's stream, or the caller's during a library call (see
/// the file comment).
CUstream_st *mgpuStreamCreate();
/// Destroys `stream` unless it is the runtime's or the caller's stream.
void mgpuStreamDestroy(CUstream_st *stream);
/// Waits for `stream`; a no-op while a graph is being captured and for the
/// caller's stream during a library call.
void mgpuStreamSynchronize(CUstream_st *stream);
void mgpuStreamWaitEvent(CUstream_st *stream, CUevent_st *event);
CUevent_st *mgpuEventCreate();
void mgpuEventDestroy(CUevent_st *event);
/// Waits for `event`; a no-op while a graph is being captured.
void mgpuEventSynchronize(CUevent_st *event);
void mgpuEventRecord(CUevent_st *event, CUstream_st *stream);
/// Allocates `sizeBytes` of device memory (managed memory if
/// `isHostShared`), accounted exactly in deviceMemory(). Zero bytes give
/// null. Refused (null) while device memory is frozen for graph capture.
void *mgpuMemAlloc(uint64_t sizeBytes, CUstream_st *stream, bool isHostShared);
/// Frees memory from mgpuMemAlloc; null is a no-op, unknown pointers count
/// as bad frees of deviceMemory().
void mgpuMemFree(void *ptr, CUstream_st *stream);
/// Copies `sizeBytes` between any two of host and device memory.
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, CUstream_st *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count,
                  CUstream_st *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  CUstream_st *stream);
/// Selects the device initialization will use (default 0). After
/// initialization only the device already in use is accepted.
void mgpuSetDefaultDevice(int32_t device);

/// The device twin of `_mlir_ciface_rnnrt_sgemm` (Runtime.h): the same
/// operands, shapes, transposes and alpha/beta semantics, on descriptors of
/// device memory, run by cuBLAS on the runtime's stream. Row- and
/// column-major views are accepted; other layouts are a recorded error.
void _mlir_ciface_rnnrt_cuda_sgemm(int64_t transA, int64_t transB, float alpha,
                                   float beta, StridedMemRefType<float, 2> *A,
                                   StridedMemRefType<float, 2> *B,
                                   StridedMemRefType<float, 2> *C);
/// The same GEMM on bf16 operands (their 16 bits as stored) with f32 C,
/// products and sums: cublasGemmEx with CUDA_R_16BF inputs and
/// CUBLAS_COMPUTE_32F. The product of bf16 values is exact in f32, so the
/// result is that of rnnrt_cuda_sgemm on the operands widened, up to the
/// order of the sums.
void _mlir_ciface_rnnrt_cuda_gemm_bf16(int64_t transA, int64_t transB,
                                       float alpha, float beta,
                                       StridedMemRefType<uint16_t, 2> *A,
                                       StridedMemRefType<uint16_t, 2> *B,
                                       StridedMemRefType<float, 2> *C);
/// A library's handle on one device (rnnc_context_create): the device its
/// entry points run on, and the graph replay of the calls made with it.
typedef struct rnnc_context rnnc_context;
/// A context on device `device` (a CUDA ordinal), starting the runtime
/// there if it has not started yet (the driver loaded, the device's
/// primary context retained, its kernels loaded at the first call); the
/// calling thread's current context is left as it was. Null on failure,
/// with the reason in rnnc_last_error (no driver, no such device). Any
/// number of contexts may exist, on one device or several; threads may
/// call with one context at once, each on its own stream.
rnnc_context *rnnc_context_create(int32_t device);
/// Destroys `context` (null: nothing) and its replay graphs, once no call
/// with it runs. Returns 0, or 1 (see rnnc_last_error).
int32_t rnnc_context_destroy(rnnc_context *context);
/// Starts a call of the library's entry point `entry` (a name whose
/// address identifies it) with `context` on the calling thread: checks the
/// context, that each of the `count` buffers is aligned to 16 bytes (the
/// kernels access 16-byte vectors) and that none the entry point writes (a
/// negative extent in `extents`, the buffers' sizes in bytes) overlaps
/// another, makes the context's device current, and until
/// rnnrt_cuda_leave the work goes to `stream`, the caller's on that device
/// (null: the legacy default stream), or with graph replay on, to the
/// context's replay stream while the call is captured. Returns 0 (run the
/// function, then rnnrt_cuda_leave), 1 with the error recorded, or 2 when
/// a captured graph of the same call replayed it (the entry point returns
/// 0).
int32_t rnnrt_cuda_enter(rnnc_context *context, const char *entry, void *stream,
                         void *const *buffers, const int64_t *extents,
                         int64_t count);
/// Ends the call begun by rnnrt_cuda_enter (launching its graph if the call
/// was captured). Returns 0 if no error was recorded since, else 1, keeping
/// the error for rnnc_last_error.
int32_t rnnrt_cuda_leave();
/// The error of the calling thread's last failed library call (an rnnc_*
/// entry point or function), or "".
const char *rnnc_last_error();
/// Graph replay of the calls made with `context`: keeps the last `calls`
/// pointer sets its entry points were called with (0, the default: off,
/// dropping every graph). A call with a kept set runs eagerly the first
/// time, is captured into a CUDA graph (and launched) the second, and
/// replays the graph after, on the context's stream ordered between the
/// caller's earlier and later work. Returns 0, or 1 (see rnnc_last_error)
/// for a negative count or no context.
int32_t rnnc_set_graph_replay(rnnc_context *context, int32_t calls);
/// Lanes (see "Streams" above): rnnrt_cuda_fork records where the lanes
/// start on the step's stream; rnnrt_cuda_lane(n) puts the thread's later
/// work (launches on the stream mgpuStreamCreate then gives, GEMMs) on lane
/// n, lane n > 0 first waiting for the fork; rnnrt_cuda_signal(slot)
/// records event `slot` on the current lane and rnnrt_cuda_wait(slot) makes
/// the current lane wait for it (an error unless signalled since the
/// fork); rnnrt_cuda_join makes lane 0 wait for every lane and goes back to
/// it. Misuse (a lane out of [0, 64], a fork inside a fork, a lane call
/// outside one) is a recorded error.
void rnnrt_cuda_fork();
void rnnrt_cuda_lane(int64_t lane);
void rnnrt_cuda_signal(int64_t slot);
void rnnrt_cuda_wait(int64_t slot);
void rnnrt_cuda_join();
/// The cuda target's `rnnrt_begin_phase`: marks the phase on the host as
/// `rnnrt_begin_phase` does (Runtime.h) and records the device step
/// timer's backward event on the runtime's stream, inside a graph capture
/// as an event node, so the phase times stay right when the step is
/// replayed.
void rnnrt_cuda_begin_phase(int64_t phase);
} // extern "C"

namespace rnn {
namespace runtime {
namespace cuda {

//===----------------------------------------------------------------------===//
// Initialization and errors.
//===----------------------------------------------------------------------===//

/// Loads the driver (`$RNNRT_LIBCUDA`, default libcuda.so.1), initializes
/// it, retains the primary context of the selected device and creates the
/// runtime's stream. Returns an empty string on success, else one line
/// naming the problem, e.g. "CUDA driver not found: dlopen(libcuda.so.1):
/// ...". Success is permanent; a failure leaves nothing behind, so a later
/// call tries again.
std::string initialize();

/// Whether initialize() has succeeded.
bool isInitialized();

/// Loads cuBLAS (`$RNNRT_LIBCUBLAS`, else libcublas.so.13, then
/// libcublas.so) and creates its handle on the runtime's stream,
/// initializing the driver first if needed. Returns an empty string on
/// success, else one line. rnnrt_cuda_sgemm calls it on first use, except
/// during graph capture, which it would invalidate: work that is captured
/// needs this called beforehand.
std::string initializeBlas();

/// Returns the first error the calling thread recorded since its previous
/// call (empty if none) and forgets it.
std::string takeError();

//===----------------------------------------------------------------------===//
// GEMM.
//===----------------------------------------------------------------------===//

/// Lets cuBLAS use TF32 tensor cores for rnnrt_cuda_sgemm (off by default:
/// full FP32).
void setTF32(bool enabled);

/// The GEMM backend rnnrt_cuda_sgemm uses: "cublas" or "cublas-tf32".
std::string gemmBackend();

//===----------------------------------------------------------------------===//
// Host <-> device.
//===----------------------------------------------------------------------===//

/// Allocates `bytes` of device memory. An `accounted` buffer is recorded in
/// deviceMemory() like the program's own; the caller's inputs and
/// parameters are not. Null on failure or for zero bytes.
void *allocateDevice(size_t bytes, bool accounted);

/// Allocates a device buffer as allocateDevice() and copies `bytes` from
/// `host` into it; returns when the copy is done. Null on failure.
void *copyToDevice(const void *host, size_t bytes, bool accounted);

/// Waits for the runtime's stream, then copies `bytes` from device memory
/// to `host`. Returns false on failure.
bool copyToHost(void *host, const void *device, size_t bytes);

/// The device's free and total memory in bytes (cuMemGetInfo). Returns
/// false with a recorded error on failure.
bool deviceMemoryInfo(size_t &free, size_t &total);

/// Frees a buffer from allocateDevice(), copyToDevice() or mgpuMemAlloc.
/// Null is a no-op.
void freeDevice(void *device);

/// Waits until all work on the runtime's stream is done. Returns false on
/// failure (an asynchronous error of earlier work is reported here).
bool synchronize();

//===----------------------------------------------------------------------===//
// CUDA graphs and timing.
//===----------------------------------------------------------------------===//

/// An instantiated CUDA graph of captured work.
struct Graph;

/// Starts capturing the work issued on the runtime's stream into a graph
/// and freezes deviceMemory(): allocating or freeing device memory until
/// endCapture() is refused and recorded as an error, because a replay would
/// not repeat it. Returns false on failure.
bool beginCapture();

/// Ends the capture begun by beginCapture(), thaws deviceMemory() and
/// instantiates the graph. Returns null on failure, including when device
/// memory was allocated or freed during the capture.
Graph *endCapture();

/// Replays `graph` on the runtime's stream (asynchronously). Returns false
/// on failure.
bool launchGraph(Graph *graph);

/// Destroys a graph from endCapture(); null is a no-op.
void destroyGraph(Graph *graph);

/// Creates a timing event and records it on the runtime's stream. Null on
/// failure.
CUevent_st *recordTimingEvent();

/// Waits for `end` and returns the milliseconds between two events from
/// recordTimingEvent(); negative on failure.
double elapsedMs(CUevent_st *start, CUevent_st *end);

/// Destroys an event from recordTimingEvent(); null is a no-op.
void destroyEvent(CUevent_st *event);

/// Step times measured on the device by the step timer.
struct DeviceStepTimes {
  double totalMs = 0.0;
  /// From the start of the step to the backward event, and from there to
  /// the end; fwdMs == totalMs and bwdMs == 0 when the step has no
  /// backward phase.
  double fwdMs = 0.0;
  double bwdMs = 0.0;
  bool sawBackward = false;
};

/// Records the step timer's start event on the runtime's stream. The
/// backward event is recorded by rnnrt_cuda_begin_phase, in the step's own
/// work or in a graph captured from it. Returns false on failure.
bool startStepTimer();

/// Records the end event, waits for it and returns the step's times.
/// `replayed`: the step was a replay of a graph; its backward event is the
/// one captured in the graph, if the captured step had one. Returns false
/// on failure.
bool stopStepTimer(bool replayed, DeviceStepTimes &times);

//===----------------------------------------------------------------------===//
// JIT registration.
//===----------------------------------------------------------------------===//

/// The C entry points above as (symbol name, address) pairs, to register
/// with the JIT next to runtime::jitSymbols().
std::vector<std::pair<const char *, void *>> jitSymbols();

} // namespace cuda
} // namespace runtime
} // namespace rnn

#endif // RNN_RUNTIME_CUDA_H
