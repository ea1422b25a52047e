//===- Streams.cpp - streams, capture, memory and their order -------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//

#include "NullCuda.h"

namespace nullcuda {

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
                     size_t bytes, bool hostAllowed, bool *onDevice) {
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
  s.allocations[reinterpret_cast<uintptr_t>(p)] =
      Allocation{bytes, managed, currentContext};
  ++s.count.allocs;
  s.count.liveBytes += bytes;
  if (s.count.liveBytes > s.count.peakBytes)
    s.count.peakBytes = s.count.liveBytes;
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

} // namespace nullcuda
