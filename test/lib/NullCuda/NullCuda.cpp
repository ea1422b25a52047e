//===- NullCuda.cpp - A CUDA driver and cuBLAS without a GPU --------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: libnullcuda.so, one shared library that exports the CUDA driver
// entry points and the cuBLAS entry points the runtime dlopens (see
// RNN_CUDA_DRIVER_FUNCTIONS in runtime/CudaDriver.h and RNN_CUBLAS_FUNCTIONS
// in runtime/CudaBlas.cpp), under the versioned symbol names cuda.h and
// cublas_v2.h map the API names to. Device memory is host memory. Kernels
// are not executed, but every launch is checked against the kernel's
// signature and the live allocations; SGEMM and the bf16 GemmEx run on the
// CPU through OpenBLAS. Stream capture records the work as graph nodes, which a
// graph launch replays (and checks) in order. Streams, events and
// synchronizations are modeled as the order they impose, and work on two
// streams that touches one allocation unordered is reported as a race. With
// NULLCUDA_REPORT naming a file, counters are written there as one JSON
// object when the process exits.
//
// Why: CI machines without a GPU must still run the host path of
// `rnn-run --target=cuda` end to end: module loading, argument passing,
// buffer sizes, capture rules and the cuBLAS calls. Pointing both
// RNNRT_LIBCUDA and RNNRT_LIBCUBLAS at this library (one dlopen'ed
// instance, so one state) checks what a GPU would reject or fault on and
// reports it as the driver would, an error code, plus one line on stderr
// starting with `nullcuda: ` and a count in the report. Kernel arguments are
// checked through the `// rnnc.kernel NAME ARGS` comment the compiler
// appends to the PTX for each kernel, since the PTX alone does not say
// which parameters form a memref descriptor.
//
//===----------------------------------------------------------------------===//

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

namespace {

/// Device memory of the device the library stands in for (an H100's 80
/// GiB); NULLCUDA_DEVICE_MEMORY (bytes) sets another. Allocations beyond it
/// fail as on a GPU, and cuMemGetInfo reports it.
uint64_t deviceMemoryBytes() {
  static const uint64_t bytes = [] {
    const char *text = std::getenv("NULLCUDA_DEVICE_MEMORY");
    if (text && *text)
      return static_cast<uint64_t>(std::strtoull(text, nullptr, 10));
    return static_cast<uint64_t>(80) << 30;
  }();
  return bytes;
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

} // namespace

//===----------------------------------------------------------------------===//
// The opaque handle types of cuda.h and cublas_api.h.
//===----------------------------------------------------------------------===//

struct CUctx_st {
  int unused = 0;
};

struct CUfunc_st {
  std::shared_ptr<const KernelInfo> info;
  int maxDynamicShared = kDefaultDynamicShared;
};

struct CUmod_st {
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
};

struct CUstream_st {
  unsigned flags = 0;
  bool capturing = false;
  /// An unsupported call broke the capture; cuStreamEndCapture fails.
  bool invalidated = false;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::thread::id thread;
  std::vector<Node> nodes;
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
  Recorded recorded = Recorded::Never;
  /// The stream whose capture recorded the event (InCapture, AsNode).
  CUstream_st *captureStream = nullptr;
  /// Recorded in a capture on a stream that joined it: that stream and its
  /// work count then, so that a wait of the capture for it joins it back.
  CUstream_st *joinedStream = nullptr;
  uint64_t joinedWork = 0;
  bool hasTime = false;
  std::chrono::steady_clock::time_point time;
};

struct CUgraph_st {
  std::vector<Node> nodes;
};

struct CUgraphExec_st {
  std::vector<Node> nodes;
};

struct cublasContext {
  CUstream stream = nullptr;
  uintptr_t workspace = 0;
  size_t workspaceBytes = 0;
  /// Whether cublasSetWorkspace was called since cublasSetStream (else the
  /// handle uses cuBLAS's default pool).
  bool workspaceSet = false;
  cublasMath_t mathMode = CUBLAS_DEFAULT_MATH;
};

namespace {

//===----------------------------------------------------------------------===//
// Global state, errors and the report.
//===----------------------------------------------------------------------===//

struct Allocation {
  size_t bytes;
  bool managed;
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
  /// The streams work ran on (eagerly or replayed), by key.
  std::set<const void *> workStreams;
};

/// Everything, guarded by `mutex`. Leaked, so that calls made while static
/// objects are destroyed, and the exit report, still find it.
struct State {
  std::mutex mutex;
  bool initialized = false;
  int primaryRetains = 0;
  CUctx_st primaryContext;
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

State &state() {
  static State *s = new State();
  return *s;
}

/// The context made current on this thread.
thread_local CUctx_st *currentContext = nullptr;

void writeReport() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const Counters &c = s.count;
  const std::pair<const char *, uint64_t> fields[] = {
      {"allocs", c.allocs},
      {"frees", c.frees},
      {"peak_bytes", c.peakBytes},
      {"live_bytes", c.liveBytes},
      {"launches", c.launches},
      {"graph_launches", c.graphLaunches},
      {"replayed_launches", c.replayedLaunches},
      {"gemms", c.gemms},
      {"replayed_gemms", c.replayedGemms},
      {"replayed_gemms_without_workspace", c.replayedGemmsWithoutWorkspace},
      {"bf16_gemms", c.bf16Gemms},
      {"syncs", c.syncs},
      {"module_loads", c.moduleLoads},
      {"get_function", c.getFunction},
      {"captures", c.captures},
      {"captured_nodes", c.capturedNodes},
      {"violations", c.violations},
      {"errors", c.errors},
      {"work_streams", c.workStreams.size()},
      {"live_graphs", s.graphs.size()},
      {"live_graph_execs", s.execs.size()},
  };
  std::string json = "{";
  for (const auto &field : fields) {
    if (json.size() > 1)
      json += ", ";
    json +=
        std::string("\"") + field.first + "\": " + std::to_string(field.second);
  }
  json += "}\n";
  // Written next to the target and renamed, so that a reader never sees a
  // partial report.
  std::string temporary = s.reportPath + ".tmp." + std::to_string(getpid());
  FILE *file = std::fopen(temporary.c_str(), "w");
  bool ok = file && std::fputs(json.c_str(), file) >= 0;
  if (file)
    ok = std::fclose(file) == 0 && ok;
  if (!ok || std::rename(temporary.c_str(), s.reportPath.c_str()) != 0) {
    std::fprintf(stderr, "nullcuda: cannot write the report %s\n",
                 s.reportPath.c_str());
    std::remove(temporary.c_str());
  }
}

/// Registers the exit report on first use and returns the state's mutex,
/// which every entry point holds for its whole duration.
std::mutex &enter() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char *path = std::getenv("NULLCUDA_REPORT");
    if (path && *path) {
      state().reportPath = path;
      std::atexit(writeReport);
    }
  });
  return state().mutex;
}

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "0x%llx",
                static_cast<unsigned long long>(value));
  return buffer;
}

