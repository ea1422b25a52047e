//===- HostRunTarget.cpp - rnn-run's host target --------------------------===//
//
// Implements createHostTarget (RunTarget.h).
//
//===----------------------------------------------------------------------===//

#include "RunTarget.h"

#include <algorithm>

using namespace rnn;
using namespace rnn::run;

namespace {
struct HostTarget : public RunTarget {
  bool isDevice() const override { return false; }
  std::vector<std::pair<const char *, void *>> symbols() override {
    return runtime::jitSymbols();
  }
  std::string gemm(bool f64) override { return runtime::gemmBackend(f64); }
  runtime::MemoryAccounting &ledger() override { return runtime::hostMemory(); }
  std::optional<std::pair<size_t, size_t>> deviceMemory() override {
    return std::nullopt;
  }
  void *input(std::vector<char> &data) override { return data.data(); }
  void read(char *dst, const char *src, size_t bytes) override {
    std::copy(src, src + bytes, dst);
  }
  void freeResult(void *buffer) override { runtime::deallocate(buffer); }
  void *allocateArena(size_t bytes) override {
    return _mlir_memref_to_llvm_alloc(bytes);
  }
  void freeArena(void *buffer) override { _mlir_memref_to_llvm_free(buffer); }
  bool capture(llvm::function_ref<void()>) override { return false; }
  void releaseCapture() override {}
  runtime::StepStats runStep(llvm::function_ref<void()> step,
                             runtime::MemoryFigures &figures) override {
    runtime::beginStep();
    step();
    runtime::StepStats stats = runtime::endStep();
    figures = stats;
    return stats;
  }
};
} // namespace

std::unique_ptr<RunTarget> rnn::run::createHostTarget() {
  return std::make_unique<HostTarget>();
}
