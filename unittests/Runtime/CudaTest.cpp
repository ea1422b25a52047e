//===- CudaTest.cpp - The CUDA runtime without a usable driver ------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: tests of the CUDA runtime that hold on every machine: with the
// driver library missing or replaced by the toolkit's stub, initialization
// fails with one line naming the cause, and every entry point (the mgpu*
// functions, the device GEMM, the tool's helpers) fails by recording an
// error instead of crashing; plus the TF32 switch and the JIT symbol table.
//
// Why: rnnc must build, test and fail cleanly on machines without a GPU,
// and code compiled for the GPU may still call into the runtime there. Each
// test points RNNRT_LIBCUDA at a library that cannot work, so the results
// are the same on a machine that has a GPU. Real device work is tested in
// CudaDeviceTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "rnn/Runtime/Cuda.h"
#include "rnn/Runtime/Runtime.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

using namespace rnn::runtime;

namespace {

constexpr const char *kMissingDriver = "/nonexistent/libcuda.so.1";
/// The error of a library call made with no context.
constexpr const char *kNoContext = "rnnc: no context";

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Every test starts with the driver library pointing nowhere and no error
/// pending.
class CudaWithoutDriver : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("RNNRT_LIBCUDA", kMissingDriver, /*overwrite=*/1);
    cuda::takeError();
  }
  void TearDown() override { cuda::takeError(); }
};

TEST_F(CudaWithoutDriver, InitializeNamesTheMissingLibrary) {
  std::string error = cuda::initialize();
  EXPECT_EQ(error.rfind(std::string("CUDA driver not found: dlopen(") +
                            kMissingDriver + "): ",
                        0),
            0u)
      << error;
  EXPECT_FALSE(contains(error, "\n")) << error;
  EXPECT_FALSE(cuda::isInitialized());
  // A failure is not remembered: the next call tries again.
  EXPECT_EQ(cuda::initialize(), error);
  EXPECT_EQ(cuda::initializeBlas(), error);
  EXPECT_EQ(cuda::takeError(), "");
}

TEST_F(CudaWithoutDriver, LibraryCallsFailWithAMessage) {
  // A context starts the runtime on its device: without a driver there is
  // none, and the message says why.
  EXPECT_EQ(rnnc_context_create(0), nullptr);
  // The message is kept for rnnc_last_error, and nothing stays recorded.
  EXPECT_EQ(cuda::takeError(), "");
  std::string error = rnnc_last_error();
  EXPECT_EQ(error.rfind("rnnc_context_create: CUDA driver not found", 0), 0u)
      << error;
  EXPECT_TRUE(contains(error, kMissingDriver)) << error;
  EXPECT_EQ(rnnc_context_create(-1), nullptr);
  EXPECT_TRUE(contains(rnnc_last_error(), "device -1 is negative"))
      << rnnc_last_error();
  // Calls without a context, or with a pointer that is none, are refused
  // naming it.
  auto *fakeStream = reinterpret_cast<CUstream_st *>(0x1000);
  EXPECT_EQ(
      rnnrt_cuda_enter(nullptr, "rnnc_test", fakeStream, nullptr, nullptr, 0),
      1);
  EXPECT_TRUE(contains(rnnc_last_error(), "rnnc: no context"))
      << rnnc_last_error();
  alignas(16) uint64_t notAContext[8] = {};
  auto *bogus = reinterpret_cast<rnnc_context *>(notAContext);
  EXPECT_EQ(
      rnnrt_cuda_enter(bogus, "rnnc_test", fakeStream, nullptr, nullptr, 0), 1);
  EXPECT_TRUE(contains(rnnc_last_error(), "is not a live context"))
      << rnnc_last_error();
  EXPECT_EQ(rnnc_set_graph_replay(nullptr, 4), 1);
  EXPECT_TRUE(contains(rnnc_last_error(), "rnnc_set_graph_replay: no context"))
      << rnnc_last_error();
  EXPECT_EQ(rnnc_context_destroy(bogus), 1);
  EXPECT_TRUE(contains(rnnc_last_error(), "is not a live context"))
      << rnnc_last_error();
  EXPECT_EQ(rnnc_context_destroy(nullptr), 0);
  // Outside a call the runtime's stream is used again.
  EXPECT_EQ(rnnrt_cuda_leave(), 0);
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  EXPECT_TRUE(contains(cuda::takeError(), kMissingDriver));
}