std::string hex(const void *p) { return hex(reinterpret_cast<uintptr_t>(p)); }

std::string str(Int128 value) {
  if (value < 0)
    return "-" + str(-value);
  std::string out;
  do {
    out.insert(out.begin(),
               static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  return out;
}

/// Prints `message` as one line (it may quote PTX).
void print(std::string message) {
  for (char &c : message)
    if (c == '\n' || c == '\r')
      c = ' ';
  std::fprintf(stderr, "nullcuda: %s\n", message.c_str());
}

/// Reports a failed call: counts it and prints `message`.
CUresult fail(CUresult code, const std::string &message) {
  ++state().count.errors;
  print(message);
  return code;
}

/// A failure that a GPU would also reject or fault on: an out-of-bounds
/// access or an operation that breaks a capture.
CUresult violation(CUresult code, const std::string &message) {
  ++state().count.violations;
  return fail(code, message);
}

cublasStatus_t blasFail(cublasStatus_t status, const std::string &message) {
  ++state().count.errors;
  print(message);
  return status;
}

cublasStatus_t blasViolation(cublasStatus_t status,
                             const std::string &message) {
  ++state().count.violations;
  return blasFail(status, message);
}

/// The checks of every entry point that needs an initialized driver and a
/// current context.
CUresult ready(const std::string &entry) {
  if (!state().initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED,
                entry + ": cuInit has not been called");
  if (!currentContext)
    return fail(CUDA_ERROR_INVALID_CONTEXT,
                entry + ": no context is current on this thread");
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Streams and capture.
//===----------------------------------------------------------------------===//

const char *modeName(CUstreamCaptureMode mode) {
  switch (mode) {
  case CU_STREAM_CAPTURE_MODE_GLOBAL:
    return "global";
  case CU_STREAM_CAPTURE_MODE_THREAD_LOCAL:
    return "thread-local";
  case CU_STREAM_CAPTURE_MODE_RELAXED:
    return "relaxed";
  }
  return "unknown";
}

/// Resolves the stream that work issued on `handle` goes to. Sets `capture`
/// to the stream if it is capturing (the work must be recorded, not run),
/// to null if the work runs now. Work on the legacy default stream waits
/// for every blocking stream, so it would join a capture on one of them,
/// which the driver refuses.
CUresult routeWork(const std::string &entry, CUstream handle,
                   CUstream_st *&capture) {
  State &s = state();
  capture = nullptr;
  if (handle == nullptr || handle == CU_STREAM_LEGACY) {
    for (CUstream_st *stream : s.streams)
      if (stream->capturing && !(stream->flags & CU_STREAM_NON_BLOCKING)) {
        stream->invalidated = true;
        return violation(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                         entry +
                             ": work on the legacy default stream while "
                             "the blocking stream " +
                             hex(stream) +
                             " is capturing; the capture is invalidated");
      }
    return CUDA_SUCCESS;
  }
  if (handle == CU_STREAM_PER_THREAD)
    return CUDA_SUCCESS;
  if (!s.streams.count(handle))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                entry + ": unknown stream " + hex(handle));
  CUstream_st *origin = handle->capturing ? handle : handle->joined;
  if (origin) {
    if (origin->invalidated)
      return fail(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                  entry + ": the capture on stream " + hex(origin) +
                      " was invalidated by an earlier call");
    capture = origin;
    if (handle != origin) {
      ++handle->work;
      handle->unjoined = true;
    }
  }
  return CUDA_SUCCESS;
}

/// Refuses a potentially unsafe call (allocation, free, module load) while
/// a capture that prohibits it is in progress: any global-mode capture, or
/// a thread-local one begun by this thread. As in the driver, the refusal
/// invalidates the capture.
CUresult refuseDuringCapture(const std::string &what) {
  for (CUstream_st *stream : state().streams) {
    if (!stream->capturing)
      continue;
    bool prohibits = stream->mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
                     (stream->mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
                      stream->thread == std::this_thread::get_id());
    if (!prohibits)
      continue;
    stream->invalidated = true;
    return violation(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                     what + " during a " + modeName(stream->mode) +
                         " stream capture; the capture is invalidated");
  }
  return CUDA_SUCCESS;
}

/// Work that failed its checks while being captured breaks the capture.
CUresult failCapture(CUstream_st *capture, CUresult result) {
  if (capture && result != CUDA_SUCCESS)
    capture->invalidated = true;
  return result;
}

//===----------------------------------------------------------------------===//
// Memory.
//===----------------------------------------------------------------------===//

/// The live allocation containing address `p`, or null.
const AllocationMap::value_type *findAllocation(uintptr_t p) {
  const AllocationMap &allocations = state().allocations;
  auto it = allocations.upper_bound(p);
  if (it == allocations.begin())
    return nullptr;
  --it;
  return p - it->first < it->second.bytes ? &*it : nullptr;
}

/// Whether [p, p + bytes) lies within `allocation`.
bool contains(const AllocationMap::value_type &allocation, uintptr_t p,
              uint64_t bytes) {
  return p >= allocation.first &&
         p - allocation.first <= allocation.second.bytes &&
         bytes <= allocation.second.bytes - (p - allocation.first);
}

std::string describe(const AllocationMap::value_type &allocation) {
  return "the " + std::to_string(allocation.second.bytes) +
         "-byte allocation at " + hex(allocation.first);
}

//===----------------------------------------------------------------------===//
// Ordering between streams.
//===----------------------------------------------------------------------===//
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
const void *streamKey(CUstream stream) {
  static const char legacy = 0, perThread = 0;
  if (stream == nullptr || stream == CU_STREAM_LEGACY)
    return &legacy;
  if (stream == CU_STREAM_PER_THREAD)
    return &perThread;
  return stream;
}

std::string describeStream(const void *key) {
  if (key == streamKey(nullptr))
    return "the legacy default stream";
  if (key == streamKey(CU_STREAM_PER_THREAD))
    return "the per-thread default stream";
  return "stream " + hex(key);
}

/// Whether the stream of `key` synchronizes with the legacy default stream.
bool isBlocking(const void *key) {
  if (key == streamKey(nullptr))
    return false;
  auto *stream = static_cast<CUstream_st *>(const_cast<void *>(key));
  return key == streamKey(CU_STREAM_PER_THREAD) ||
         (state().streams.count(stream) &&
          !(stream->flags & CU_STREAM_NON_BLOCKING));
}

void merge(Clock &into, const Clock &from) {
  for (const auto &[key, tick] : from)
    into[key] = std::max(into[key], tick);
}

/// Starts an operation on `stream`: its clock takes in what orders the
/// operation, and ticks. Returns the stream's key.
const void *beginOperation(CUstream stream) {
  Ordering &o = state().ordering;
  const void *key = streamKey(stream);
  const void *legacy = streamKey(nullptr);
  Clock &clock = o.streams[key];
  merge(clock, o.host);
  if (key == legacy) {
    for (const auto &[other, otherClock] : o.streams)
      if (other != key && isBlocking(other))
        merge(clock, otherClock);
  } else if (isBlocking(key)) {
    merge(clock, o.streams[legacy]);
  }
  ++clock[key];
  state().count.workStreams.insert(key);
  return key;
}

/// Records an access by the operation just begun on the stream of `key` to
/// bytes [begin, end) of the allocation holding `begin` (none: host memory,
/// not tracked), and reports each earlier conflicting access to any of
/// those bytes not ordered before it.
void access(const void *key, uintptr_t begin, uintptr_t end, bool write,
            const std::string &what) {
  const AllocationMap::value_type *allocation = findAllocation(begin);
  if (!allocation || begin >= end)
    return;
  Ordering &o = state().ordering;
  const Clock &clock = o.streams[key];
  AccessHistory &history = o.accesses[allocation->first];
  auto ordered = [&](const Access &earlier) {
    if (!earlier.stream || earlier.stream == key)
      return true;
    auto it = clock.find(earlier.stream);
    return it != clock.end() && it->second >= earlier.tick;
  };
  // Segments exactly covering [begin, end): split the ones across a bound,
  // fill the gaps.
  auto split = [&](uintptr_t at) {
    auto it = history.upper_bound(at);
    if (it == history.begin())
      return;
    --it;
    if (it->first < at && at < it->second.end) {
      Segment tail = it->second;
      it->second.end = at;
      history.emplace(at, std::move(tail));
    }
  };
  split(begin);
  split(end);
  for (uintptr_t at = begin; at < end;) {
    auto it = history.lower_bound(at);
    uintptr_t next = it == history.end() ? end : std::min(it->first, end);
    if (next > at) {
      Segment gap;
      gap.end = next;
      history.emplace(at, std::move(gap));
      at = next;
    } else {
      at = it->second.end;
    }
  }
  auto first = history.lower_bound(begin), last = history.lower_bound(end);
  // One report per stream the access races with.
  std::set<const void *> reported;
  auto report = [&](const Access &earlier, bool earlierWrites) {
    if (ordered(earlier) || !reported.insert(earlier.stream).second)
      return;
    violation(CUDA_ERROR_ILLEGAL_STATE,
              what + " on " + describeStream(key) +
                  (write ? " writes " : " reads ") + "bytes [" + hex(begin) +
                  ", " + hex(end) + ") of " + describe(*allocation) +
                  ", which " + *earlier.what + " on " +
                  describeStream(earlier.stream) +
                  (earlierWrites ? " writes" : " reads") + " at [" +
                  hex(earlier.begin) + ", " + hex(earlier.end) +
                  ") with no event or synchronization ordering the two");
  };
  for (auto it = first; it != last; ++it) {
    report(it->second.write, true);
    if (write)
      for (const auto &read : it->second.reads)
        report(read.second, false);
  }
  Access now{key, clock.at(key), begin, end,
             std::make_shared<const std::string>(what)};
  if (write) {
    history.erase(first, last);
    Segment segment;
    segment.end = end;
    segment.write = std::move(now);
    history.emplace(begin, std::move(segment));
  } else {
    for (auto it = first; it != last; ++it)
      it->second.reads[key] = now;
  }
  // Neighbours that saw the same accesses become one segment.
  auto it = history.lower_bound(begin);
  if (it != history.begin())
    --it;
  while (it != history.end() && it->first <= end) {
    auto next = std::next(it);
    if (next != history.end() && it->second.end == next->first &&
        it->second.sameState(next->second)) {
      it->second.end = next->second.end;
      history.erase(next);
    } else {
      it = next;
    }
  }
}

/// Checks the order of a kernel's memref arguments in an operation on
/// `stream`. A signature that marks written arguments (`w`) marks all of
/// them (rnn-read-only-kernel-args found every write), so the others count
/// as read; one that marks none says nothing, and every argument but those
/// loaded as read-only data counts as written.
/// `spans` are the arguments' bytes, as checkLaunch found them.
void kernelAccesses(CUstream stream, const KernelInfo &kernel,
                    const std::vector<Span> &spans, const std::string &what) {
  const void *key = beginOperation(stream);
  bool writesKnown = std::any_of(
      kernel.args.begin(), kernel.args.end(),
      [](const KernelArg &arg) { return arg.isMemref && arg.access == 'w'; });
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const KernelArg &arg = kernel.args[i];
    if (arg.isMemref && spans[i].begin != spans[i].end)
      access(key, spans[i].begin, spans[i].end,
             /*write=*/writesKnown ? arg.access == 'w' : arg.access != 'r',
             what);
  }
}

/// Checks the order of a copy of `bytes` (src read, dst written) or, with
/// `src` 0, a set, on `stream`.
void copyAccesses(CUstream stream, uintptr_t dst, uintptr_t src, size_t bytes,
                  const std::string &what) {
  const void *key = beginOperation(stream);
  if (src)
    access(key, src, src + bytes, /*write=*/false, what);
  access(key, dst, dst + bytes, /*write=*/true, what);
}

/// Bytes spanned by a column-major rows x cols matrix of `element`-byte
/// values with leading dimension ld; 0 when it is empty.
uint64_t matrixBytes(int64_t rows, int64_t cols, int64_t ld, uint64_t element) {
  if (rows <= 0 || cols <= 0)
    return 0;
  return static_cast<uint64_t>((cols - 1) * ld + rows) * element;
}

/// The operands of a GEMM and the bytes each spans.
struct GemmOperand {
  const char *name;
  const void *p;
  uint64_t bytes;
};
std::array<GemmOperand, 3> gemmOperands(const GemmCall &g) {
  bool ta = g.transa != CUBLAS_OP_N, tb = g.transb != CUBLAS_OP_N;
  uint64_t element = g.bf16 ? sizeof(uint16_t) : sizeof(float);
  return {
      {{"A", g.a, matrixBytes(ta ? g.k : g.m, ta ? g.m : g.k, g.lda, element)},
       {"B", g.b, matrixBytes(tb ? g.n : g.k, tb ? g.k : g.n, g.ldb, element)},
       {"C", g.c, matrixBytes(g.m, g.n, g.ldc, sizeof(float))}}};
}

/// Checks the order of a GEMM on `stream`: A and B read, C and the
/// handle's workspace written (cuBLAS may use all of it: two GEMMs that
/// share a workspace on unordered streams race).
void gemmAccesses(CUstream stream, const GemmCall &g, const std::string &what) {
  const void *key = beginOperation(stream);
  for (const GemmOperand &operand : gemmOperands(g)) {
    auto p = reinterpret_cast<uintptr_t>(operand.p);
    access(key, p, p + operand.bytes,
           /*write=*/operand.name == std::string("C"), what);
  }
  access(key, g.workspace, g.workspace + g.workspaceBytes, /*write=*/true,
         what + " (its workspace)");
}

/// Checks the `bytes` at `p` that a copy or a set touches. A pointer into a
/// live allocation must keep the whole range inside it. A pointer outside
/// every allocation is host memory, which only copies may name (unified
/// addressing). Sets `onDevice` when given.
CUresult checkBuffer(const std::string &entry, const char *role, uintptr_t p,
                     size_t bytes, bool hostAllowed, bool *onDevice = nullptr) {
  if (p == 0)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": null " + role + " pointer");
  const AllocationMap::value_type *allocation = findAllocation(p);
  if (onDevice)
    *onDevice = allocation != nullptr;
  if (!allocation)
    return hostAllowed ? CUDA_SUCCESS
                       : violation(CUDA_ERROR_INVALID_VALUE,
                                   entry + ": " + role + " " + hex(p) +
                                       " is not in a live device allocation");
  if (!contains(*allocation, p, bytes))
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": " + role + " bytes [" + hex(p) + ", +" +
                         std::to_string(bytes) + ") overrun " +
                         describe(*allocation));
  return CUDA_SUCCESS;
}

