//===- JaxFFI.cpp - rnnc's entry points as XLA FFI handlers ---------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// librnnc_jax.so exports the XLA FFI handlers through which rnnc.jax calls
// a compiled library's C entry point (rnnc_<f>, _fwd, _bwd) on XLA's
// buffers: `rnnc_xla_call` for a library of the cpu target and
// `rnnc_xla_call_cuda` for one of the cuda target. The attribute `order`
// maps each buffer the entry point takes, in the manifest's order, to an
// operand of the call (k >= 0) or to a result (k < 0: result -k - 1). The
// results are the entry point's outputs, gradients, saved region and
// scratch arena, which XLA allocates; a buffer the entry point writes in
// place (the saved region in the backward) is a result aliased to its
// operand. The attributes `seq_len` and `batch` are the call's T and B for
// the entry point of a library of every shape (which takes them first), 0
// for a library of one shape.
//
// A grouped call (rnnc.jax's rule for `jax.vmap` over per-seed weights)
// runs the entry point once per group, in order: the attribute `groups` is
// their number (0 for a plain call, which runs it once), and `strided`
// marks, per entry of `order`, the buffers that hold one slice per group
// (along their leading axis); the others, the shared operands and the
// scratch arena, are the same buffer for every group. One FFI call serves
// every seed, rather than a loop in XLA's program of one call per seed.
// The cpu handler's attribute `staging` names a result (-1: none) into
// which it copies each group's slices of the mapped operands before the
// group's call, which reads the copies: the library's products of few rows
// read weights that are not in the cache at a fraction of the speed of a
// copy, which brings them there.
//
// The handlers' attribute `entry` is the entry point's address, and
// `library` the library's directory, which names it in the handler's
// errors and makes a computation of one library differ from one of
// another whose entry point lies at the same address (as in another
// process), for any cache of compiled computations keyed by them. The cpu
// library runs on the calling thread. A cuda library serves every device,
// through a context per device: the cuda handler's attributes
// `context_create` and `last_error` are the addresses of the library's
// rnnc_context_create and rnnc_last_error, and the handler calls the entry
// point with the context of the device XLA runs the call on, made at the
// first call there and kept for the process (a cuda library is never
// unloaded), and with XLA's stream, where the library enqueues its work
// without waiting. Neither handler allocates device memory or waits. The
// cuda handler is not marked compatible with command buffers: a library's
// first call on a device loads its kernels and creates cuBLAS's handle,
// which a stream capture forbids.
//
// Built against the FFI headers of the jaxlib found when the build is
// configured (jax.ffi.include_dir()); the handlers need no CUDA headers, a
// stream being an opaque pointer to the library.
//
//===----------------------------------------------------------------------===//

#include "xla/ffi/api/ffi.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ffi = xla::ffi;

