//===- CudaDeviceTest.cpp - The CUDA runtime on a real GPU ----------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: tests that run device work through the runtime: device memory with
// its accounting, a PTX kernel loaded and launched through the mgpu*
// entry points, the cuBLAS GEMMs against a double-precision CPU loop (FP32,
// TF32 and bf16 operands), and a GEMM captured into a CUDA graph and replayed,
// including the rule that device memory cannot be allocated during capture.
//
// Why: these are the paths compiled GPU programs and rnn-run take. Without
// a usable driver every test is skipped with initialize()'s message as the
// reason; behaviour without a GPU is tested in CudaTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "rnn/Runtime/Cuda.h"
#include "rnn/Runtime/Runtime.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace rnn::runtime;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Skips the test, saying why, unless the driver initializes; fails it if
/// an entry point recorded an error the test did not take.
class CudaDevice : public ::testing::Test {
protected:
  void SetUp() override {
    std::string error = cuda::initialize();
    if (!error.empty())
      GTEST_SKIP() << "no usable GPU: " << error;
    cuda::takeError();
  }
  void TearDown() override { EXPECT_EQ(cuda::takeError(), ""); }
};

/// out[i] = base + i for i < n.
const char kFillPtx[] = R"(
.version 7.0
.target sm_75
.address_size 64

.visible .entry rnn_test_fill(.param .u64 out, .param .u32 n, .param .f32 base)
{
  .reg .pred %p;
  .reg .b32 %r<5>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  ld.param.f32 %f1, [base];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra DONE;
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  cvt.rn.f32.u32 %f2, %r2;
  add.f32 %f3, %f1, %f2;
  st.global.f32 [%rd3], %f3;
DONE:
  ret;
}
)";

TEST_F(CudaDevice, MemoryEntryPointsAreAccounted) {
  MemoryAccounting &ledger = deviceMemory();
  size_t base = ledger.currentBytes();
  CUstream_st *stream = mgpuStreamCreate();
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(mgpuStreamCreate(), stream); // One stream for all work.

  void *p = mgpuMemAlloc(4000, stream, false);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(ledger.currentBytes(), base + 4000);
  float one = 1.0f;
  uint32_t oneBits;
  std::memcpy(&oneBits, &one, sizeof(one));
  mgpuMemset32(p, oneBits, 1000, stream);
  mgpuMemset16(p, 0xABCD, 2, stream);
  std::vector<float> host(1000, 0.0f);
  mgpuMemcpy(host.data(), p, 4000, stream);
  mgpuStreamSynchronize(stream);
  uint16_t halves[2];
  std::memcpy(halves, host.data(), sizeof(halves));
  EXPECT_EQ(halves[0], 0xABCD);
  EXPECT_EQ(halves[1], 0xABCD);
  for (size_t i = 1; i < host.size(); ++i)
    ASSERT_EQ(host[i], 1.0f) << i;

  CUevent_st *event = mgpuEventCreate();
  ASSERT_NE(event, nullptr);
  mgpuEventRecord(event, stream);
  mgpuStreamWaitEvent(stream, event);
  mgpuEventSynchronize(event);
  mgpuEventDestroy(event);
  mgpuStreamDestroy(stream); // The runtime's stream survives.
  mgpuStreamSynchronize(mgpuStreamCreate());

  void *managed = mgpuMemAlloc(64, stream, true);
  ASSERT_NE(managed, nullptr);
  EXPECT_EQ(ledger.currentBytes(), base + 4064);
  mgpuMemFree(managed, stream);
  mgpuMemFree(p, stream);
  EXPECT_EQ(ledger.currentBytes(), base);
  EXPECT_EQ(mgpuMemAlloc(0, stream, false), nullptr);

  size_t bad = ledger.badFrees();
  int onStack = 0;
  mgpuMemFree(&onStack, stream);
  EXPECT_EQ(ledger.badFrees(), bad + 1);
  EXPECT_TRUE(contains(cuda::takeError(), "unknown device pointer"));
}

TEST_F(CudaDevice, StepsReportDevicePeaksPerPhase) {
  MemoryAccounting &ledger = deviceMemory();
  size_t base = ledger.currentBytes();
  CUstream_st *stream = mgpuStreamCreate();
  beginStep();
  void *saved = mgpuMemAlloc(1000, stream, false);
  void *scratch = mgpuMemAlloc(3000, stream, false);
  mgpuMemFree(scratch, stream);
  rnnrt_begin_phase(1);
  void *grad = mgpuMemAlloc(500, stream, false);
  mgpuMemFree(saved, stream);
  StepStats stats = endStep();
  EXPECT_EQ(stats.device.fwdPeakBytes, base + 4000);
  EXPECT_EQ(stats.device.bytesAtBackwardStart, base + 1000);
  EXPECT_EQ(stats.device.bwdPeakBytes, base + 1500);
  EXPECT_EQ(stats.device.bytesAtEnd, base + 500);
  mgpuMemFree(grad, stream);
  EXPECT_EQ(ledger.currentBytes(), base);
}