void fill(uintptr_t dst, unsigned value, unsigned elementBytes, size_t count) {
  auto *out = reinterpret_cast<unsigned char *>(dst);
  if (value == 0) {
    std::memset(out, 0, count * elementBytes);
    return;
  }
  uint32_t word = value;
  uint16_t half = static_cast<uint16_t>(value);
  const void *pattern = elementBytes == 4 ? static_cast<const void *>(&word)
                                          : static_cast<const void *>(&half);
  for (size_t i = 0; i < count; ++i)
    std::memcpy(out + i * elementBytes, pattern, elementBytes);
}

CUresult allocate(const std::string &entry, CUdeviceptr *dptr, size_t bytes,
                  bool managed) {
  if (CUresult r = ready(entry))
    return r;
  if (!dptr)
    return fail(CUDA_ERROR_INVALID_VALUE, entry + ": null result pointer");
  *dptr = 0;
  if (CUresult r = refuseDuringCapture(entry + " of " + std::to_string(bytes) +
                                       " bytes"))
    return r;
  if (bytes == 0)
    return fail(CUDA_ERROR_INVALID_VALUE, entry + ": zero bytes requested");
  if (bytes > SIZE_MAX - kAllocationAlignment)
    return fail(CUDA_ERROR_OUT_OF_MEMORY,
                entry + ": " + std::to_string(bytes) + " bytes");
  if (bytes > deviceMemoryBytes() - state().count.liveBytes)
    return fail(CUDA_ERROR_OUT_OF_MEMORY,
                entry + ": " + std::to_string(bytes) + " bytes, " +
                    std::to_string(state().count.liveBytes) + " of " +
                    std::to_string(deviceMemoryBytes()) + " in use");
  size_t rounded =
      (bytes + kAllocationAlignment - 1) & ~(kAllocationAlignment - 1);
  void *p = std::aligned_alloc(kAllocationAlignment, rounded);
  if (!p)
    return fail(CUDA_ERROR_OUT_OF_MEMORY,
                entry + ": " + std::to_string(bytes) + " bytes");
  State &s = state();
  s.allocations[reinterpret_cast<uintptr_t>(p)] = Allocation{bytes, managed};
  ++s.count.allocs;
  s.count.liveBytes += bytes;
  if (s.count.liveBytes > s.count.peakBytes)
    s.count.peakBytes = s.count.liveBytes;
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// PTX modules.
//===----------------------------------------------------------------------===//

bool isIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '%';
}

