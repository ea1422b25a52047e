//===- NullCuda.h - libnullcuda.so's state and checks -----------*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Private to libnullcuda.so (NullCuda.cpp says what it is and why): the
// device's limits, the handle types, the state every entry point holds the
// lock of, and the checks the entry points share. The library's files, by
// concern:
//
//   NullCuda.cpp   global state, errors, the exit report, error names
//   Streams.cpp    streams and capture, memory, ordering between streams
//                  (the race checks)
//   Modules.cpp    PTX modules and their kernels' signatures, launches
//   Gemm.cpp       SGEMM and bf16 GemmEx on OpenBLAS, cuBLAS's entry points
//   Graphs.cpp     graph replay, event records, memsets
//   Driver.cpp     the CUDA driver's entry points
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TEST_LIB_NULLCUDA_NULLCUDA_H
#define RNN_TEST_LIB_NULLCUDA_NULLCUDA_H

#include <cblas.h>
#include <cublas_v2.h>
#include <cuda.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#define NULLCUDA_EXPORT __attribute__((visibility("default")))

namespace nullcuda {

/// Device memory of the device the library stands in for (an H100's 80
/// GiB); NULLCUDA_DEVICE_MEMORY (bytes) sets another. Allocations beyond it
/// fail as on a GPU, and cuMemGetInfo reports it.
inline uint64_t deviceMemoryBytes() {
  static const uint64_t bytes = [] {
    const char *text = std::getenv("NULLCUDA_DEVICE_MEMORY");
    if (text && *text)
      return static_cast<uint64_t>(std::strtoull(text, nullptr, 10));
    return static_cast<uint64_t>(80) << 30;
  }();
  return bytes;
}

/// How many devices the library stands in for: NULLCUDA_DEVICES, from 1
/// (the default) to kMaxDevices. Each has its primary context; streams,
/// events, modules, cuBLAS handles and allocations belong to the context
/// current when they were made, and using one with another context
/// current is an error (a violation where a GPU would fault).
constexpr int kMaxDevices = 8;
inline int deviceCount() {
  static const int count = [] {
    const char *text = std::getenv("NULLCUDA_DEVICES");
    int n = text && *text ? std::atoi(text) : 1;
    return std::min(std::max(n, 1), kMaxDevices);
  }();
  return count;
}

/// Limits of the device the library stands in for (an H100).
constexpr size_t kAllocationAlignment = 256;
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxBlockDimZ = 64;
constexpr unsigned kMaxGridDimX = 0x7fffffffu;
constexpr unsigned kMaxGridDimYZ = 65535;
constexpr int kDefaultDynamicShared = 48 * 1024;
constexpr int kMaxDynamicShared = 227 * 1024;

__extension__ typedef __int128 Int128;

//===----------------------------------------------------------------------===//
// Kernels and captured work.
//===----------------------------------------------------------------------===//

/// One argument of an rnnc kernel signature: a memref, which the kernel ABI
/// expands into 3 + 2 * rank eight-byte parameters (allocated pointer,
/// aligned pointer, offset, sizes, strides), or a scalar parameter.
struct KernelArg {
  bool isMemref = false;
  /// For a memref: `r` the kernel loads it as read-only data (ld.global.nc),
  /// `w` it writes it, `m` not said.
  char access = 'm';
  unsigned elementBytes = 0;
  unsigned rank = 0;
  unsigned scalarBytes = 0;
  size_t firstParam = 0;
};

/// The bytes a memref argument of a launch spans, [begin, end); empty when
/// it has none.
struct Span {
  uintptr_t begin = 0, end = 0;
};

/// What a loaded module knows about one of its kernels.
struct KernelInfo {
  std::string name;
  /// Byte size of each PTX parameter, and its offset in a packed copy.
  std::vector<size_t> paramBytes;
  std::vector<size_t> paramOffsets;
  size_t totalParamBytes = 0;
  bool hasSignature = false;
  std::vector<KernelArg> args;
};

struct LaunchConfig {
  unsigned grid[3];
  unsigned block[3];
  unsigned sharedBytes;
  /// The kernel's dynamic shared memory limit when the launch was issued.
  int maxDynamicShared;
};

/// One GEMM with f32 C, with alpha and beta read at the call (host pointer
/// mode): an SGEMM, or a cublasGemmEx with bf16 A and B (`bf16`).
struct GemmCall {
  cublasContext *handle;
  cublasOperation_t transa, transb;
  int m, n, k;
  float alpha;
  const void *a;
  int lda;
  const void *b;
  int ldb;
  float beta;
  float *c;
  int ldc;
  bool bf16 = false;
  /// The handle's workspace when the call was made (cublasSetWorkspace;
  /// 0 if set to none), and whether one was set since cublasSetStream.
  uintptr_t workspace = 0;
  size_t workspaceBytes = 0;
  bool workspaceSet = false;
};

enum class NodeKind { Kernel, Copy, Set, EventRecord, Gemm };

/// A captured operation. Only the fields of its kind are used.
struct Node {
  explicit Node(NodeKind kind) : kind(kind) {}