TEST_F(CudaDevice, HostDeviceCopiesAccountOnlyWhenAsked) {
  MemoryAccounting &ledger = deviceMemory();
  size_t base = ledger.currentBytes();
  std::vector<float> data(257);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<float>(i) * 0.5f;
  size_t bytes = data.size() * sizeof(float);

  void *input = cuda::copyToDevice(data.data(), bytes, /*accounted=*/false);
  ASSERT_NE(input, nullptr);
  EXPECT_EQ(ledger.currentBytes(), base);
  void *result = cuda::copyToDevice(data.data(), bytes, /*accounted=*/true);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(ledger.currentBytes(), base + bytes);

  std::vector<float> back(data.size(), -1.0f);
  ASSERT_TRUE(cuda::copyToHost(back.data(), input, bytes));
  EXPECT_EQ(back, data);
  std::fill(back.begin(), back.end(), -1.0f);
  ASSERT_TRUE(cuda::copyToHost(back.data(), result, bytes));
  EXPECT_EQ(back, data);

  cuda::freeDevice(input);
  cuda::freeDevice(result);
  EXPECT_EQ(ledger.currentBytes(), base);
  EXPECT_TRUE(cuda::synchronize());
}

TEST_F(CudaDevice, PtxKernelLoadsAndRuns) {
  std::vector<char> ptx(kFillPtx, kFillPtx + sizeof(kFillPtx));
  CUmod_st *module = mgpuModuleLoadJIT(ptx.data(), 2);
  ASSERT_NE(module, nullptr) << cuda::takeError();
  CUfunc_st *fill = mgpuModuleGetFunction(module, "rnn_test_fill");
  ASSERT_NE(fill, nullptr) << cuda::takeError();

  CUstream_st *stream = mgpuStreamCreate();
  uint32_t n = 1000;
  float start = 0.25f;
  void *out = mgpuMemAlloc(n * sizeof(float), stream, false);
  ASSERT_NE(out, nullptr);
  void *params[] = {&out, &n, &start};
  mgpuLaunchKernel(fill, (n + 127) / 128, 1, 1, 128, 1, 1, 0, stream, params,
                   nullptr, 3);
  std::vector<float> host(n);
  mgpuMemcpy(host.data(), out, n * sizeof(float), stream);
  mgpuStreamSynchronize(stream);
  ASSERT_EQ(cuda::takeError(), "");
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(host[i], start + static_cast<float>(i)) << i;
  mgpuMemFree(out, stream);

  EXPECT_EQ(mgpuModuleGetFunction(module, "no_such_kernel"), nullptr);
  EXPECT_TRUE(contains(cuda::takeError(), "no_such_kernel"));
  mgpuModuleUnload(module);

  // The same image through the plain loader.
  CUmod_st *again = mgpuModuleLoad(ptx.data(), ptx.size());
  EXPECT_NE(again, nullptr);
  mgpuModuleUnload(again);

  // A module is loaded into the driver on its first function lookup, so a
  // broken image is reported there, under the loader's name.
  char broken[] = ".version 7.0\n.target sm_75\n.address_size 64\nnonsense;\n";
  CUmod_st *bad = mgpuModuleLoadJIT(broken, 2);
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(mgpuModuleGetFunction(bad, "k"), nullptr);
  std::string error = cuda::takeError();
  EXPECT_EQ(error.rfind("mgpuModuleLoadJIT", 0), 0u) << error;
  EXPECT_FALSE(contains(error, "\n")) << error;
  mgpuModuleUnload(bad);
}