/// Replaces comments by spaces, keeping line breaks and string literals.
std::string stripComments(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '"') {
      size_t end = text.find('"', i + 1);
      end = end == std::string::npos ? text.size() : end + 1;
      out.append(text, i, end - i);
      i = end;
    } else if (text.compare(i, 2, "//") == 0) {
      i = std::min(text.find('\n', i), text.size());
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 2;
      out += ' ';
    } else {
      out += text[i++];
    }
  }
  return out;
}

/// Byte size of a PTX fundamental type (`.u32`, `.f64`, `.b8`, ...), or 0.
size_t ptxTypeBytes(const std::string &type) {
  if (type == ".bf16")
    return 2;
  if (type == ".f16x2" || type == ".bf16x2")
    return 4;
  if (type.size() < 3 || type.find_first_of("usbf") != 1)
    return 0;
  std::string bits = type.substr(2);
  if (bits == "8" || bits == "16" || bits == "32" || bits == "64" ||
      bits == "128")
    return std::stoul(bits) / 8;
  return 0;
}

/// Splits a parameter declaration into words, with each `[N]` its own word.
std::vector<std::string> paramWords(const std::string &text) {
  std::vector<std::string> words;
  for (size_t i = 0; i < text.size();) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    if (text[i] == '[') {
      end = std::min(text.find(']', i), text.size() - 1) + 1;
    } else {
      while (end < text.size() && text[end] != '[' &&
             !std::isspace(static_cast<unsigned char>(text[end])))
        ++end;
    }
    words.push_back(text.substr(i, end - i));
    i = end;
  }
  return words;
}

/// Parses the parameter list of `.entry NAME(...)` into `kernel`. Returns
/// an error, or an empty string.
std::string parseParams(const std::string &list, KernelInfo &kernel) {
  if (list.find_first_not_of(" \t\r\n") == std::string::npos)
    return "";
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::vector<std::string> words =
        paramWords(list.substr(start, comma - start));
    std::string where = "kernel " + kernel.name + ": parameter " +
                        std::to_string(kernel.paramBytes.size());
    if (words.empty() || words[0] != ".param")
      return where + ": expected `.param`";
    size_t typeBytes = 0, elements = 1;
    bool named = false;
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string &word = words[i];
      if (word == ".align") {
        ++i; // The alignment value.
      } else if (word == ".ptr" || word == ".global" || word == ".const" ||
                 word == ".local" || word == ".shared") {
        // Pointer annotations do not change the parameter's size.
      } else if (word[0] == '.') {
        typeBytes = ptxTypeBytes(word);
        if (typeBytes == 0)
          return where + ": unsupported type " + word;
      } else if (word[0] == '[') {
        char *end = nullptr;
        unsigned long long count = std::strtoull(word.c_str() + 1, &end, 10);
        if (!named || *end != ']' || count == 0)
          return where + ": bad array size " + word;
        elements *= count;
      } else {
        named = true;
      }
    }
    if (typeBytes == 0 || !named)
      return where + ": expected a type and a name";
    kernel.paramOffsets.push_back(kernel.totalParamBytes);
    kernel.paramBytes.push_back(typeBytes * elements);
    kernel.totalParamBytes += typeBytes * elements;
    start = comma + 1;
  }
  return "";
}

