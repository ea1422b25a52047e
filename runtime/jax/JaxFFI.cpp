//===- JaxFFI.cpp - rnnc's entry points as an XLA FFI handler -------------===//
//
// librnnc_jax.so exports `rnnc_xla_call`, the XLA FFI handler through which
// rnnc.jax calls a compiled library's C entry point (rnnc_<f>, _fwd, _bwd)
// on XLA's buffers: the entry point's address is the attribute `entry`,
// and `order` maps each buffer the entry point takes, in the manifest's
// order, to an operand of the call (k >= 0) or to a result (k < 0: result
// -k - 1). The results are the entry point's outputs, gradients, saved
// region and scratch arena, which XLA allocates; a buffer the entry point
// writes in place (the saved region in the backward) is a result aliased
// to its operand. The attributes `seq_len` and `batch` are the call's T
// and B for the entry point of a library of every shape (which takes them
// first), 0 for a library of one shape. The handler allocates nothing and
// waits for nothing: a cpu library runs on the calling thread. Built
// against the FFI headers of the jaxlib found when the build is configured
// (jax.ffi.include_dir()).
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

ffi::Error callEntryPoint(ffi::RemainingArgs args, ffi::RemainingRets rets,
                          int64_t entry, ffi::Span<const int64_t> order,
                          int64_t seqLen, int64_t batch) {
  std::vector<void *> buffers;
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
  int32_t status =
      seqLen == 0 ? reinterpret_cast<EntryPoint>(entry)(buffers.data(), nullptr)
                  : reinterpret_cast<ShapedEntryPoint>(entry)(
                        seqLen, batch, buffers.data(), nullptr);
  if (status != 0)
    return ffi::Error::Internal("rnnc: the library's entry point failed");
  return ffi::Error::Success();
}
} // namespace

// The one symbol the library exports (it is built with hidden visibility).
extern "C" __attribute__((visibility("default"))) XLA_FFI_Error *
rnnc_xla_call(XLA_FFI_CallFrame *callFrame);

XLA_FFI_DEFINE_HANDLER_SYMBOL(rnnc_xla_call, callEntryPoint,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("entry")
                                  .Attr<ffi::Span<const int64_t>>("order")
                                  .Attr<int64_t>("seq_len")
                                  .Attr<int64_t>("batch"));