namespace {
using EntryPoint = int32_t (*)(void *const *, void *);
using ShapedEntryPoint = int32_t (*)(int64_t, int64_t, void *const *, void *);
/// A cuda library's entry points take its context first.
using CudaEntryPoint = int32_t (*)(void *, void *const *, void *);
using ShapedCudaEntryPoint = int32_t (*)(void *, int64_t, int64_t,
                                         void *const *, void *);
using ContextCreate = void *(*)(int32_t);
using LastError = const char *(*)();

/// The context of each cuda library (by its rnnc_context_create) on each
/// device, made at the first call there.
std::mutex contextsMutex;
std::map<std::pair<int64_t, int32_t>, void *> contexts;

/// The context of the library whose rnnc_context_create is at `create` on
/// `device`; null on failure.
void *contextFor(int64_t create, int32_t device) {
  std::lock_guard<std::mutex> lock(contextsMutex);
  void *&context = contexts[{create, device}];
  if (!context)
    context = reinterpret_cast<ContextCreate>(create)(device);
  return context;
}

/// `bytes` rounded up to a cache line, where each staged operand starts.
size_t alignTo(size_t bytes) { return (bytes + 63) / 64 * 64; }

/// The buffers of a call: for each the entry point takes, in its order,
/// the address of the first group's slice and the step from one group's
/// slice to the next in bytes (0 for one that serves every group), and
/// whether it is an operand the call stages.
struct Buffers {
  std::vector<void *> data;
  std::vector<size_t> steps;
  std::vector<bool> staged;
  /// Where the cpu handler copies each group's staged operands (null when
  /// it stages none).
  char *staging = nullptr;
};

/// Gathers the buffers of a call of `groups` groups from XLA's operands
/// and results in the order `order` gives. Where `staging` names a result
/// (>= 0), the mapped operands are staged in it.
ffi::Error gatherBuffers(ffi::RemainingArgs args, ffi::RemainingRets rets,
                         ffi::Span<const int64_t> order, int64_t groups,
                         ffi::Span<const int64_t> strided, int64_t staging,
                         Buffers &buffers) {
  if (groups < 0 || (groups > 0 && strided.size() != order.size()))
    return ffi::Error::InvalidArgument(
        "rnnc: a grouped call marks each of its buffers");
  for (size_t i = 0; i < order.size(); ++i) {
    int64_t k = order[i];
    void *data;
    size_t bytes;
    if (k >= 0) {
      if (static_cast<size_t>(k) >= args.size())
        return ffi::Error::InvalidArgument("rnnc: operand " +
                                           std::to_string(k) + " missing");
      ffi::ErrorOr<ffi::AnyBuffer> buffer = args.get<ffi::AnyBuffer>(k);
      if (buffer.has_error())
        return buffer.error();
      data = buffer.value().untyped_data();
      bytes = buffer.value().size_bytes();
    } else {
      size_t index = static_cast<size_t>(-k - 1);
      if (index >= rets.size())
        return ffi::Error::InvalidArgument("rnnc: result " +
                                           std::to_string(index) + " missing");
      ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> buffer =
          rets.get<ffi::AnyBuffer>(index);
      if (buffer.has_error())
        return buffer.error();
      data = buffer.value()->untyped_data();
      bytes = buffer.value()->size_bytes();
    }
    size_t step = 0;
    if (groups > 0 && strided[i]) {
      if (bytes % static_cast<size_t>(groups) != 0)
        return ffi::Error::InvalidArgument("rnnc: buffer " + std::to_string(i) +
                                           " of " + std::to_string(bytes) +
                                           " bytes is not " +
                                           std::to_string(groups) + " groups");
      step = bytes / static_cast<size_t>(groups);
    }
    buffers.data.push_back(data);
    buffers.steps.push_back(step);
    buffers.staged.push_back(staging >= 0 && k >= 0 && step > 0);
  }
  if (staging >= 0) {
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> buffer =
        rets.get<ffi::AnyBuffer>(staging);
    if (buffer.has_error())
      return buffer.error();
    size_t needed = 0;
    for (size_t i = 0; i < buffers.steps.size(); ++i)
      if (buffers.staged[i])
        needed += alignTo(buffers.steps[i]);
    if (buffer.value()->size_bytes() < needed)
      return ffi::Error::InvalidArgument(
          "rnnc: the staging buffer is smaller than the " +
          std::to_string(needed) + " bytes it stages");
    buffers.staging = static_cast<char *>(buffer.value()->untyped_data());
  }
  return ffi::Error::Success();
}

/// Runs `call` on the buffers of each group in turn (once for a plain
/// call); the first failure ends the loop. A staged operand's slice is
/// copied to the staging buffer first, and the entry point reads the copy.
template <typename Call>
int32_t forEachGroup(int64_t groups, const Buffers &buffers, Call call) {
  std::vector<void *> group(buffers.data);
  for (int64_t g = 0; g < std::max<int64_t>(groups, 1); ++g) {
    char *stage = buffers.staging;
    for (size_t i = 0; i < group.size(); ++i) {
      size_t step = buffers.steps[i];
      char *slice = static_cast<char *>(buffers.data[i]) + g * step;
      group[i] = slice;
      if (!buffers.staged[i])
        continue;
      group[i] = static_cast<char *>(std::memcpy(stage, slice, step));
      stage += alignTo(step);
    }
    if (int32_t status = call(group.data()))
      return status;
  }
  return 0;
}

/// The message of a failed call of the library in `library`, with the
/// library's when `lastError` is given.
ffi::Error failure(std::string_view library, const std::string &what,
                   LastError lastError) {
  std::string message = "rnnc: " + std::string(library) + ": " + what;
  if (lastError)
    message += std::string(": ") + lastError();
  return ffi::Error::Internal(message);
}

ffi::Error callOnCpu(ffi::RemainingArgs args, ffi::RemainingRets rets,
                     int64_t entry, std::string_view library,
                     ffi::Span<const int64_t> order, int64_t seqLen,
                     int64_t batch, int64_t groups,
                     ffi::Span<const int64_t> strided, int64_t staging) {
  Buffers buffers;
  if (ffi::Error error =
          gatherBuffers(args, rets, order, groups, strided, staging, buffers);
      error.failure())
    return error;
  int32_t status = forEachGroup(groups, buffers, [&](void *const *group) {
    return seqLen == 0 ? reinterpret_cast<EntryPoint>(entry)(group, nullptr)
                       : reinterpret_cast<ShapedEntryPoint>(entry)(
                             seqLen, batch, group, nullptr);
  });
  return status == 0
             ? ffi::Error::Success()
             : failure(library, "the library's entry point failed", nullptr);
}

ffi::Error callOnCuda(void *stream, int32_t device, ffi::RemainingArgs args,
                      ffi::RemainingRets rets, int64_t entry,
                      std::string_view library, int64_t contextCreate,
                      int64_t lastErrorAddress, ffi::Span<const int64_t> order,
                      int64_t seqLen, int64_t batch, int64_t groups,
                      ffi::Span<const int64_t> strided) {
  auto lastError = reinterpret_cast<LastError>(lastErrorAddress);
  void *context = contextFor(contextCreate, device);
  if (!context)
    return failure(library,
                   "no context on CUDA device " + std::to_string(device),
                   lastError);
  Buffers buffers;
  if (ffi::Error error = gatherBuffers(args, rets, order, groups, strided,
                                       /*staging=*/-1, buffers);
      error.failure())
    return error;
  int32_t status = forEachGroup(groups, buffers, [&](void *const *group) {
    return seqLen == 0
               ? reinterpret_cast<CudaEntryPoint>(entry)(context, group, stream)
               : reinterpret_cast<ShapedCudaEntryPoint>(entry)(
                     context, seqLen, batch, group, stream);
  });
  return status == 0
             ? ffi::Error::Success()
             : failure(library, "the library's entry point failed", lastError);
}
} // namespace