/// Parses the arguments of an rnnc.kernel line: `m<E>x<R>` (`r<E>x<R>`
/// read-only, `w<E>x<R>` written) or `s<N>`, separated by commas.
std::string parseSignature(const std::string &name, const std::string &text,
                           std::vector<KernelArg> &args) {
  std::string compact;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      compact += c;
  size_t param = 0;
  for (size_t start = 0; start < compact.size();) {
    size_t comma = std::min(compact.find(',', start), compact.size());
    std::string arg = compact.substr(start, comma - start);
    std::string bad = "rnnc.kernel " + name + ": bad argument '" + arg +
                      "' (expected m<bytes>x<rank> (or r, w) or s<bytes>)";
    KernelArg out;
    out.firstParam = param;
    char *end = nullptr;
    if (arg.size() >= 2 && (arg[0] == 'm' || arg[0] == 'r' || arg[0] == 'w')) {
      out.isMemref = true;
      out.access = arg[0];
      unsigned long long bytes = std::strtoull(arg.c_str() + 1, &end, 10);
      if (end == arg.c_str() + 1 || *end != 'x' || bytes == 0 || bytes > 64)
        return bad;
      const char *rankText = end + 1;
      unsigned long long rank = std::strtoull(rankText, &end, 10);
      if (end == rankText || *end != '\0' || rank > 32)
        return bad;
      out.elementBytes = static_cast<unsigned>(bytes);
      out.rank = static_cast<unsigned>(rank);
      param += 3 + 2 * out.rank;
    } else if (arg.size() >= 2 && arg[0] == 's') {
      unsigned long long bytes = std::strtoull(arg.c_str() + 1, &end, 10);
      if (*end != '\0' || bytes == 0 || bytes > 4096)
        return bad;
      out.scalarBytes = static_cast<unsigned>(bytes);
      param += 1;
    } else {
      return bad;
    }
    args.push_back(out);
    start = comma + 1;
  }
  return "";
}

/// Checks that `kernel`'s signature expands to exactly its PTX parameters.
std::string matchSignature(const KernelInfo &kernel) {
  size_t expanded = 0;
  for (const KernelArg &arg : kernel.args)
    expanded += arg.isMemref ? 3 + 2 * arg.rank : 1;
  if (expanded != kernel.paramBytes.size())
    return "kernel " + kernel.name + ": the rnnc.kernel signature expands to " +
           std::to_string(expanded) + " parameters, the PTX .entry has " +
           std::to_string(kernel.paramBytes.size());
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const KernelArg &arg = kernel.args[i];
    size_t count = arg.isMemref ? 3 + 2 * arg.rank : 1;
    size_t bytes = arg.isMemref ? 8 : arg.scalarBytes;
    for (size_t p = arg.firstParam; p < arg.firstParam + count; ++p)
      if (kernel.paramBytes[p] != bytes)
        return "kernel " + kernel.name + ": parameter " + std::to_string(p) +
               " (argument " + std::to_string(i) + ") is " +
               std::to_string(bytes) + " bytes in the rnnc.kernel signature, " +
               std::to_string(kernel.paramBytes[p]) + " in the PTX";
  }
  return "";
}

/// Reads the kernels of a PTX module and their rnnc.kernel signatures.
/// Returns an error, or an empty string.
std::string
parseModule(const void *image,
            std::map<std::string, std::shared_ptr<KernelInfo>> &kernels) {
  const auto *bytes = static_cast<const unsigned char *>(image);
  if (bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F')
    return "the image is a cubin; only PTX text is supported";
  if (bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 &&
      bytes[3] == 0xba)
    return "the image is a fatbinary; only PTX text is supported";
  std::string text(static_cast<const char *>(image));
  std::string code = stripComments(text);
  if (code.find(".version") == std::string::npos)
    return "not PTX text (no .version directive)";

  for (size_t at = code.find(".entry"); at != std::string::npos;
       at = code.find(".entry", at + 6)) {
    if ((at > 0 && !std::isspace(static_cast<unsigned char>(code[at - 1]))) ||
        at + 6 >= code.size() ||
        !std::isspace(static_cast<unsigned char>(code[at + 6])))
      continue;
    size_t begin = code.find_first_not_of(" \t\r\n", at + 6);
    size_t end = begin;
    while (end < code.size() && isIdentifierChar(code[end]))
      ++end;
    if (begin == std::string::npos || end == begin)
      return "an .entry without a name";
    auto kernel = std::make_shared<KernelInfo>();
    kernel->name = code.substr(begin, end - begin);
    if (kernels.count(kernel->name))
      return "kernel " + kernel->name + " is defined twice";
    size_t open = code.find_first_not_of(" \t\r\n", end);
    if (open != std::string::npos && code[open] == '(') {
      size_t close = code.find(')', open);
      if (close == std::string::npos)
        return "kernel " + kernel->name + ": unterminated parameter list";
      std::string error =
          parseParams(code.substr(open + 1, close - open - 1), *kernel);
      if (!error.empty())
        return error;
    }
    kernels[kernel->name] = kernel;
  }

  // Signatures: `// rnnc.kernel NAME ARG,ARG,...`, one line per kernel.
  for (size_t line = 0; line < text.size();) {
    size_t next = std::min(text.find('\n', line), text.size());
    size_t comment = text.find("//", line);
    if (comment < next) {
      size_t word = text.find_first_not_of(" \t", comment + 2);
      const std::string tag = "rnnc.kernel";
      if (word < next && text.compare(word, tag.size(), tag) == 0 &&
          word + tag.size() < next &&
          std::isspace(static_cast<unsigned char>(text[word + tag.size()]))) {
        size_t nameBegin =
            std::min(text.find_first_not_of(" \t", word + tag.size()), next);
        size_t nameEnd = nameBegin;
        while (nameEnd < next && isIdentifierChar(text[nameEnd]))
          ++nameEnd;
        std::string name = text.substr(nameBegin, nameEnd - nameBegin);
        auto it = kernels.find(name);
        if (name.empty() || it == kernels.end())
          return "rnnc.kernel line for '" + name +
                 "', which the PTX does not define";
        KernelInfo &kernel = *it->second;
        if (kernel.hasSignature)
          return "kernel " + name + " has two rnnc.kernel lines";
        std::string error = parseSignature(
            name, text.substr(nameEnd, next - nameEnd), kernel.args);
        if (error.empty())
          error = matchSignature(kernel);
        if (!error.empty())
          return error;
        kernel.hasSignature = true;
      }
    }
    line = next + 1;
  }
  return "";
}

CUresult loadModule(const std::string &entry, CUmodule *module,
                    const void *image, char *log, size_t logBytes) {
  if (log && logBytes > 0)
    log[0] = '\0';
  if (CUresult r = ready(entry))
    return r;
  if (!module || !image)
    return fail(CUDA_ERROR_INVALID_VALUE, entry + ": null argument");
  *module = nullptr;
  if (CUresult r = refuseDuringCapture(entry))
    return r;
  std::map<std::string, std::shared_ptr<KernelInfo>> kernels;
  std::string error = parseModule(image, kernels);
  if (!error.empty()) {
    if (log && logBytes > 0)
      std::snprintf(log, logBytes, "%s", error.c_str());
    return fail(CUDA_ERROR_INVALID_PTX, entry + ": " + error);
  }
  State &s = state();
  auto *loaded = new CUmod_st();
  for (auto &kernel : kernels) {
    auto function = std::make_unique<CUfunc_st>();
    function->info = kernel.second;
    s.functions.insert(function.get());
    loaded->functions[kernel.first] = std::move(function);
  }
  s.modules.insert(loaded);
  ++s.count.moduleLoads;
  *module = loaded;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Kernel launches.
//===----------------------------------------------------------------------===//

uint64_t paramWord(const void *const *params, size_t i) {
  uint64_t value;
  std::memcpy(&value, params[i], sizeof(value));
  return value;
}

/// Checks one memref argument of a launch against the live allocations;
/// sets `span` to the bytes it spans.
CUresult checkMemref(const std::string &entry, size_t index,
                     const KernelArg &arg, const void *const *params,
                     Span &span) {
  span = Span();
  size_t p = arg.firstParam;
  uintptr_t allocated = paramWord(params, p);
  uintptr_t aligned = paramWord(params, p + 1);
  auto offset = static_cast<int64_t>(paramWord(params, p + 2));
  std::vector<int64_t> sizes, strides;
  std::string sizeText, strideText;
  bool negative = offset < 0, empty = false;
  for (unsigned k = 0; k < arg.rank; ++k) {
    sizes.push_back(static_cast<int64_t>(paramWord(params, p + 3 + k)));
    strides.push_back(
        static_cast<int64_t>(paramWord(params, p + 3 + arg.rank + k)));
    sizeText += (k ? ", " : "") + std::to_string(sizes[k]);
    strideText += (k ? ", " : "") + std::to_string(strides[k]);
    negative = negative || sizes[k] < 0 || strides[k] < 0;
    empty = empty || sizes[k] == 0;
  }
  std::string where =
      entry + ": argument " + std::to_string(index) + " (memref of rank " +
      std::to_string(arg.rank) + ", " + std::to_string(arg.elementBytes) +
      "-byte elements, offset " + std::to_string(offset) + ", sizes [" +
      sizeText + "], strides [" + strideText + "])";
  if (negative)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": negative offset, size or stride");
  // An empty buffer may have no memory at all.
  if (empty && allocated == 0 && aligned == 0)
    return CUDA_SUCCESS;
  const AllocationMap::value_type *allocation = findAllocation(aligned);
  if (!allocation)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": aligned pointer " + hex(aligned) +
                         " is not in a live device allocation");
  if (findAllocation(allocated) != allocation)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": allocated pointer " + hex(allocated) +
                         " is not in " + describe(*allocation) +
                         " of the aligned pointer " + hex(aligned));
  if (empty)
    return CUDA_SUCCESS;
  // The element range is [offset, last]. Each term is below 2^126 and the
  // sum stops growing past 2^100, so nothing overflows.
  const Int128 cap = Int128(1) << 100;
  Int128 last = offset;
  for (unsigned k = 0; k < arg.rank && last <= cap; ++k)
    last += Int128(sizes[k] - 1) * strides[k];
  if (last > cap)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": spans more than 2^100 elements");
  Int128 base = aligned - allocation->first;
  Int128 begin = base + Int128(offset) * arg.elementBytes;
  Int128 end = base + (last + 1) * arg.elementBytes;
  if (end > Int128(allocation->second.bytes))
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": spans bytes [" + str(begin) + ", " + str(end) +
                         ") of " + describe(*allocation));
  span.begin = allocation->first + static_cast<uintptr_t>(begin);
  span.end = allocation->first + static_cast<uintptr_t>(end);
  return CUDA_SUCCESS;
}

