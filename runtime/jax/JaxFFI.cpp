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
// The handlers' attribute `entry` is the entry point's address. The cpu
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

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
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

/// The entry point's buffers: XLA's operands and results in the order
/// `order` gives.
ffi::Error gatherBuffers(ffi::RemainingArgs args, ffi::RemainingRets rets,
                         ffi::Span<const int64_t> order,
                         std::vector<void *> &buffers) {
  buffers.reserve(order.size());
  for (int64_t k : order) {
    if (k >= 0) {
      if (static_cast<size_t>(k) >= args.size())
        return ffi::Error::InvalidArgument("rnnc: operand " +
                                           std::to_string(k) + " missing");
      ffi::ErrorOr<ffi::AnyBuffer> buffer = args.get<ffi::AnyBuffer>(k);
      if (buffer.has_error())
        return buffer.error();
      buffers.push_back(buffer.value().untyped_data());
      continue;
    }
    size_t index = static_cast<size_t>(-k - 1);
    if (index >= rets.size())
      return ffi::Error::InvalidArgument("rnnc: result " +
                                         std::to_string(index) + " missing");
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> buffer =
        rets.get<ffi::AnyBuffer>(index);
    if (buffer.has_error())
      return buffer.error();
    buffers.push_back(buffer.value()->untyped_data());
  }
  return ffi::Error::Success();
}

/// The message of a failed call, with the library's when `lastError` is
/// given.
ffi::Error failure(const char *what, LastError lastError) {
  std::string message = std::string("rnnc: ") + what;
  if (lastError)
    message += std::string(": ") + lastError();
  return ffi::Error::Internal(message);
}

ffi::Error callOnCpu(ffi::RemainingArgs args, ffi::RemainingRets rets,
                     int64_t entry, ffi::Span<const int64_t> order,
                     int64_t seqLen, int64_t batch) {
  std::vector<void *> buffers;
  if (ffi::Error error = gatherBuffers(args, rets, order, buffers);
      error.failure())
    return error;
  int32_t status =
      seqLen == 0 ? reinterpret_cast<EntryPoint>(entry)(buffers.data(), nullptr)
                  : reinterpret_cast<ShapedEntryPoint>(entry)(
                        seqLen, batch, buffers.data(), nullptr);
  return status == 0 ? ffi::Error::Success()
                     : failure("the library's entry point failed", nullptr);
}

ffi::Error callOnCuda(void *stream, int32_t device, ffi::RemainingArgs args,
                      ffi::RemainingRets rets, int64_t entry,
                      int64_t contextCreate, int64_t lastErrorAddress,
                      ffi::Span<const int64_t> order, int64_t seqLen,
                      int64_t batch) {
  auto lastError = reinterpret_cast<LastError>(lastErrorAddress);
  void *context = contextFor(contextCreate, device);
  if (!context)
    return failure(
        ("no context on CUDA device " + std::to_string(device)).c_str(),
        lastError);
  std::vector<void *> buffers;
  if (ffi::Error error = gatherBuffers(args, rets, order, buffers);
      error.failure())
    return error;
  int32_t status = seqLen == 0
                       ? reinterpret_cast<CudaEntryPoint>(entry)(
                             context, buffers.data(), stream)
                       : reinterpret_cast<ShapedCudaEntryPoint>(entry)(
                             context, seqLen, batch, buffers.data(), stream);
  return status == 0 ? ffi::Error::Success()
                     : failure("the library's entry point failed", lastError);
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
                                  .Attr<ffi::Span<const int64_t>>("order")
                                  .Attr<int64_t>("seq_len")
                                  .Attr<int64_t>("batch"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(rnnc_xla_call_cuda, callOnCuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void *>>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("entry")
                                  .Attr<int64_t>("context_create")
                                  .Attr<int64_t>("last_error")
                                  .Attr<ffi::Span<const int64_t>>("order")
                                  .Attr<int64_t>("seq_len")
                                  .Attr<int64_t>("batch"));
