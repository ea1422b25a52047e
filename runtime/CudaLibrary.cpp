//===- CudaLibrary.cpp - The calls of a compiled cuda library -------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: what the entry points of a library compiled for the cuda target
// (rnn-compile --target=cuda) call around the compiled function:
// rnnrt_cuda_enter and rnnrt_cuda_leave (see rnn-emit-c-abi), and the two
// functions the library exports besides its entry points, rnnc_last_error
// and rnnc_set_device.
//
// Why: a library's caller owns the stream and the device. Its entry point
// enqueues the work on the caller's stream and returns without waiting, as
// a CUDA kernel of the caller's framework would, leaves the caller's
// current context as it found it (PyTorch keeps its current device
// there), and reports a failure as a return code with a message, since
// nothing may be printed or aborted in a process that is not ours.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "rnn/Runtime/Cuda.h"

#include <cstdint>
#include <cstdio>
#include <string>

using namespace rnn::runtime::cuda;

namespace {
/// The message of the calling thread's last failed call.
thread_local std::string lastError;

/// The alignment every caller buffer must have: the kernels load and store
/// vectors of 4 floats (convert-rnn-to-loops{whole-vectors}).
constexpr uintptr_t kBufferAlignment = 16;

std::string describePointer(const void *p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

/// Keeps the pending error, if any, as the thread's last error: 1 if there
/// was one, else 0.
int32_t keepError() {
  std::string error = takeError();
  if (error.empty())
    return 0;
  lastError = std::move(error);
  return 1;
}
} // namespace

extern "C" int32_t rnnrt_cuda_enter(void *stream, void *const *buffers,
                                    int64_t count) {
  // An error left by earlier work outside a call (a module unloaded, say)
  // must not be blamed on this one.
  (void)takeError();
  for (int64_t i = 0; i < count; ++i)
    if (reinterpret_cast<uintptr_t>(buffers[i]) % kBufferAlignment != 0) {
      lastError = "rnnc: buffer " + std::to_string(i) + " (" +
                  describePointer(buffers[i]) +
                  ") is not aligned to " + std::to_string(kBufferAlignment) +
                  " bytes; the kernels access 16-byte vectors, so every "
                  "buffer must start at a multiple of 16 bytes";
      return 1;
    }
  CudaState *s = enterCall("rnnc");
  if (!s) {
    leaveCall();
    return keepError();
  }
  // The stream must be one of the library's context (its device's primary
  // context, which CUDA runtime users such as PyTorch share): work on
  // another device's stream would fail at the first launch, less clearly.
  auto caller = static_cast<CUstream>(stream);
  CUcontext context = nullptr;
  if (CUresult r = s->api.cuStreamGetCtx(caller, &context)) {
    lastError = "rnnc: the caller's stream " + describePointer(stream) +
                " is not a CUDA stream: cuStreamGetCtx: " + describe(*s, r);
    leaveCall();
    return 1;
  }
  if (context != s->context) {
    lastError = "rnnc: the caller's stream " + describePointer(stream) +
                " belongs to another CUDA context than the library's (the "
                "primary context of device " +
                std::to_string(s->ordinal) +
                "); call rnnc_set_device with the stream's device before "
                "the first call";
    leaveCall();
    return 1;
  }
  beginCallerStream(caller);
  return 0;
}

extern "C" int32_t rnnrt_cuda_leave() {
  leaveCall();
  return keepError();
}

extern "C" const char *rnnc_last_error() { return lastError.c_str(); }

extern "C" int32_t rnnc_set_device(int32_t device) {
  (void)takeError();
  if (device < 0) {
    lastError =
        "rnnc_set_device: device " + std::to_string(device) + " is negative";
    return 1;
  }
  mgpuSetDefaultDevice(device);
  return keepError();
}