/// Checks a launch of `kernel`, eager, captured or replayed: dimensions,
/// shared memory, and every memref argument. `entry` names the kernel. Sets
/// `spans` to the bytes of each argument (empty for a scalar).
CUresult checkLaunch(const std::string &entry, const KernelInfo &kernel,
                     const LaunchConfig &c, const void *const *params,
                     std::vector<Span> &spans) {
  const unsigned *g = c.grid, *b = c.block;
  std::string dims = "grid (" + std::to_string(g[0]) + ", " +
                     std::to_string(g[1]) + ", " + std::to_string(g[2]) +
                     "), block (" + std::to_string(b[0]) + ", " +
                     std::to_string(b[1]) + ", " + std::to_string(b[2]) + ")";
  uint64_t threads = uint64_t(b[0]) * b[1] * b[2];
  if (g[0] < 1 || g[1] < 1 || g[2] < 1 || g[0] > kMaxGridDimX ||
      g[1] > kMaxGridDimYZ || g[2] > kMaxGridDimYZ)
    return violation(CUDA_ERROR_INVALID_VALUE, entry + ": bad " + dims);
  if (b[0] < 1 || b[1] < 1 || b[2] < 1 || b[0] > kMaxThreadsPerBlock ||
      b[1] > kMaxThreadsPerBlock || b[2] > kMaxBlockDimZ ||
      threads > kMaxThreadsPerBlock)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": bad " + dims + " (at most " +
                         std::to_string(kMaxThreadsPerBlock) +
                         " threads per block)");
  if (c.sharedBytes > static_cast<unsigned>(c.maxDynamicShared))
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": " + std::to_string(c.sharedBytes) +
                         " bytes of dynamic shared memory, the kernel allows " +
                         std::to_string(c.maxDynamicShared) +
                         " (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  if (!kernel.hasSignature)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": the kernel has no rnnc.kernel signature, so "
                             "its arguments cannot be checked");
  if (!kernel.paramBytes.empty() && !params)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": null kernelParams for " +
                         std::to_string(kernel.paramBytes.size()) +
                         " parameters");
  for (size_t i = 0; i < kernel.paramBytes.size(); ++i)
    if (!params[i])
      return violation(CUDA_ERROR_INVALID_VALUE, entry + ": kernelParams[" +
                                                     std::to_string(i) +
                                                     "] is null");
  spans.assign(kernel.args.size(), Span());
  for (size_t i = 0; i < kernel.args.size(); ++i)
    if (kernel.args[i].isMemref)
      if (CUresult r = checkMemref(entry, i, kernel.args[i], params, spans[i]))
        return r;
  // What the compiler claims of read-only arguments: no argument the
  // kernel writes overlaps them, or their loads would not be invariant.
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    if (kernel.args[i].access != 'r' || spans[i].begin == spans[i].end)
      continue;
    for (size_t j = 0; j < kernel.args.size(); ++j)
      if (kernel.args[j].access == 'w' && spans[j].begin < spans[i].end &&
          spans[i].begin < spans[j].end)
        return violation(CUDA_ERROR_INVALID_VALUE,
                         entry + ": argument " + std::to_string(i) +
                             ", loaded as read-only data, spans bytes [" +
                             hex(spans[i].begin) + ", " + hex(spans[i].end) +
                             "), which overlap argument " + std::to_string(j) +
                             "'s [" + hex(spans[j].begin) + ", " +
                             hex(spans[j].end) + "), which the kernel writes");
  }
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// SGEMM.
//===----------------------------------------------------------------------===//