  NodeKind kind;
  // Kernel: the parameter values are copied, packed by paramOffsets.
  CUfunc_st *function = nullptr;
  std::shared_ptr<const KernelInfo> kernel;
  LaunchConfig launch{};
  std::vector<unsigned char> params;
  // Copy and set. Whether each pointer was device memory when captured.
  uintptr_t dst = 0, src = 0;
  size_t bytes = 0;
  bool dstOnDevice = false, srcOnDevice = false;
  unsigned value = 0, elementBytes = 0;
  size_t count = 0;
  // Event record (CU_EVENT_RECORD_EXTERNAL).
  CUevent_st *event = nullptr;
  // Gemm.
  GemmCall gemm{};
};

/// How an event was last recorded.
enum class Recorded { Never, Eagerly, InCapture, AsNode };

} // namespace nullcuda

//===----------------------------------------------------------------------===//
// The opaque handle types of cuda.h and cublas_api.h.
//===----------------------------------------------------------------------===//

struct CUctx_st {
  /// The device whose primary context this is.
  int ordinal = 0;
};

struct CUfunc_st {
  /// The context of the module it is a kernel of.
  CUctx_st *context = nullptr;
  std::shared_ptr<const nullcuda::KernelInfo> info;
  int maxDynamicShared = nullcuda::kDefaultDynamicShared;
};

struct CUmod_st {
  CUctx_st *context = nullptr;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
};

struct CUstream_st {
  CUctx_st *context = nullptr;
  unsigned flags = 0;
  bool capturing = false;
  /// An unsupported call broke the capture; cuStreamEndCapture fails.
  bool invalidated = false;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::thread::id thread;
  std::vector<nullcuda::Node> nodes;
  /// A stream that joined the capture of `joined` by waiting for an event
  /// recorded in it: its work goes into that capture. `work` counts its
  /// operations; `unjoined` says whether some came after the last event
  /// recorded on it that the capture waited for.
  CUstream_st *joined = nullptr;
  uint64_t work = 0;
  bool unjoined = false;
};

struct CUevent_st {
  unsigned flags = 0;
  nullcuda::Recorded recorded = nullcuda::Recorded::Never;
  /// The stream whose capture recorded the event (InCapture, AsNode).
  CUstream_st *captureStream = nullptr;
  /// nullcuda::Recorded in a capture on a stream that joined it: that stream and its
  /// work count then, so that a wait of the capture for it joins it back.
  CUstream_st *joinedStream = nullptr;
  uint64_t joinedWork = 0;
  bool hasTime = false;
  std::chrono::steady_clock::time_point time;
};

struct CUgraph_st {
  std::vector<nullcuda::Node> nodes;
};

struct CUgraphExec_st {
  std::vector<nullcuda::Node> nodes;
};

struct cublasContext {
  /// The context current at cublasCreate: the handle's device.
  CUctx_st *context = nullptr;
  CUstream stream = nullptr;
  uintptr_t workspace = 0;
  size_t workspaceBytes = 0;
  /// Whether cublasSetWorkspace was called since cublasSetStream (else the
  /// handle uses cuBLAS's default pool).
  bool workspaceSet = false;
  cublasMath_t mathMode = CUBLAS_DEFAULT_MATH;
};

namespace nullcuda {

struct Allocation {
  size_t bytes;
  bool managed;
  /// The context current when it was allocated.
  CUctx_st *context = nullptr;
};

using AllocationMap = std::map<uintptr_t, Allocation>;

/// A vector clock: for each stream (by key, see streamKey), how many of its
/// operations are ordered before what holds the clock.
using Clock = std::map<const void *, uint64_t>;

/// An access to bytes [begin, end) of an allocation: the stream's key (null:
/// none), the stream's tick of the operation, and what the operation was
/// (for messages).
struct Access {
  const void *stream = nullptr;
  uint64_t tick = 0;
  uintptr_t begin = 0, end = 0;
  std::shared_ptr<const std::string> what;