TEST_F(CudaWithoutDriver, LibraryCallsRefuseMisalignedBuffers) {
  alignas(16) char data[64];
  // The second buffer starts 4 bytes into a 16-byte block: refused first,
  // naming it, before the context is looked at.
  void *misaligned[] = {data, data + 4};
  const int64_t extents[] = {16, 16, 16};
  EXPECT_EQ(
      rnnrt_cuda_enter(nullptr, "rnnc_test", nullptr, misaligned, extents, 2),
      1);
  std::string error = rnnc_last_error();
  EXPECT_EQ(error.rfind("rnnc: buffer 1 (", 0), 0u) << error;
  EXPECT_TRUE(contains(error, "not aligned to 16 bytes")) << error;
  EXPECT_FALSE(contains(error, kNoContext)) << error;
  // Aligned buffers pass the check and reach the context's.
  void *aligned[] = {data, data + 16, nullptr};
  EXPECT_EQ(
      rnnrt_cuda_enter(nullptr, "rnnc_test", nullptr, aligned, extents, 3), 1);
  EXPECT_TRUE(contains(rnnc_last_error(), kNoContext)) << rnnc_last_error();
}

TEST_F(CudaWithoutDriver, LibraryCallsRefuseOverlapsWithWrittenBuffers) {
  alignas(16) char data[64];
  // Buffers the entry point only reads may overlap: an input passed twice
  // reaches the context's check.
  void *twice[] = {data, data, data + 32};
  const int64_t readTwice[] = {32, 32, -32};
  EXPECT_EQ(
      rnnrt_cuda_enter(nullptr, "rnnc_test", nullptr, twice, readTwice, 3), 1);
  EXPECT_TRUE(contains(rnnc_last_error(), kNoContext)) << rnnc_last_error();
  // A written buffer (negative extent) that overlaps another, by one 16-byte
  // block, is refused with both, before the context is looked at.
  void *overlapping[] = {data, data + 16};
  const int64_t writesFirst[] = {-32, 16};
  EXPECT_EQ(rnnrt_cuda_enter(nullptr, "rnnc_test", nullptr, overlapping,
                             writesFirst, 2),
            1);
  std::string error = rnnc_last_error();
  EXPECT_EQ(error.rfind("rnnc: buffer 0 (32 bytes at ", 0), 0u) << error;
  EXPECT_TRUE(contains(error, "which the entry point writes, overlaps "
                              "buffer 1 (16 bytes at "))
      << error;
  EXPECT_FALSE(contains(error, kNoContext)) << error;
  // Adjacent buffers do not overlap.
  const int64_t adjacent[] = {-16, 16};
  EXPECT_EQ(
      rnnrt_cuda_enter(nullptr, "rnnc_test", nullptr, overlapping, adjacent, 2),
      1);
  EXPECT_TRUE(contains(rnnc_last_error(), kNoContext)) << rnnc_last_error();
}

