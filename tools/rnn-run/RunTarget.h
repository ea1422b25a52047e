//===- RunTarget.h - where rnn-run runs a program ---------------*- C++ -*-===//
//
// The host or a CUDA device, behind one interface that rnn-run chooses once
// (createRunTarget): where the compiled program's buffers live, and how a
// step is issued (eagerly, or replayed from a captured CUDA graph), timed
// and measured. The device implementation (CudaRunTarget.cpp) is built with
// the CUDA runtime; a build without it has NoCudaRunTarget.cpp, which
// refuses the device, so no code of the tool depends on the build.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TOOLS_RUNTARGET_H
#define RNN_TOOLS_RUNTARGET_H

#include "rnn/Runtime/Accounting.h"
#include "rnn/Runtime/Runtime.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rnn {
namespace run {

/// Prints "rnn-run: <message>" and exits with `code` (rnn-run.cpp).
[[noreturn]] void fail(const std::string &message, int code = 2);

class RunTarget {
public:
  virtual ~RunTarget() = default;

  /// Whether the program's buffers are device memory.
  virtual bool isDevice() const = 0;
  /// The runtime symbols the JIT resolves the program's calls with.
  virtual std::vector<std::pair<const char *, void *>> symbols() = 0;
  /// The BLAS the program's GEMMs run on.
  virtual std::string gemm(bool f64) = 0;
  /// The accounting of the program's own memory.
  virtual runtime::MemoryAccounting &ledger() = 0;
  /// Free and total bytes of the device's own memory; none on the host.
  virtual std::optional<std::pair<size_t, size_t>> deviceMemory() = 0;

  /// The buffer the program reads `data` from (the caller's, not
  /// accounted); a device copy lives as long as the target.
  virtual void *input(std::vector<char> &data) = 0;
  /// Copies `bytes` of a result the program wrote to `dst` on the host.
  virtual void read(char *dst, const char *src, size_t bytes) = 0;
  /// Frees a result the program allocated.
  virtual void freeResult(void *buffer) = 0;
  /// The arena of the planned buffers, accounted as the program's memory.
  virtual void *allocateArena(size_t bytes) = 0;
  virtual void freeArena(void *buffer) = 0;

  /// Captures `step` once to replay it for every later step, if the target
  /// can (a CUDA graph); false if it cannot.
  virtual bool capture(llvm::function_ref<void()> step) = 0;
  /// Releases what capture() holds; later steps run eagerly.
  virtual void releaseCapture() = 0;
  /// One step between runtime::beginStep() and runtime::endStep(): `step`,
  /// or the replay of its capture; the figures are the device's own where
  /// the device did the work.
  virtual runtime::StepStats runStep(llvm::function_ref<void()> step,
                                     runtime::MemoryFigures &figures) = 0;
};

/// The host: buffers in host memory through the runtime's accounting.
std::unique_ptr<RunTarget> createHostTarget();

/// The CUDA device, its driver and BLAS initialized (`cublas`: the cuBLAS
/// library to load, or empty for the default; `tf32`: cuBLAS may round f32
/// operands to TF32). Fails, naming why, if the build has no CUDA runtime
/// or the device cannot be used.
std::unique_ptr<RunTarget> createCudaTarget(llvm::StringRef cublas, bool tf32);

} // namespace run
} // namespace rnn

#endif // RNN_TOOLS_RUNTARGET_H