/// Checks that each operand lies wholly in one live device allocation.
cublasStatus_t checkGemmOperands(const std::string &entry, const GemmCall &g) {
  for (const GemmOperand &operand : gemmOperands(g)) {
    if (operand.bytes == 0)
      continue;
    auto p = reinterpret_cast<uintptr_t>(operand.p);
    const AllocationMap::value_type *allocation = findAllocation(p);
    std::string where =
        entry + ": " + operand.name + " (m=" + std::to_string(g.m) +
        " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
        ", lda=" + std::to_string(g.lda) + " ldb=" + std::to_string(g.ldb) +
        " ldc=" + std::to_string(g.ldc) + ")";
    if (!allocation)
      return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                           where + " at " + hex(p) +
                               " is not in a live device allocation");
    if (!contains(*allocation, p, operand.bytes))
      return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                           where + ": bytes [" + hex(p) + ", +" +
                               std::to_string(operand.bytes) + ") overrun " +
                               describe(*allocation));
  }
  // cuBLAS's default workspace pool may allocate inside a capture and is
  // shared by every stream of the handle: a caller must set its own (or
  // none, size 0) after each cublasSetStream, which drops it.
  if (!g.workspaceSet)
    return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                         entry + ": no workspace on stream " +
                             hex(g.handle->stream) +
                             " (cublasSetStream resets it to the default "
                             "pool; call cublasSetWorkspace after it)");
  if (g.workspace && !findAllocation(g.workspace))
    return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                         entry + ": the handle's workspace " +
                             hex(g.workspace) + " was freed");
  return CUBLAS_STATUS_SUCCESS;
}

void runGemm(const GemmCall &g) {
  if (g.m == 0 || g.n == 0)
    return;
  if (g.k == 0) {
    // C = beta * C; with beta = 0, C is not read (it may hold NaNs).
    for (int j = 0; j < g.n; ++j)
      for (int i = 0; i < g.m; ++i) {
        float &c = g.c[static_cast<size_t>(j) * g.ldc + i];
        c = g.beta == 0.0f ? 0.0f : g.beta * c;
      }
    return;
  }
  auto op = [](cublasOperation_t o) {
    return o == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  };
  if (!g.bf16) {
    cblas_sgemm(CblasColMajor, op(g.transa), op(g.transb), g.m, g.n, g.k,
                g.alpha, static_cast<const float *>(g.a), g.lda,
                static_cast<const float *>(g.b), g.ldb, g.beta, g.c, g.ldc);
    return;
  }
  // bf16 operands widened to f32 (exact), then the f32 GEMM: the products
  // are exact and the sums f32, as on the tensor cores.
  ++state().count.bf16Gemms;
  auto widen = [](const void *p, int64_t rows, int64_t cols, int64_t ld) {
    auto *bits = static_cast<const uint16_t *>(p);
    std::vector<float> out(static_cast<size_t>(cols * ld));
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i) {
        uint32_t wide = static_cast<uint32_t>(bits[j * ld + i]) << 16;
        std::memcpy(&out[j * ld + i], &wide, sizeof(wide));
      }
    return out;
  };
  bool ta = g.transa != CUBLAS_OP_N, tb = g.transb != CUBLAS_OP_N;
  std::vector<float> a = widen(g.a, ta ? g.k : g.m, ta ? g.m : g.k, g.lda);
  std::vector<float> b = widen(g.b, tb ? g.n : g.k, tb ? g.k : g.n, g.ldb);
  cblas_sgemm(CblasColMajor, op(g.transa), op(g.transb), g.m, g.n, g.k, g.alpha,
              a.data(), g.lda, b.data(), g.ldb, g.beta, g.c, g.ldc);
}

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

//===----------------------------------------------------------------------===//
// Error names.
//===----------------------------------------------------------------------===//

struct ErrorText {
  CUresult code;
  const char *name;
  const char *text;
};

const ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
     "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking "
     "stream"},
    {CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
     "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "attempt to terminate a thread-local capture sequence from another "
     "thread"},
};

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

const ErrorText *findError(CUresult code) {
  for (const ErrorText &error : kErrors)
    if (error.code == code)
      return &error;
  return nullptr;
}

} // namespace

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
  *count = 1;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  std::lock_guard<std::mutex> lock(enter());
  if (!state().initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuDeviceGet: no cuInit");
  if (!device)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGet: null result");
  if (ordinal != 0)
    return fail(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet: device " +
                                               std::to_string(ordinal) +
                                               " (there is only device 0)");
  *device = 0;
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
  if (dev != 0)
    return fail(CUDA_ERROR_INVALID_DEVICE,
                "cuDevicePrimaryCtxRetain: device " + std::to_string(dev));
  ++s.primaryRetains;
  *pctx = &s.primaryContext;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  std::lock_guard<std::mutex> lock(enter());
  State &s = state();
  if (!s.initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED,
                "cuDevicePrimaryCtxRelease: no cuInit");
  if (dev != 0)
    return fail(CUDA_ERROR_INVALID_DEVICE,
                "cuDevicePrimaryCtxRelease: device " + std::to_string(dev));
  if (s.primaryRetains == 0)
    return fail(CUDA_ERROR_INVALID_CONTEXT,
                "cuDevicePrimaryCtxRelease: the primary context is not "
                "retained");
  --s.primaryRetains;
  return CUDA_SUCCESS;
}