/// A dense row-major matrix on the host and its copy on the device; with
/// `bf16`, of bf16 values (f32 with the low 16 bits clear), also on the
/// device as bf16 (`device16`).
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> host;
  void *device = nullptr, *device16 = nullptr;

  Matrix(int64_t rows, int64_t cols, std::mt19937 &rng, bool bf16 = false)
      : rows(rows), cols(cols), host(static_cast<size_t>(rows * cols)) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<uint16_t> high(host.size());
    for (size_t e = 0; e < host.size(); ++e) {
      uint32_t bits;
      float v = dist(rng);
      std::memcpy(&bits, &v, sizeof(bits));
      high[e] = static_cast<uint16_t>(bits >> 16);
      if (bf16) {
        bits &= 0xffff0000u;
        std::memcpy(&v, &bits, sizeof(bits));
      }
      host[e] = v;
    }
    device = cuda::copyToDevice(host.data(), bytes(), /*accounted=*/false);
    if (bf16)
      device16 = cuda::copyToDevice(high.data(), high.size() * sizeof(uint16_t),
                                    /*accounted=*/false);
  }
  Matrix(const Matrix &) = delete;
  Matrix &operator=(const Matrix &) = delete;
  ~Matrix() {
    cuda::freeDevice(device);
    cuda::freeDevice(device16);
  }

  size_t bytes() const { return host.size() * sizeof(float); }
  /// The row-major descriptor of the device copy in f32, or in bf16.
  StridedMemRefType<float, 2> descriptor() const {
    return rowMajor(static_cast<float *>(device));
  }
  StridedMemRefType<uint16_t, 2> descriptor16() const {
    return rowMajor(static_cast<uint16_t *>(device16));
  }
  template <typename T> StridedMemRefType<T, 2> rowMajor(T *data) const {
    StridedMemRefType<T, 2> m;
    m.basePtr = m.data = data;
    m.offset = 0;
    m.sizes[0] = rows;
    m.sizes[1] = cols;
    m.strides[0] = cols;
    m.strides[1] = 1;
    return m;
  }
  std::vector<float> download() const {
    std::vector<float> out(host.size());
    EXPECT_TRUE(cuda::copyToHost(out.data(), device, bytes()));
    return out;
  }
};

/// alpha * op(A) * op(B) + beta * C in double precision, row-major [M, N].
std::vector<double> reference(bool ta, bool tb, double alpha, double beta,
                              const Matrix &A, const Matrix &B,
                              const Matrix &C) {
  int64_t M = C.rows, N = C.cols, K = ta ? A.rows : A.cols;
  std::vector<double> out(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        double a = ta ? A.host[k * A.cols + i] : A.host[i * A.cols + k];
        double b = tb ? B.host[j * B.cols + k] : B.host[k * B.cols + j];
        acc += a * b;
      }
      out[i * N + j] = alpha * acc + beta * C.host[i * N + j];
    }
  }
  return out;
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want,
                double tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < got.size(); ++e)
    ASSERT_NEAR(got[e], want[e], tol) << what << " at element " << e;
}

TEST_F(CudaDevice, SgemmMatchesDoubleReference) {
  std::mt19937 rng(11);
  const int64_t shapes[][3] = {{37, 29, 41}, {1, 7, 5}, {64, 48, 256}};
  for (bool tf32 : {false, true}) {
    cuda::setTF32(tf32);
    EXPECT_EQ(cuda::gemmBackend(), tf32 ? "cublas-tf32" : "cublas");
    for (const auto &shape : shapes) {
      int64_t M = shape[0], N = shape[1], K = shape[2];
      for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
          Matrix A(ta ? K : M, ta ? M : K, rng);
          Matrix B(tb ? N : K, tb ? K : N, rng);
          Matrix C(M, N, rng);
          ASSERT_TRUE(A.device && B.device && C.device) << cuda::takeError();
          std::vector<double> want = reference(ta, tb, 1.5, 0.5, A, B, C);
          auto a = A.descriptor(), b = B.descriptor(), c = C.descriptor();
          _mlir_ciface_rnnrt_cuda_sgemm(ta, tb, 1.5f, 0.5f, &a, &b, &c);
          ASSERT_EQ(cuda::takeError(), "");
          // TF32 keeps 10 mantissa bits of each operand.
          double tol = (tf32 ? 2e-4 : 1e-5) * static_cast<double>(K + 1) * 4;
          expectNear(C.download(), want, tol,
                     (tf32 ? "tf32 " : "fp32 ") + std::to_string(M) + "x" +
                         std::to_string(N) + "x" + std::to_string(K) + " ta=" +
                         std::to_string(ta) + " tb=" + std::to_string(tb));
        }
      }
    }
  }
  cuda::setTF32(false);
}