  bool same(const Access &other) const {
    return stream == other.stream && tick == other.tick;
  }
};

/// What the bytes of one segment of an allocation saw that a later access
/// must be ordered after: the last write, and the reads since it, one per
/// stream.
struct Segment {
  uintptr_t end = 0;
  Access write;
  std::map<const void *, Access> reads;

  bool sameState(const Segment &other) const {
    return write.same(other.write) && reads.size() == other.reads.size() &&
           std::equal(reads.begin(), reads.end(), other.reads.begin(),
                      [](const auto &a, const auto &b) {
                        return a.first == b.first && a.second.same(b.second);
                      });
  }
};

/// The accesses to one allocation, as disjoint segments by their first
/// byte: each access splits the segments at its bounds, so a later access
/// meets only the segments of the bytes it touches.
using AccessHistory = std::map<uintptr_t, Segment>;

/// The order the streams, events and synchronizations impose on the work
/// (see "Ordering between streams").
struct Ordering {
  std::map<const void *, Clock> streams;
  /// What the host has waited for (stream and event synchronization).
  Clock host;
  std::map<const CUevent_st *, Clock> events;
  /// By allocation start.
  std::map<uintptr_t, AccessHistory> accesses;
};

struct Counters {
  uint64_t allocs = 0, frees = 0, peakBytes = 0, liveBytes = 0;
  uint64_t launches = 0, graphLaunches = 0, replayedLaunches = 0;
  uint64_t gemms = 0, replayedGemms = 0, syncs = 0, moduleLoads = 0;
  /// Replayed GEMMs captured with no workspace (cublasSetWorkspace with
  /// size 0): cuBLAS then has fewer kernels to choose from than eagerly.
  uint64_t replayedGemmsWithoutWorkspace = 0;
  /// GEMMs run (eagerly or replayed) with bf16 operands.
  uint64_t bf16Gemms = 0;
  uint64_t getFunction = 0, captures = 0, capturedNodes = 0;
  uint64_t violations = 0, errors = 0;
  /// Kernel launches and GEMMs run (eagerly or replayed), by device.
  std::map<int, uint64_t> launchesByDevice, gemmsByDevice;
  /// The streams work ran on (eagerly or replayed), by key.
  std::set<const void *> workStreams;
};

/// Everything, guarded by `mutex`. Leaked, so that calls made while static
/// objects are destroyed, and the exit report, still find it.
struct State {
  std::mutex mutex;
  bool initialized = false;
  int primaryRetains[kMaxDevices] = {};
  CUctx_st primaryContexts[kMaxDevices];
  AllocationMap allocations;
  std::set<CUstream_st *> streams;
  std::set<CUevent_st *> events;
  std::set<CUmod_st *> modules;
  std::set<CUfunc_st *> functions;
  std::set<CUgraph_st *> graphs;
  std::set<CUgraphExec_st *> execs;
  std::set<cublasContext *> blasHandles;
  Ordering ordering;
  Counters count;
  std::string reportPath;
};

/// The context made current on this thread.
extern thread_local CUctx_st *currentContext;

/// The primary context of a present device, or null.
CUctx_st *primaryContext(int ordinal);

/// The context work on `stream` runs in: a created stream's own, the
/// current one for the legacy and per-thread default streams.
CUctx_st *streamContext(CUstream stream);

/// "device N" of a context.
std::string deviceName(const CUctx_st *context);

/// The operands of a GEMM and the bytes each spans.
struct GemmOperand {
  const char *name;
  const void *p;
  uint64_t bytes;
};

struct ErrorText {
  CUresult code;
  const char *name;
  const char *text;
};

State &state();

void writeReport();

/// Registers the exit report on first use and returns the state's mutex,
/// which every entry point holds for its whole duration.
std::mutex &enter();

std::string hex(uint64_t value);

std::string hex(const void *p);

std::string str(Int128 value);

/// Prints `message` as one line (it may quote PTX).
void print(std::string message);

/// Reports a failed call: counts it and prints `message`.
CUresult fail(CUresult code, const std::string &message);

/// A failure that a GPU would also reject or fault on: an out-of-bounds
/// access or an operation that breaks a capture.
CUresult violation(CUresult code, const std::string &message);

cublasStatus_t blasFail(cublasStatus_t status, const std::string &message);

cublasStatus_t blasViolation(cublasStatus_t status,
                             const std::string &message);

/// The checks of every entry point that needs an initialized driver and a
/// current context.
CUresult ready(const std::string &entry);

const char *modeName(CUstreamCaptureMode mode);

/// Resolves the stream that work issued on `handle` goes to. Sets `capture`
/// to the stream if it is capturing (the work must be recorded, not run),
/// to null if the work runs now. Work on the legacy default stream waits
/// for every blocking stream, so it would join a capture on one of them,
/// which the driver refuses.
CUresult routeWork(const std::string &entry, CUstream handle,
                   CUstream_st *&capture);

/// Refuses a potentially unsafe call (allocation, free, module load) while
/// a capture that prohibits it is in progress: any global-mode capture, or
/// a thread-local one begun by this thread. As in the driver, the refusal
/// invalidates the capture.
CUresult refuseDuringCapture(const std::string &what);

/// Work that failed its checks while being captured breaks the capture.
CUresult failCapture(CUstream_st *capture, CUresult result);

/// The live allocation containing address `p`, or null.
const AllocationMap::value_type *findAllocation(uintptr_t p);

/// Whether [p, p + bytes) lies within `allocation`.
bool contains(const AllocationMap::value_type &allocation, uintptr_t p,
              uint64_t bytes);

std::string describe(const AllocationMap::value_type &allocation);

//
// Work on different streams may run at once on a GPU unless an event or a
// synchronization orders it, which the null device, running each call as
// it is issued, would never show. So it keeps the order the program
// imposes, as vector clocks: each stream's clock counts, for every stream,
// its operations ordered before the stream's next one. An operation on
// stream S takes in the host's clock (what stream and event
// synchronization waited for) and, by the legacy default stream's implicit
// synchronization, the legacy stream's clock (S blocking) or every
// blocking stream's (S the legacy stream), then ticks S. An event takes the
// clock of the stream it is recorded on; cuStreamWaitEvent merges it into
// the waiting stream's. Each allocation keeps, by byte range, the last
// writes and the reads since; an access to bytes in conflict with one not
// ordered before it (a write after a read or a write, a read after a write)
// is a violation: a race on a GPU. Byte ranges let two streams work on
// disjoint parts of one buffer, as the layers of a wavefront do (a
// kernel's range is the span of its view; a GEMM operand's, the span of
// its matrix). Kernel arguments count as written where the signature marks
// them so (`w`), or, in a signature that marks no write, unless it marks
// them read-only (`r`);
// GEMM operands A and B count as read and C as written; a copy reads its
// source and writes its destination; a set writes. Work in a capture takes
// part when its graph is launched, on the launch's stream.
/// The key of a stream in clocks: the legacy default stream and the
/// per-thread default stream have one each, created streams their handle.

const void *streamKey(CUstream stream);

std::string describeStream(const void *key);

/// Whether the stream of `key` synchronizes with the legacy default stream.
bool isBlocking(const void *key);

void merge(Clock &into, const Clock &from);

/// Starts an operation on `stream`: its clock takes in what orders the
/// operation, and ticks. Returns the stream's key.
const void *beginOperation(CUstream stream);

/// Records an access by the operation just begun on the stream of `key` to
/// bytes [begin, end) of the allocation holding `begin` (none: host memory,
/// not tracked), and reports each earlier conflicting access to any of
/// those bytes not ordered before it.
void access(const void *key, uintptr_t begin, uintptr_t end, bool write,
            const std::string &what);

/// Checks the order of a kernel's memref arguments in an operation on
/// `stream`. A signature that marks written arguments (`w`) marks all of
/// them (rnn-read-only-kernel-args found every write), so the others count
/// as read; one that marks none says nothing, and every argument but those
/// loaded as read-only data counts as written.
/// `spans` are the arguments' bytes, as checkLaunch found them.
void kernelAccesses(CUstream stream, const KernelInfo &kernel,
                    const std::vector<Span> &spans, const std::string &what);

/// Checks the order of a copy of `bytes` (src read, dst written) or, with
/// `src` 0, a set, on `stream`.
void copyAccesses(CUstream stream, uintptr_t dst, uintptr_t src, size_t bytes,
                  const std::string &what);

/// Bytes spanned by a column-major rows x cols matrix of `element`-byte
/// values with leading dimension ld; 0 when it is empty.
uint64_t matrixBytes(int64_t rows, int64_t cols, int64_t ld, uint64_t element);

std::array<GemmOperand, 3> gemmOperands(const GemmCall &g);

/// Checks the order of a GEMM on `stream`: A and B read, C and the
/// handle's workspace written (cuBLAS may use all of it: two GEMMs that
/// share a workspace on unordered streams race).
void gemmAccesses(CUstream stream, const GemmCall &g, const std::string &what);

/// Checks the `bytes` at `p` that a copy or a set touches. A pointer into a
/// live allocation must keep the whole range inside it. A pointer outside
/// every allocation is host memory, which only copies may name (unified
/// addressing). Sets `onDevice` when given.
CUresult checkBuffer(const std::string &entry, const char *role, uintptr_t p,
                     size_t bytes, bool hostAllowed, bool *onDevice = nullptr);

void fill(uintptr_t dst, unsigned value, unsigned elementBytes, size_t count);

CUresult allocate(const std::string &entry, CUdeviceptr *dptr, size_t bytes,
                  bool managed);

bool isIdentifierChar(char c);

/// Replaces comments by spaces, keeping line breaks and string literals.
std::string stripComments(const std::string &text);

/// Byte size of a PTX fundamental type (`.u32`, `.f64`, `.b8`, ...), or 0.
size_t ptxTypeBytes(const std::string &type);

/// Splits a parameter declaration into words, with each `[N]` its own word.
std::vector<std::string> paramWords(const std::string &text);

/// Parses the parameter list of `.entry NAME(...)` into `kernel`. Returns
/// an error, or an empty string.
std::string parseParams(const std::string &list, KernelInfo &kernel);

/// Parses the arguments of an rnnc.kernel line: `m<E>x<R>` (`r<E>x<R>`
/// read-only, `w<E>x<R>` written) or `s<N>`, separated by commas.
std::string parseSignature(const std::string &name, const std::string &text,
                           std::vector<KernelArg> &args);

/// Checks that `kernel`'s signature expands to exactly its PTX parameters.
std::string matchSignature(const KernelInfo &kernel);

/// Reads the kernels of a PTX module and their rnnc.kernel signatures.
/// Returns an error, or an empty string.
std::string
parseModule(const void *image,
            std::map<std::string, std::shared_ptr<KernelInfo>> &kernels);

CUresult loadModule(const std::string &entry, CUmodule *module,
                    const void *image, char *log, size_t logBytes);

uint64_t paramWord(const void *const *params, size_t i);

/// Checks one memref argument of a launch against the live allocations;
/// sets `span` to the bytes it spans.
CUresult checkMemref(const std::string &entry, size_t index,
                     const KernelArg &arg, const void *const *params,
                     Span &span);

/// Checks a launch of `kernel`, eager, captured or replayed: dimensions,
/// shared memory, and every memref argument. `entry` names the kernel. Sets
/// `spans` to the bytes of each argument (empty for a scalar).
CUresult checkLaunch(const std::string &entry, const KernelInfo &kernel,
                     const LaunchConfig &c, const void *const *params,
                     std::vector<Span> &spans);

/// Checks that each operand lies wholly in one live device allocation.
cublasStatus_t checkGemmOperands(const std::string &entry, const GemmCall &g);

void runGemm(const GemmCall &g);

/// Runs a graph's nodes in order, as work on `stream`.
CUresult replay(const std::vector<Node> &nodes, CUstream stream);

/// Records `event` on `stream`. Outside a capture the time is taken now.
/// In a capture a CU_EVENT_RECORD_EXTERNAL record becomes a node that takes
/// the time at every replay; a plain record only marks a point of the
/// capture (for cuStreamWaitEvent) and, as with the driver, gives no time.
CUresult recordEvent(const std::string &entry, CUevent event, CUstream stream,
                     unsigned flags);

/// cuMemsetD32Async and cuMemsetD16Async: the destination must be aligned
/// device memory.
CUresult memsetAsync(const std::string &entry, CUdeviceptr dst, unsigned value,
                     unsigned elementBytes, size_t count, CUstream stream);

const ErrorText *findError(CUresult code);

/// The destroy entry points of events and graphs: `handle` must be one of
/// `live` (`what` names its kind in the error); it is removed and deleted.
template <typename Handle>
CUresult destroyHandle(const char *entry, std::set<Handle> &live, Handle handle,
                       CUresult unknown, const char *what) {
  std::lock_guard<std::mutex> lock(enter());
  if (CUresult r = ready(entry))
    return r;
  if (!live.erase(handle))
    return fail(unknown,
                std::string(entry) + ": unknown " + what + " " + hex(handle));
  delete handle;
  return CUDA_SUCCESS;
}

} // namespace nullcuda

#endif // RNN_TEST_LIB_NULLCUDA_NULLCUDA_H