NULLCUDA_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(enter());
  State &s = state();
  if (!s.initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuCtxSetCurrent: no cuInit");
  if (ctx && ctx != &s.primaryContext)
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
  if (hStream == nullptr || hStream == CU_STREAM_LEGACY ||
      hStream == CU_STREAM_PER_THREAD) {
    *pctx = currentContext;
    return CUDA_SUCCESS;
  }
  if (!s.streams.count(hStream))
    return fail(CUDA_ERROR_INVALID_HANDLE,
                "cuStreamGetCtx: unknown stream " + hex(hStream));
  *pctx = &s.primaryContext;
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

//===----------------------------------------------------------------------===//
// cuBLAS entry points.
//===----------------------------------------------------------------------===//

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI
cublasCreate(cublasHandle_t *handle) {
  std::lock_guard<std::mutex> lock(enter());
  if (!handle)
    return blasFail(CUBLAS_STATUS_INVALID_VALUE, "cublasCreate: null result");
  // cuBLAS allocates device memory while it starts.
  if (refuseDuringCapture("cublasCreate"))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  auto *context = new cublasContext();
  state().blasHandles.insert(context);
  *handle = context;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI
cublasDestroy(cublasHandle_t handle) {
  std::lock_guard<std::mutex> lock(enter());
  if (!state().blasHandles.erase(handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    "cublasDestroy: unknown handle " + hex(handle));
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI
cublasSetStream(cublasHandle_t handle, cudaStream_t streamId) {
  std::lock_guard<std::mutex> lock(enter());
  State &s = state();
  if (!s.blasHandles.count(handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    "cublasSetStream: unknown handle " + hex(handle));
  bool isDefault = streamId == nullptr || streamId == CU_STREAM_LEGACY ||
                   streamId == CU_STREAM_PER_THREAD;
  if (!isDefault && !s.streams.count(streamId))
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    "cublasSetStream: unknown stream " + hex(streamId));
  handle->stream = streamId;
  // As documented for cuBLAS, setting the stream drops a user workspace.
  handle->workspace = 0;
  handle->workspaceBytes = 0;
  handle->workspaceSet = false;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI cublasSetWorkspace(
    cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cublasSetWorkspace";
  if (!state().blasHandles.count(handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    entry + ": unknown handle " + hex(handle));
  auto p = reinterpret_cast<uintptr_t>(workspace);
  if (workspaceSizeInBytes > 0) {
    if (p % kAllocationAlignment != 0)
      return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                      entry + ": workspace " + hex(p) +
                          " is not 256-byte aligned");
    const AllocationMap::value_type *allocation = findAllocation(p);
    if (!allocation || !contains(*allocation, p, workspaceSizeInBytes))
      return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                           entry + ": " + std::to_string(workspaceSizeInBytes) +
                               " bytes at " + hex(p) +
                               " are not inside one live device allocation");
  }
  handle->workspace = workspaceSizeInBytes > 0 ? p : 0;
  handle->workspaceBytes = workspaceSizeInBytes;
  handle->workspaceSet = true;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI
cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  std::lock_guard<std::mutex> lock(enter());
  if (!state().blasHandles.count(handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    "cublasSetMathMode: unknown handle " + hex(handle));
  unsigned base = mode & ~static_cast<unsigned>(
                             CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  if (base != CUBLAS_DEFAULT_MATH && base != CUBLAS_TENSOR_OP_MATH &&
      base != CUBLAS_PEDANTIC_MATH && base != CUBLAS_TF32_TENSOR_OP_MATH &&
      base != CUBLAS_FP32_EMULATED_BF16X9_MATH &&
      base != CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    "cublasSetMathMode: unknown mode " + std::to_string(mode));
  // The CPU computes in FP32 whatever the mode; it is only remembered.
  handle->mathMode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT const char *CUBLASWINAPI
cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

} // extern "C"

namespace {

/// cublasSgemm and cublasGemmEx after their own checks of the types:
/// cuBLAS's argument checks, then the GEMM on the handle's stream (or into
/// its capture).
cublasStatus_t gemm(const std::string &entry, GemmCall g, const float *alpha,
                    const float *beta) {
  State &s = state();
  if (!s.blasHandles.count(g.handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    entry + ": unknown handle " + hex(g.handle));
  // cuBLAS's own argument checks.
  auto validOp = [](cublasOperation_t op) {
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
  };
  int m = g.m, n = g.n, k = g.k;
  std::string args =
      " (m=" + std::to_string(m) + " n=" + std::to_string(n) +
      " k=" + std::to_string(k) + ", lda=" + std::to_string(g.lda) +
      " ldb=" + std::to_string(g.ldb) + " ldc=" + std::to_string(g.ldc) + ")";
  if (!validOp(g.transa) || !validOp(g.transb))
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    entry + ": invalid operation " + std::to_string(g.transa) +
                        "/" + std::to_string(g.transb));
  if (m < 0 || n < 0 || k < 0)
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    entry + ": negative size" + args);
  if (g.lda < std::max(1, g.transa == CUBLAS_OP_N ? m : k) ||
      g.ldb < std::max(1, g.transb == CUBLAS_OP_N ? k : n) ||
      g.ldc < std::max(1, m))
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    entry + ": leading dimension too small" + args);
  if (!alpha || !beta)
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    entry + ": null alpha or beta");
  // CUBLAS_POINTER_MODE_HOST: alpha and beta are read on the host now.
  for (const float *scalar : {alpha, beta}) {
    const AllocationMap::value_type *allocation =
        findAllocation(reinterpret_cast<uintptr_t>(scalar));
    if (allocation && !allocation->second.managed)
      return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                           entry + ": alpha or beta " + hex(scalar) +
                               " is device memory, the pointer mode is host");
  }
  g.alpha = *alpha;
  g.beta = *beta;
  g.workspace = g.handle->workspace;
  g.workspaceBytes = g.handle->workspaceBytes;
  g.workspaceSet = g.handle->workspaceSet;
  CUstream_st *capture = nullptr;
  if (routeWork(entry, g.handle->stream, capture) != CUDA_SUCCESS)
    return CUBLAS_STATUS_EXECUTION_FAILED;
  if (cublasStatus_t st = checkGemmOperands(entry, g)) {
    if (capture)
      capture->invalidated = true;
    return st;
  }
  if (capture) {
    Node node(NodeKind::Gemm);
    node.gemm = g;
    capture->nodes.push_back(std::move(node));
    return CUBLAS_STATUS_SUCCESS;
  }
  gemmAccesses(g.handle->stream, g, entry);
  runGemm(g);
  ++s.count.gemms;
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace

extern "C" {

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI cublasSgemm(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const float *alpha, const float *A, int lda,
    const float *B, int ldb, const float *beta, float *C, int ldc) {
  std::lock_guard<std::mutex> lock(enter());
  GemmCall g{handle, transa, transb, m,   n,    k, 0.0f,
             A,      lda,    B,      ldb, 0.0f, C, ldc};
  return gemm("cublasSgemm", g, alpha, beta);
}

/// The one mixed-precision form the runtime calls: bf16 A and B, f32 C and
/// f32 compute with host-side f32 alpha and beta. Any other combination is
/// CUBLAS_STATUS_NOT_SUPPORTED, named.
NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI cublasGemmEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, const void *B, cudaDataType Btype, int ldb, const void *beta,
    void *C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cublasGemmEx";
  if (Atype != CUDA_R_16BF || Btype != CUDA_R_16BF || Ctype != CUDA_R_32F ||
      computeType != CUBLAS_COMPUTE_32F)
    return blasFail(CUBLAS_STATUS_NOT_SUPPORTED,
                    entry +
                        ": the null device runs bf16 A and B with f32 C "
                        "and CUBLAS_COMPUTE_32F only (types " +
                        std::to_string(Atype) + "/" + std::to_string(Btype) +
                        "/" + std::to_string(Ctype) + ", compute " +
                        std::to_string(computeType) + ")");
  if (algo != CUBLAS_GEMM_DEFAULT)
    return blasFail(CUBLAS_STATUS_NOT_SUPPORTED,
                    entry + ": algorithm " + std::to_string(algo) +
                        " (the runtime asks for CUBLAS_GEMM_DEFAULT)");
  GemmCall g{handle,
             transa,
             transb,
             m,
             n,
             k,
             0.0f,
             A,
             lda,
             B,
             ldb,
             0.0f,
             static_cast<float *>(C),
             ldc,
             /*bf16=*/true};
  return gemm(entry, g, static_cast<const float *>(alpha),
              static_cast<const float *>(beta));
}

} // extern "C"