TEST_F(CudaDevice, Bf16GemmMatchesDoubleReference) {
  std::mt19937 rng(13);
  const int64_t shapes[][3] = {{37, 29, 41}, {1, 7, 5}, {64, 48, 256}};
  // The switch does not apply to bf16 operands.
  for (bool tf32 : {false, true}) {
    cuda::setTF32(tf32);
    for (const auto &shape : shapes) {
      int64_t M = shape[0], N = shape[1], K = shape[2];
      for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
          Matrix A(ta ? K : M, ta ? M : K, rng, /*bf16=*/true);
          Matrix B(tb ? N : K, tb ? K : N, rng, /*bf16=*/true);
          Matrix C(M, N, rng);
          ASSERT_TRUE(A.device16 && B.device16 && C.device)
              << cuda::takeError();
          std::vector<double> want = reference(ta, tb, 1.5, 0.5, A, B, C);
          auto a = A.descriptor16(), b = B.descriptor16();
          auto c = C.descriptor();
          _mlir_ciface_rnnrt_cuda_gemm_bf16(ta, tb, 1.5f, 0.5f, &a, &b, &c);
          ASSERT_EQ(cuda::takeError(), "");
          // Exact products, f32 sums.
          expectNear(C.download(), want, 1e-5 * static_cast<double>(K + 1) * 4,
                     "bf16 " + std::to_string(M) + "x" + std::to_string(N) +
                         "x" + std::to_string(K) + " ta=" + std::to_string(ta) +
                         " tb=" + std::to_string(tb));
        }
      }
    }
  }
  cuda::setTF32(false);
}

TEST_F(CudaDevice, CapturedGemmReplays) {
  std::mt19937 rng(12);
  const int64_t M = 33, N = 17, K = 20;
  Matrix A(M, K, rng), B(K, N, rng), C(M, N, rng);
  ASSERT_TRUE(A.device && B.device && C.device) << cuda::takeError();
  auto a = A.descriptor(), b = B.descriptor(), c = C.descriptor();
  std::vector<double> product = reference(false, false, 1.0, 0.0, A, B, C);

  // cuBLAS cannot start inside a capture.
  ASSERT_EQ(cuda::initializeBlas(), "");
  ASSERT_TRUE(cuda::beginCapture()) << cuda::takeError();
  EXPECT_TRUE(deviceMemory().isFrozen());
  _mlir_ciface_rnnrt_cuda_sgemm(0, 0, 1.0f, 1.0f, &a, &b, &c); // C += AB
  mgpuStreamSynchronize(mgpuStreamCreate()); // Skipped while capturing.
  cuda::Graph *graph = cuda::endCapture();
  ASSERT_NE(graph, nullptr) << cuda::takeError();
  EXPECT_FALSE(deviceMemory().isFrozen());
  // Capturing ran nothing.
  EXPECT_EQ(C.download(), C.host);

  CUevent_st *start = cuda::recordTimingEvent();
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(cuda::launchGraph(graph)) << cuda::takeError();
  CUevent_st *end = cuda::recordTimingEvent();
  ASSERT_NE(start, nullptr);
  ASSERT_NE(end, nullptr);
  EXPECT_GE(cuda::elapsedMs(start, end), 0.0);

  std::vector<double> want(product.size());
  for (size_t e = 0; e < want.size(); ++e)
    want[e] = C.host[e] + 3.0 * product[e];
  expectNear(C.download(), want, 1e-4 * (K + 1), "after 3 replays");
  cuda::destroyEvent(start);
  cuda::destroyEvent(end);
  cuda::destroyGraph(graph);
}

TEST_F(CudaDevice, AllocatingDuringCaptureFailsTheCapture) {
  MemoryAccounting &ledger = deviceMemory();
  size_t base = ledger.currentBytes();
  void *held = cuda::allocateDevice(256, /*accounted=*/true);
  ASSERT_NE(held, nullptr);
  CUstream_st *stream = mgpuStreamCreate();

  ASSERT_TRUE(cuda::beginCapture()) << cuda::takeError();
  EXPECT_FALSE(cuda::beginCapture()); // Not nested.
  EXPECT_TRUE(contains(cuda::takeError(), "already in progress"));
  EXPECT_EQ(mgpuMemAlloc(1024, stream, false), nullptr);
  std::string error = cuda::takeError();
  EXPECT_TRUE(contains(error, "during CUDA graph capture")) << error;
  EXPECT_TRUE(contains(error, "preallocated")) << error;
  mgpuMemFree(held, stream);
  EXPECT_TRUE(ledger.owns(held)); // Refused: the graph might still use it.
  EXPECT_TRUE(contains(cuda::takeError(), "freed during CUDA graph capture"));

  EXPECT_EQ(cuda::endCapture(), nullptr);
  error = cuda::takeError();
  EXPECT_EQ(error.rfind("endCapture: 2 device allocation(s) or free(s)", 0), 0u)
      << error;
  EXPECT_FALSE(ledger.isFrozen());
  EXPECT_EQ(cuda::endCapture(), nullptr); // Nothing to end any more.
  EXPECT_TRUE(contains(cuda::takeError(), "no capture in progress"));

  cuda::freeDevice(held);
  EXPECT_EQ(ledger.currentBytes(), base);
}

} // namespace
