//===- CudaRunTarget.cpp - rnn-run's CUDA device target -------------------===//
//
// Implements createCudaTarget (RunTarget.h) on the CUDA runtime (Cuda.h):
// buffers in device memory, steps timed by device events and, once
// captured, replayed as a CUDA graph.
//
//===----------------------------------------------------------------------===//

#include "RunTarget.h"

#include "rnn/Runtime/Cuda.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdlib>

using namespace rnn;
using namespace rnn::run;
namespace cuda = rnn::runtime::cuda;

/// Fails with the CUDA runtime's error (status 1: not the user's).
[[noreturn]] static void failCUDA(const std::string &what = "CUDA") {
  fail(what + ": " + cuda::takeError(), 1);
}

namespace {
struct CudaTarget : public RunTarget {
  ~CudaTarget() override {
    releaseCapture();
    for (void *buffer : inputs)
      cuda::freeDevice(buffer);
  }

  bool isDevice() const override { return true; }
  std::vector<std::pair<const char *, void *>> symbols() override {
    // Later entries win in the JIT's symbol map: the device runtime's
    // rnnrt_begin_phase replaces the host's.
    std::vector<std::pair<const char *, void *>> all = runtime::jitSymbols();
    llvm::append_range(all, cuda::jitSymbols());
    return all;
  }
  std::string gemm(bool) override { return cuda::gemmBackend(); }
  runtime::MemoryAccounting &ledger() override {
    return runtime::deviceMemory();
  }
  std::optional<std::pair<size_t, size_t>> deviceMemory() override {
    size_t free = 0, total = 0;
    if (!cuda::deviceMemoryInfo(free, total))
      failCUDA();
    return std::make_pair(free, total);
  }

  void *input(std::vector<char> &data) override {
    void *buffer =
        cuda::copyToDevice(data.data(), data.size(), /*accounted=*/false);
    if (!buffer && !data.empty())
      failCUDA();
    inputs.push_back(buffer);
    return buffer;
  }
  void read(char *dst, const char *src, size_t bytes) override {
    if (!cuda::copyToHost(dst, src, bytes))
      failCUDA();
  }
  void freeResult(void *buffer) override { cuda::freeDevice(buffer); }
  void *allocateArena(size_t bytes) override {
    void *buffer = cuda::allocateDevice(bytes, /*accounted=*/true);
    if (!buffer)
      failCUDA();
    return buffer;
  }
  void freeArena(void *buffer) override { cuda::freeDevice(buffer); }

  bool capture(llvm::function_ref<void()> step) override {
    if (!cuda::beginCapture())
      failCUDA();
    step();
    graph = cuda::endCapture();
    if (!graph)
      failCUDA("CUDA graph capture failed");
    return true;
  }
  void releaseCapture() override {
    cuda::destroyGraph(graph);
    graph = nullptr;
  }

  runtime::StepStats runStep(llvm::function_ref<void()> step,
                             runtime::MemoryFigures &figures) override {
    bool replay = graph != nullptr;
    if (!cuda::startStepTimer())
      failCUDA();
    runtime::beginStep();
    if (replay) {
      if (!cuda::launchGraph(graph))
        failCUDA();
    } else {
      step();
    }
    cuda::DeviceStepTimes deviceTimes;
    if (!cuda::stopStepTimer(replay, deviceTimes))
      failCUDA();
    // Waits for the step's work and reports a failure of it.
    cuda::synchronize();
    if (std::string error = cuda::takeError(); !error.empty())
      fail("CUDA: " + error, 1);
    runtime::StepStats stats = runtime::endStep();
    // The host only issued the work; the device's events time it.
    figures = stats.device;
    stats.totalMs = deviceTimes.totalMs;
    stats.fwdMs = deviceTimes.fwdMs;
    stats.bwdMs = deviceTimes.bwdMs;
    return stats;
  }

  std::vector<void *> inputs;
  cuda::Graph *graph = nullptr;
};
} // namespace

std::unique_ptr<RunTarget> rnn::run::createCudaTarget(llvm::StringRef cublas,
                                                      bool tf32) {
  if (!cublas.empty())
    setenv("RNNRT_LIBCUBLAS", cublas.str().c_str(), /*overwrite=*/1);
  if (std::string error = cuda::initialize(); !error.empty())
    fail(error);
  if (std::string error = cuda::initializeBlas(); !error.empty())
    fail(error);
  cuda::setTF32(tf32);
  return std::make_unique<CudaTarget>();
}