// The symbols the library exports (it is built with hidden visibility).
extern "C" __attribute__((visibility("default"))) XLA_FFI_Error *
rnnc_xla_call(XLA_FFI_CallFrame *callFrame);
extern "C" __attribute__((visibility("default"))) XLA_FFI_Error *
rnnc_xla_call_cuda(XLA_FFI_CallFrame *callFrame);

XLA_FFI_DEFINE_HANDLER_SYMBOL(rnnc_xla_call, callOnCpu,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("entry")
                                  .Attr<std::string_view>("library")
                                  .Attr<ffi::Span<const int64_t>>("order")
                                  .Attr<int64_t>("seq_len")
                                  .Attr<int64_t>("batch")
                                  .Attr<int64_t>("groups")
                                  .Attr<ffi::Span<const int64_t>>("strided")
                                  .Attr<int64_t>("staging"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(rnnc_xla_call_cuda, callOnCuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void *>>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("entry")
                                  .Attr<std::string_view>("library")
                                  .Attr<int64_t>("context_create")
                                  .Attr<int64_t>("last_error")
                                  .Attr<ffi::Span<const int64_t>>("order")
                                  .Attr<int64_t>("seq_len")
                                  .Attr<int64_t>("batch")
                                  .Attr<int64_t>("groups")
                                  .Attr<ffi::Span<const int64_t>>("strided"));