TEST_F(CudaWithoutDriver, EntryPointsRecordErrorsInsteadOfCrashing) {
  MemoryAccounting &device = deviceMemory();
  size_t bytes = device.currentBytes(), live = device.liveAllocations();
  alignas(64) char host[64] = {1, 2, 3};
  char ptx[] = ".version 8.0\n";
  int fakeArgument = 0;
  void *params[] = {&fakeArgument};
  auto *fakeStream = reinterpret_cast<CUstream_st *>(0x1000);
  auto *fakeEvent = reinterpret_cast<CUevent_st *>(0x2000);
  void *fakeDevicePtr = reinterpret_cast<void *>(0x3000);

  struct Call {
    const char *entry;
    std::function<void()> run;
  };
  auto expectLoadedAtLookup = [](CUmod_st *module) {
    EXPECT_NE(module, nullptr);
    EXPECT_EQ(cuda::takeError(), "");
    EXPECT_EQ(mgpuModuleGetFunction(module, "k"), nullptr);
    mgpuModuleUnload(module);
  };
  std::vector<Call> calls = {
      // A module is registered without the driver and loaded at its first
      // kernel lookup, which fails.
      {"mgpuModuleGetFunction",
       [&] { expectLoadedAtLookup(mgpuModuleLoad(ptx, sizeof(ptx))); }},
      {"mgpuModuleGetFunction",
       [&] { expectLoadedAtLookup(mgpuModuleLoadJIT(ptx, 2)); }},
      {"mgpuLaunchKernel",
       [&] {
         mgpuLaunchKernel(nullptr, 1, 1, 1, 32, 1, 1, 0, fakeStream, params,
                          nullptr, 1);
       }},
      {"mgpuStreamCreate", [&] { EXPECT_EQ(mgpuStreamCreate(), nullptr); }},
      {"mgpuStreamDestroy", [&] { mgpuStreamDestroy(fakeStream); }},
      {"mgpuStreamSynchronize", [&] { mgpuStreamSynchronize(fakeStream); }},
      {"mgpuStreamWaitEvent",
       [&] { mgpuStreamWaitEvent(fakeStream, fakeEvent); }},
      {"mgpuEventCreate", [&] { EXPECT_EQ(mgpuEventCreate(), nullptr); }},
      {"mgpuEventDestroy", [&] { mgpuEventDestroy(fakeEvent); }},
      {"mgpuEventSynchronize", [&] { mgpuEventSynchronize(fakeEvent); }},
      {"mgpuEventRecord", [&] { mgpuEventRecord(fakeEvent, fakeStream); }},
      {"mgpuMemAlloc",
       [&] { EXPECT_EQ(mgpuMemAlloc(1024, fakeStream, false), nullptr); }},
      {"mgpuMemFree", [&] { mgpuMemFree(fakeDevicePtr, fakeStream); }},
      {"mgpuMemcpy", [&] { mgpuMemcpy(host, host + 32, 16, fakeStream); }},
      {"mgpuMemset32", [&] { mgpuMemset32(host, 7u, 4, fakeStream); }},
      {"mgpuMemset16", [&] { mgpuMemset16(host, 7, 4, fakeStream); }},
      {"allocateDevice",
       [&] { EXPECT_EQ(cuda::allocateDevice(64, true), nullptr); }},
      {"copyToDevice",
       [&] { EXPECT_EQ(cuda::copyToDevice(host, 64, false), nullptr); }},
      {"copyToHost",
       [&] { EXPECT_FALSE(cuda::copyToHost(host, fakeDevicePtr, 64)); }},
      {"freeDevice", [&] { cuda::freeDevice(fakeDevicePtr); }},
      {"synchronize", [&] { EXPECT_FALSE(cuda::synchronize()); }},
      {"deviceMemoryInfo",
       [&] {
         size_t free = 0, total = 0;
         EXPECT_FALSE(cuda::deviceMemoryInfo(free, total));
       }},
      {"beginCapture", [&] { EXPECT_FALSE(cuda::beginCapture()); }},
      {"endCapture", [&] { EXPECT_EQ(cuda::endCapture(), nullptr); }},
      {"launchGraph", [&] { EXPECT_FALSE(cuda::launchGraph(nullptr)); }},
      {"recordTimingEvent",
       [&] { EXPECT_EQ(cuda::recordTimingEvent(), nullptr); }},
      {"elapsedMs",
       [&] { EXPECT_LT(cuda::elapsedMs(fakeEvent, fakeEvent), 0.0); }},
      {"destroyEvent", [&] { cuda::destroyEvent(fakeEvent); }},
      {"rnnrt_cuda_fork", [&] { rnnrt_cuda_fork(); }},
      {"rnnrt_cuda_lane", [&] { rnnrt_cuda_lane(1); }},
      {"rnnrt_cuda_signal", [&] { rnnrt_cuda_signal(0); }},
      {"rnnrt_cuda_wait", [&] { rnnrt_cuda_wait(0); }},
      {"rnnrt_cuda_join", [&] { rnnrt_cuda_join(); }},
  };
  for (const Call &call : calls) {
    call.run();
    std::string error = cuda::takeError();
    EXPECT_EQ(error.rfind(std::string(call.entry) + ": ", 0), 0u)
        << call.entry << " recorded: " << error;
    EXPECT_TRUE(contains(error, kMissingDriver)) << error;
  }

  // Null handles need no driver and are not errors.
  mgpuMemFree(nullptr, fakeStream);
  mgpuModuleUnload(nullptr);
  mgpuEventDestroy(nullptr);
  cuda::freeDevice(nullptr);
  cuda::destroyGraph(nullptr);
  cuda::destroyEvent(nullptr);
  mgpuSetDefaultDevice(0);
  EXPECT_EQ(cuda::takeError(), "");

  // Nothing reached the device ledger, and it is not left frozen.
  EXPECT_EQ(device.currentBytes(), bytes);
  EXPECT_EQ(device.liveAllocations(), live);
  EXPECT_FALSE(device.isFrozen());
  EXPECT_EQ(host[0], 1);
  EXPECT_EQ(host[2], 3);
}

