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
// The cpu handler's attribute `entry` is the entry point's address; the
// library runs on the calling thread. A cuda library serves the device it
// was loaded for, so the cuda handler's `entries` holds one address per
// device ordinal (a loaded copy of the library per device) and
// `last_errors` the address of each copy's rnnc_last_error; the handler
// calls the copy of the device XLA runs the call on, with XLA's stream,
// where the library enqueues its work without waiting. Neither handler
// allocates or waits. The cuda handler is not marked compatible with
// command buffers: a library's first call on a stream loads its kernels
// and creates cuBLAS's handle, which a stream capture forbids.
//
// Built against the FFI headers of the jaxlib found when the build is
// configured (jax.ffi.include_dir()); the handlers need no CUDA headers, a
// stream being an opaque pointer to the library.
//
//===----------------------------------------------------------------------===//

#include "xla/ffi/api/ffi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ffi = xla::ffi;

namespace {
using EntryPoint = int32_t (*)(void *const *, void *);
using ShapedEntryPoint = int32_t (*)(int64_t, int64_t, void *const *, void *);
using LastError = const char *(*)();

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

/// Calls the entry point at `entry` on `buffers` and `stream`; a failure
/// carries the library's message when `lastError` is given.
ffi::Error callEntryPoint(int64_t entry, LastError lastError,
                          const std::vector<void *> &buffers, void *stream,
                          int64_t seqLen, int64_t batch) {
  int32_t status =
      seqLen == 0 ? reinterpret_cast<EntryPoint>(entry)(buffers.data(), stream)
                  : reinterpret_cast<ShapedEntryPoint>(entry)(
                        seqLen, batch, buffers.data(), stream);
  if (status == 0)
    return ffi::Error::Success();
  std::string message = "rnnc: the library's entry point failed";
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
  return callEntryPoint(entry, nullptr, buffers, nullptr, seqLen, batch);
}

ffi::Error callOnCuda(void *stream, int32_t device, ffi::RemainingArgs args,
                      ffi::RemainingRets rets, ffi::Span<const int64_t> entries,
                      ffi::Span<const int64_t> lastErrors,
                      ffi::Span<const int64_t> order, int64_t seqLen,
                      int64_t batch) {
  if (device < 0 || static_cast<size_t>(device) >= entries.size() ||
      entries.size() != lastErrors.size() || entries[device] == 0)
    return ffi::Error::InvalidArgument(
        "rnnc: no library was loaded for CUDA device " +
        std::to_string(device) + " (the call was traced for " +
        std::to_string(entries.size()) + " devices)");
  std::vector<void *> buffers;
  if (ffi::Error error = gatherBuffers(args, rets, order, buffers);
      error.failure())
    return error;
  return callEntryPoint(entries[device],
                        reinterpret_cast<LastError>(lastErrors[device]),
                        buffers, stream, seqLen, batch);
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
                                  .Attr<ffi::Span<const int64_t>>("entries")
                                  .Attr<ffi::Span<const int64_t>>("last_errors")
                                  .Attr<ffi::Span<const int64_t>>("order")
                                  .Attr<int64_t>("seq_len")
                                  .Attr<int64_t>("batch"));