TEST_F(CudaWithoutDriver, OnlyTheFirstErrorIsKept) {
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  EXPECT_EQ(mgpuEventCreate(), nullptr);
  std::string error = cuda::takeError();
  EXPECT_EQ(error.rfind("mgpuStreamCreate: ", 0), 0u) << error;
  EXPECT_EQ(cuda::takeError(), "");
}

using Memref2D = StridedMemRefType<float, 2>;

template <typename T>
StridedMemRefType<T, 2> view(T *data, int64_t rows, int64_t cols, int64_t s0,
                             int64_t s1) {
  StridedMemRefType<T, 2> m;
  m.basePtr = m.data = data;
  m.offset = 0;
  m.sizes[0] = rows;
  m.sizes[1] = cols;
  m.strides[0] = s0;
  m.strides[1] = s1;
  return m;
}

TEST_F(CudaWithoutDriver, SgemmRecordsErrorsInsteadOfCrashing) {
  std::vector<float> a(6, 1.0f), b(6, 2.0f), c(4, 3.0f);
  Memref2D A = view(a.data(), 2, 3, 3, 1);
  Memref2D B = view(b.data(), 3, 2, 2, 1);
  Memref2D C = view(c.data(), 2, 2, 2, 1);
  _mlir_ciface_rnnrt_cuda_sgemm(0, 0, 1.0f, 0.0f, &A, &B, &C);
  std::string error = cuda::takeError();
  EXPECT_EQ(error.rfind("rnnrt_cuda_sgemm: ", 0), 0u) << error;
  EXPECT_TRUE(contains(error, kMissingDriver)) << error;
  EXPECT_EQ(c, std::vector<float>(4, 3.0f));

  // A layout cuBLAS cannot take is reported before the driver is needed.
  Memref2D broadcast = view(b.data(), 3, 2, 0, 1);
  _mlir_ciface_rnnrt_cuda_sgemm(0, 0, 1.0f, 0.0f, &A, &broadcast, &C);
  error = cuda::takeError();
  EXPECT_TRUE(contains(error, "neither row- nor column-major")) << error;

  // Empty results need no work at all.
  Memref2D empty = view(c.data(), 0, 2, 2, 1);
  Memref2D A0 = view(a.data(), 0, 3, 3, 1);
  _mlir_ciface_rnnrt_cuda_sgemm(0, 0, 1.0f, 0.0f, &A0, &B, &empty);
  EXPECT_EQ(cuda::takeError(), "");
}

TEST_F(CudaWithoutDriver, Bf16GemmRecordsErrorsInsteadOfCrashing) {
  // bf16 1.0 is 0x3f80.
  std::vector<uint16_t> a(6, 0x3f80), b(6, 0x3f80);
  std::vector<float> c(4, 3.0f);
  auto A = view(a.data(), 2, 3, 3, 1), B = view(b.data(), 3, 2, 2, 1);
  Memref2D C = view(c.data(), 2, 2, 2, 1);
  _mlir_ciface_rnnrt_cuda_gemm_bf16(0, 0, 1.0f, 0.0f, &A, &B, &C);
  std::string error = cuda::takeError();
  EXPECT_EQ(error.rfind("rnnrt_cuda_gemm_bf16: ", 0), 0u) << error;
  EXPECT_TRUE(contains(error, kMissingDriver)) << error;
  EXPECT_EQ(c, std::vector<float>(4, 3.0f));

  auto broadcast = view(b.data(), 3, 2, 0, 1);
  _mlir_ciface_rnnrt_cuda_gemm_bf16(0, 0, 1.0f, 0.0f, &A, &broadcast, &C);
  error = cuda::takeError();
  EXPECT_TRUE(contains(error, "neither row- nor column-major")) << error;
}

TEST(CudaWithoutDriverDeathTest, SgemmShapeMismatchAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<float> a(6), b(10), c(4);
  Memref2D A = view(a.data(), 2, 3, 3, 1);
  Memref2D B = view(b.data(), 5, 2, 2, 1); // K mismatch: 3 vs 5.
  Memref2D C = view(c.data(), 2, 2, 2, 1);
  EXPECT_DEATH(_mlir_ciface_rnnrt_cuda_sgemm(0, 0, 1.0f, 0.0f, &A, &B, &C),
               "rnnrt_cuda_sgemm: shape mismatch");
}

TEST_F(CudaWithoutDriver, ToolkitStubIsRecognized) {
  if (access(RNN_CUDA_STUB_LIBRARY, R_OK) != 0)
    GTEST_SKIP() << "no toolkit stub at " << RNN_CUDA_STUB_LIBRARY;
  setenv("RNNRT_LIBCUDA", RNN_CUDA_STUB_LIBRARY, /*overwrite=*/1);
  std::string error = cuda::initialize();
  EXPECT_TRUE(contains(error, "CUDA_ERROR_STUB_LIBRARY")) << error;
  EXPECT_TRUE(contains(error, "no GPU driver installed")) << error;
  EXPECT_TRUE(contains(error, RNN_CUDA_STUB_LIBRARY)) << error;
  EXPECT_FALSE(contains(error, "\n")) << error;
  EXPECT_FALSE(cuda::isInitialized());

  EXPECT_EQ(mgpuMemAlloc(256, nullptr, false), nullptr);
  std::string later = cuda::takeError();
  EXPECT_EQ(later, "mgpuMemAlloc: " + error);
}

TEST(CudaGemm, TF32SwitchNamesTheBackend) {
  EXPECT_EQ(cuda::gemmBackend(), "cublas");
  cuda::setTF32(true);
  EXPECT_EQ(cuda::gemmBackend(), "cublas-tf32");
  cuda::setTF32(false);
  EXPECT_EQ(cuda::gemmBackend(), "cublas");
}

TEST(CudaJit, SymbolTableListsEveryEntryPoint) {
  auto symbols = cuda::jitSymbols();
  std::set<std::string> names;
  for (const auto &[name, address] : symbols) {
    EXPECT_NE(address, nullptr) << name;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), symbols.size()) << "duplicate names";
  const std::set<std::string> expected = {"mgpuModuleLoad",
                                          "mgpuModuleLoadJIT",
                                          "mgpuModuleUnload",
                                          "mgpuModuleGetFunction",
                                          "mgpuLaunchKernel",
                                          "mgpuStreamCreate",
                                          "mgpuStreamDestroy",
                                          "mgpuStreamSynchronize",
                                          "mgpuStreamWaitEvent",
                                          "mgpuEventCreate",
                                          "mgpuEventDestroy",
                                          "mgpuEventSynchronize",
                                          "mgpuEventRecord",
                                          "mgpuMemAlloc",
                                          "mgpuMemFree",
                                          "mgpuMemcpy",
                                          "mgpuMemset32",
                                          "mgpuMemset16",
                                          "mgpuSetDefaultDevice",
                                          "_mlir_ciface_rnnrt_cuda_sgemm",
                                          "_mlir_ciface_rnnrt_cuda_gemm_bf16",
                                          "rnnrt_begin_phase",
                                          "rnnrt_cuda_fork",
                                          "rnnrt_cuda_lane",
                                          "rnnrt_cuda_signal",
                                          "rnnrt_cuda_wait",
                                          "rnnrt_cuda_join"};
  EXPECT_EQ(names, expected);
  for (const auto &[name, address] : symbols) {
    if (std::string(name) == "mgpuMemAlloc") {
      EXPECT_EQ(address, reinterpret_cast<void *>(&mgpuMemAlloc));
    } else if (std::string(name) == "_mlir_ciface_rnnrt_cuda_sgemm") {
      EXPECT_EQ(address,
                reinterpret_cast<void *>(&_mlir_ciface_rnnrt_cuda_sgemm));
    } else if (std::string(name) == "_mlir_ciface_rnnrt_cuda_gemm_bf16") {
      EXPECT_EQ(address,
                reinterpret_cast<void *>(&_mlir_ciface_rnnrt_cuda_gemm_bf16));
    } else if (std::string(name) == "rnnrt_begin_phase") {
      // The device twin, which also records the step timer's event.
      EXPECT_EQ(address, reinterpret_cast<void *>(&rnnrt_cuda_begin_phase));
    }
  }
}

} // namespace
