//===- RuntimeTest.cpp - Tests for the rnnc host runtime ------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: unit tests for the host runtime: the accounting allocator (exact
// bytes, peaks, live counts, alignment, bad frees), step/phase statistics,
// the GEMM entry point against a double-precision reference for every
// transpose combination and memref layout, the GEMM planner in both its
// row-major (cblas) and column-major (cuBLAS) forms, and the JIT symbol
// table.
//
// Why: the allocator's figures are what rnnc reports as memory use, and the
// GEMM carries most of the arithmetic, so both must be exactly right. The
// runtime state is process-wide, so the allocator tests compare against a
// baseline taken at the start of each test rather than against zero.
//
//===----------------------------------------------------------------------===//

#include "GemmPlan.h"

#include "rnn/Runtime/Runtime.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace rnn::runtime;

namespace {

bool isAligned(const void *p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

//===----------------------------------------------------------------------===//
// Allocator.
//===----------------------------------------------------------------------===//

TEST(RuntimeAllocator, AccountsExactBytesPeakAndLiveCount) {
  resetCounters();
  size_t base = currentBytes();
  size_t baseLive = liveAllocations();

  void *p1 = _mlir_memref_to_llvm_alloc(100);
  void *p2 = _mlir_memref_to_llvm_alloc(1000);
  void *p3 = _mlir_memref_to_llvm_alloc(7);
  ASSERT_NE(p1, nullptr);
  ASSERT_NE(p2, nullptr);
  ASSERT_NE(p3, nullptr);
  EXPECT_TRUE(isAligned(p1, 64));
  EXPECT_TRUE(isAligned(p2, 64));
  EXPECT_TRUE(isAligned(p3, 64));
  // The memory is usable in full.
  std::memset(p1, 1, 100);
  std::memset(p2, 2, 1000);
  std::memset(p3, 3, 7);

  EXPECT_EQ(currentBytes(), base + 1107);
  EXPECT_EQ(peakBytes(), base + 1107);
  EXPECT_EQ(liveAllocations(), baseLive + 3);
  EXPECT_EQ(totalAllocations(), 3u);

  _mlir_memref_to_llvm_free(p2);
  EXPECT_EQ(currentBytes(), base + 107);
  EXPECT_EQ(peakBytes(), base + 1107);
  EXPECT_EQ(liveAllocations(), baseLive + 2);

  void *p4 = allocate(50);
  EXPECT_EQ(currentBytes(), base + 157);
  EXPECT_EQ(peakBytes(), base + 1107);
  EXPECT_EQ(totalAllocations(), 4u);

  _mlir_memref_to_llvm_free(p1);
  _mlir_memref_to_llvm_free(p3);
  deallocate(p4);
  EXPECT_EQ(currentBytes(), base);
  EXPECT_EQ(liveAllocations(), baseLive);
  EXPECT_EQ(badFrees(), 0u);
}

TEST(RuntimeAllocator, AlignedAllocHonoursAlignment) {
  size_t base = currentBytes();
  void *p128 = _mlir_memref_to_llvm_aligned_alloc(128, 33);
  void *p256 = _mlir_memref_to_llvm_aligned_alloc(256, 1000);
  void *p8 = _mlir_memref_to_llvm_aligned_alloc(8, 5);
  void *p100 = _mlir_memref_to_llvm_aligned_alloc(100, 10); // Not a power of 2.
  ASSERT_NE(p128, nullptr);
  ASSERT_NE(p256, nullptr);
  ASSERT_NE(p8, nullptr);
  ASSERT_NE(p100, nullptr);
  EXPECT_TRUE(isAligned(p128, 128));
  EXPECT_TRUE(isAligned(p256, 256));
  EXPECT_TRUE(isAligned(p8, 64)); // Never less than 64.
  EXPECT_TRUE(isAligned(p100, 128));
  // Exactly the requested bytes are accounted, not the rounded sizes.
  EXPECT_EQ(currentBytes(), base + 33 + 1000 + 5 + 10);
  _mlir_memref_to_llvm_free(p128);
  _mlir_memref_to_llvm_free(p256);
  _mlir_memref_to_llvm_free(p8);
  _mlir_memref_to_llvm_free(p100);
  EXPECT_EQ(currentBytes(), base);
}

// Compiled code cannot handle a null buffer: a failed allocation of it ends
// the process with one line and exit status 2 instead of a crash later.
TEST(RuntimeAllocatorDeathTest, FailedAllocationOfCompiledCodeExits2) {
  EXPECT_EXIT(_mlir_memref_to_llvm_alloc(SIZE_MAX - 8),
              testing::ExitedWithCode(2),
              "^rnnrt: out of host memory: allocating [0-9]+ bytes failed "
              "\\([0-9]+ bytes held by the program\\)\n$");
  EXPECT_EXIT(_mlir_memref_to_llvm_aligned_alloc(64, SIZE_MAX - 8),
              testing::ExitedWithCode(2), "out of host memory");
}

TEST(RuntimeAllocator, ZeroByteAllocationIsTracked) {
  size_t base = currentBytes();
  size_t baseLive = liveAllocations();
  void *p = _mlir_memref_to_llvm_alloc(0);
  void *q = _mlir_memref_to_llvm_alloc(0);
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p, q);
  EXPECT_EQ(currentBytes(), base);
  EXPECT_EQ(liveAllocations(), baseLive + 2);
  size_t bad = badFrees();
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(q);
  EXPECT_EQ(liveAllocations(), baseLive);
  EXPECT_EQ(badFrees(), bad);
}

TEST(RuntimeAllocator, BadFreeIsCountedAndHarmless) {
  resetCounters();
  size_t base = currentBytes();
  size_t baseLive = liveAllocations();
  int onStack = 0;
  _mlir_memref_to_llvm_free(&onStack);
  EXPECT_EQ(badFrees(), 1u);

  void *p = _mlir_memref_to_llvm_alloc(64);
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(p); // Double free.
  EXPECT_EQ(badFrees(), 2u);
  EXPECT_EQ(currentBytes(), base);
  EXPECT_EQ(liveAllocations(), baseLive);

  resetCounters();
  EXPECT_EQ(badFrees(), 0u);
}

TEST(RuntimeAllocator, FreeNullIsNoOp) {
  size_t bad = badFrees();
  size_t live = liveAllocations();
  size_t cur = currentBytes();
  _mlir_memref_to_llvm_free(nullptr);
  deallocate(nullptr);
  EXPECT_EQ(badFrees(), bad);
  EXPECT_EQ(liveAllocations(), live);
  EXPECT_EQ(currentBytes(), cur);
}

//===----------------------------------------------------------------------===//
// Steps and phases.
//===----------------------------------------------------------------------===//

TEST(RuntimeStep, WithoutPhaseMarkerEverythingIsForward) {
  void *held = allocate(100); // Live across the step.
  size_t base = currentBytes();
  // A peak before the step must not leak into it.
  deallocate(allocate(1 << 20));
  beginStep();
  EXPECT_TRUE(inStep());
  EXPECT_EQ(peakBytes(), base);
  void *a = allocate(1000);
  deallocate(a);
  void *b = allocate(500);
  StepStats s = endStep();
  EXPECT_FALSE(inStep());
  EXPECT_FALSE(s.sawBackward);
  EXPECT_EQ(s.fwdPeakBytes, base + 1000);
  EXPECT_EQ(s.peakBytes, base + 1000);
  EXPECT_EQ(s.bwdPeakBytes, 0u);
  EXPECT_EQ(s.bytesAtBackwardStart, 0u);
  EXPECT_EQ(s.bytesAtEnd, base + 500);
  EXPECT_EQ(s.bwdMs, 0.0);
  EXPECT_EQ(s.fwdMs, s.totalMs);
  EXPECT_GE(s.totalMs, 0.0);
  deallocate(b);
  deallocate(held);
}

TEST(RuntimeStep, PhaseMarkerSplitsPeaksAndTime) {
  void *held = allocate(100);
  size_t base = currentBytes();
  beginStep();
  void *w = allocate(1000);
  void *big = allocate(2000); // Forward peak: base + 3000.
  deallocate(big);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  rnnrt_begin_phase(1);     // Boundary at base + 1000.
  void *g1 = allocate(500); // base + 1500: backward peak.
  deallocate(w);            // base + 500.
  void *g2 = allocate(300); // base + 800.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  StepStats s = endStep();
  EXPECT_TRUE(s.sawBackward);
  EXPECT_EQ(s.fwdPeakBytes, base + 3000);
  EXPECT_EQ(s.bytesAtBackwardStart, base + 1000);
  EXPECT_EQ(s.bwdPeakBytes, base + 1500);
  EXPECT_EQ(s.peakBytes, base + 3000);
  EXPECT_EQ(s.bytesAtEnd, base + 800);
  EXPECT_GE(s.fwdMs, 4.0);
  EXPECT_GE(s.bwdMs, 4.0);
  EXPECT_NEAR(s.totalMs, s.fwdMs + s.bwdMs, 1e-6);
  deallocate(g1);
  deallocate(g2);
  deallocate(held);
}

TEST(RuntimeStep, BackwardPeakCanExceedForwardPeak) {
  size_t base = currentBytes();
  beginStep();
  void *a = allocate(10);
  rnnrt_begin_phase(1);
  void *b = allocate(4000);
  deallocate(b);
  StepStats s = endStep();
  EXPECT_EQ(s.fwdPeakBytes, base + 10);
  EXPECT_EQ(s.bytesAtBackwardStart, base + 10);
  EXPECT_EQ(s.bwdPeakBytes, base + 4010);
  EXPECT_EQ(s.peakBytes, base + 4010);
  // Freeing in the backward phase does not lower the boundary figure, and a
  // backward phase without allocations still reports the boundary bytes.
  beginStep();
  rnnrt_begin_phase(1);
  deallocate(a);
  s = endStep();
  EXPECT_EQ(s.fwdPeakBytes, base + 10); // Live at beginStep().
  EXPECT_EQ(s.bwdPeakBytes, base + 10);
  EXPECT_EQ(s.bytesAtEnd, base);
}

TEST(RuntimeStep, MarkersOutsideStepOrRepeatedAreHarmless) {
  rnnrt_begin_phase(1); // No step in progress.
  StepStats none = endStep();
  EXPECT_FALSE(none.sawBackward);
  EXPECT_EQ(none.totalMs, 0.0);

  size_t base = currentBytes();
  beginStep();
  EXPECT_FALSE(endStep().sawBackward); // The stray marker did not stick.

  beginStep();
  rnnrt_begin_phase(0); // Phase 0 is the forward phase already.
  void *a = allocate(200);
  rnnrt_begin_phase(1);
  void *b = allocate(300);
  rnnrt_begin_phase(1); // Only the first boundary counts.
  StepStats s = endStep();
  EXPECT_TRUE(s.sawBackward);
  EXPECT_EQ(s.bytesAtBackwardStart, base + 200);
  EXPECT_EQ(s.fwdPeakBytes, base + 200);
  EXPECT_EQ(s.bwdPeakBytes, base + 500);
  deallocate(a);
  deallocate(b);
}

//===----------------------------------------------------------------------===//
// GEMM.
//===----------------------------------------------------------------------===//

using Memref2D = StridedMemRefType<float, 2>;

/// A matrix stored in a buffer of its own, with a descriptor viewing it.
/// Elements outside the view are filled with a sentinel so that stray writes
/// can be detected.
struct Stored {
  std::vector<float> buffer;
  Memref2D desc;

  float &operator()(int64_t r, int64_t c) {
    return desc.data[desc.offset + r * desc.strides[0] + c * desc.strides[1]];
  }
};

constexpr float kSentinel = -12345.0f;

/// Creates a [rows, cols] matrix with the given offset and strides, filled
/// with random values from `rng`. The buffer is sized to hold every element
/// addressed by the view (non-negative strides assumed).
Stored makeMatrix(int64_t rows, int64_t cols, int64_t offset, int64_t s0,
                  int64_t s1, std::mt19937 &rng) {
  Stored m;
  int64_t extent = offset + 1;
  if (rows > 0 && cols > 0)
    extent += (rows - 1) * s0 + (cols - 1) * s1;
  m.buffer.assign(static_cast<size_t>(extent), kSentinel);
  m.desc.basePtr = m.buffer.data();
  m.desc.data = m.buffer.data();
  m.desc.offset = offset;
  m.desc.sizes[0] = rows;
  m.desc.sizes[1] = cols;
  m.desc.strides[0] = s0;
  m.desc.strides[1] = s1;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      m(r, c) = dist(rng);
  return m;
}

Stored rowMajor(int64_t rows, int64_t cols, int64_t ld, int64_t offset,
                std::mt19937 &rng) {
  return makeMatrix(rows, cols, offset, ld, 1, rng);
}

Stored colMajor(int64_t rows, int64_t cols, int64_t ld, int64_t offset,
                std::mt19937 &rng) {
  return makeMatrix(rows, cols, offset, 1, ld, rng);
}

/// Double-precision reference: returns alpha * op(A) * op(B) + beta * C as a
/// dense row-major [M, N] array (C is read only if beta != 0).
std::vector<double> reference(bool ta, bool tb, double alpha, double beta,
                              Stored &A, Stored &B, Stored &C) {
  int64_t M = C.desc.sizes[0], N = C.desc.sizes[1];
  int64_t K = ta ? A.desc.sizes[0] : A.desc.sizes[1];
  std::vector<double> out(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        double a = ta ? A(k, i) : A(i, k);
        double b = tb ? B(j, k) : B(k, j);
        acc += a * b;
      }
      out[i * N + j] = alpha * acc + (beta == 0.0 ? 0.0 : beta * C(i, j));
    }
  }
  return out;
}

/// Runs the GEMM and compares with the reference; also checks that nothing
/// outside C's view was written.
void checkGemm(bool ta, bool tb, float alpha, float beta, Stored &A, Stored &B,
               Stored &C) {
  std::vector<double> want = reference(ta, tb, alpha, beta, A, B, C);
  std::vector<float> before = C.buffer;
  _mlir_ciface_rnnrt_sgemm(ta, tb, alpha, beta, &A.desc, &B.desc, &C.desc);
  int64_t M = C.desc.sizes[0], N = C.desc.sizes[1];
  int64_t K = ta ? A.desc.sizes[0] : A.desc.sizes[1];
  double tol = 1e-5 * static_cast<double>(K + 1) * 4.0;
  std::vector<bool> inView(C.buffer.size(), false);
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      inView[&C(i, j) - C.buffer.data()] = true;
      ASSERT_NEAR(C(i, j), want[i * N + j], tol)
          << "at (" << i << "," << j << ") ta=" << ta << " tb=" << tb;
    }
  }
  for (size_t e = 0; e < C.buffer.size(); ++e) {
    if (!inView[e]) {
      ASSERT_EQ(C.buffer[e], before[e]) << "write outside C at " << e;
    }
  }
}

/// Stored shape of an operand given its logical (op) shape [r, c].
void storedShape(bool trans, int64_t r, int64_t c, int64_t &sr, int64_t &sc) {
  sr = trans ? c : r;
  sc = trans ? r : c;
}

TEST(RuntimeGemm, AllTransposeCombinationsDense) {
  std::mt19937 rng(1);
  const int64_t shapes[][3] = {{5, 7, 3}, {37, 29, 41}, {1, 9, 4}, {6, 1, 1}};
  for (const auto &shape : shapes) {
    int64_t M = shape[0], N = shape[1], K = shape[2];
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        int64_t ar, ac, br, bc;
        storedShape(ta, M, K, ar, ac);
        storedShape(tb, K, N, br, bc);
        Stored A = rowMajor(ar, ac, ac, 0, rng);
        Stored B = rowMajor(br, bc, bc, 0, rng);
        Stored C = rowMajor(M, N, N, 0, rng);
        checkGemm(ta, tb, 1.5f, 0.5f, A, B, C);
      }
    }
  }
}

// Remat policies rely on one property of the BLAS only: the same call (same
// shapes, transpositions and leading dimensions) gives the same bits, also
// when its operands sit at other addresses (a block of saved gates vs the
// same block in replay scratch). Every call is counted.
TEST(RuntimeGemm, SameCallSameBitsAtAnyAddress) {
  std::mt19937 rng(7);
  // (M, K, N): a step's recurrent product, a block's projection and weight
  // gradient, a bias GEMV, and sizes no kernel path divides evenly.
  const int64_t shapes[][3] = {
      {4, 21, 84}, {12, 13, 84}, {1, 40, 28}, {256, 256, 1024}, {37, 5, 3}};
  for (const auto &shape : shapes) {
    int64_t M = shape[0], K = shape[1], N = shape[2];
    for (int ta = 0; ta < 2; ++ta) {
      int64_t ar, ac;
      storedShape(ta, M, K, ar, ac);
      Stored A = rowMajor(ar, ac, ac, 0, rng);
      Stored W = rowMajor(N, K, K, 0, rng);
      Stored first = rowMajor(M, N, N, 0, rng);
      size_t before = rnn::runtime::gemmCalls();
      _mlir_ciface_rnnrt_sgemm(ta, 1, 1.0f, 1.0f, &A.desc, &W.desc,
                               &first.desc);
      EXPECT_EQ(rnn::runtime::gemmCalls(), before + 1);
      // The same operands, one float further into other buffers.
      for (int64_t shift : {1, 3, 16}) {
        Stored A2 = rowMajor(ar, ac, ac, shift, rng);
        Stored W2 = rowMajor(N, K, K, shift, rng);
        Stored C2 = rowMajor(M, N, N, shift, rng);
        for (int64_t r = 0; r < ar; ++r)
          for (int64_t c = 0; c < ac; ++c)
            A2(r, c) = A(r, c);
        for (int64_t r = 0; r < N; ++r)
          for (int64_t c = 0; c < K; ++c)
            W2(r, c) = W(r, c);
        Stored again = rowMajor(M, N, N, 0, rng);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j)
            C2(i, j) = again(i, j);
        _mlir_ciface_rnnrt_sgemm(ta, 1, 1.0f, 1.0f, &A2.desc, &W2.desc,
                                 &C2.desc);
        _mlir_ciface_rnnrt_sgemm(ta, 1, 1.0f, 1.0f, &A.desc, &W.desc,
                                 &again.desc);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j)
            ASSERT_EQ(C2(i, j), again(i, j))
                << "M=" << M << " K=" << K << " N=" << N << " transA=" << ta
                << " shift " << shift << ", at (" << i << "," << j << ")";
      }
    }
  }
}

TEST(RuntimeGemm, OffsetsAndPaddedLeadingDimensions) {
  std::mt19937 rng(2);
  const int64_t M = 13, N = 11, K = 17;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      int64_t ar, ac, br, bc;
      storedShape(ta, M, K, ar, ac);
      storedShape(tb, K, N, br, bc);
      Stored A = rowMajor(ar, ac, ac + 4, 3, rng);
      Stored B = rowMajor(br, bc, bc + 7, 5, rng);
      Stored C = rowMajor(M, N, N + 3, 9, rng);
      checkGemm(ta, tb, -0.75f, 2.0f, A, B, C);
    }
  }
}

TEST(RuntimeGemm, AlphaBetaHandling) {
  std::mt19937 rng(3);
  const int64_t M = 8, N = 6, K = 5;
  {
    // beta == 0: C is not read, so NaNs in it must not survive.
    Stored A = rowMajor(M, K, K, 0, rng);
    Stored B = rowMajor(K, N, N, 0, rng);
    Stored C = rowMajor(M, N, N, 0, rng);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        C(i, j) = std::numeric_limits<float>::quiet_NaN();
    checkGemm(false, false, 2.0f, 0.0f, A, B, C);
  }
  {
    // alpha == 0: C = beta * C.
    Stored A = rowMajor(M, K, K, 0, rng);
    Stored B = rowMajor(N, K, K, 0, rng);
    Stored C = rowMajor(M, N, N, 0, rng);
    float c00 = C(0, 0);
    checkGemm(false, true, 0.0f, 3.0f, A, B, C);
    EXPECT_FLOAT_EQ(C(0, 0), 3.0f * c00);
  }
  {
    // Accumulation: C = -2 * A * B + C.
    Stored A = rowMajor(K, M, M, 0, rng);
    Stored B = rowMajor(K, N, N, 0, rng);
    Stored C = rowMajor(M, N, N, 0, rng);
    checkGemm(true, false, -2.0f, 1.0f, A, B, C);
  }
  {
    // K == 0: C = beta * C.
    Stored A = rowMajor(M, 0, 1, 0, rng);
    Stored B = rowMajor(0, N, N, 0, rng);
    Stored C = rowMajor(M, N, N, 0, rng);
    float c12 = C(1, 2);
    checkGemm(false, false, 1.0f, 0.5f, A, B, C);
    EXPECT_FLOAT_EQ(C(1, 2), 0.5f * c12);
  }
}

TEST(RuntimeGemm, ColumnMajorViews) {
  std::mt19937 rng(4);
  const int64_t M = 9, N = 14, K = 6;
  // Every operand in each layout (row- or column-major, padded), for every
  // transpose combination.
  for (int layout = 0; layout < 8; ++layout) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        int64_t ar, ac, br, bc;
        storedShape(ta, M, K, ar, ac);
        storedShape(tb, K, N, br, bc);
        Stored A = (layout & 1) ? colMajor(ar, ac, ar + 2, 1, rng)
                                : rowMajor(ar, ac, ac + 1, 2, rng);
        Stored B = (layout & 2) ? colMajor(br, bc, br + 3, 4, rng)
                                : rowMajor(br, bc, bc, 0, rng);
        Stored C = (layout & 4) ? colMajor(M, N, M + 1, 3, rng)
                                : rowMajor(M, N, N + 2, 1, rng);
        checkGemm(ta, tb, 1.25f, -0.5f, A, B, C);
      }
    }
  }
}

TEST(RuntimeGemm, IrregularStridesFallBack) {
  std::mt19937 rng(5);
  const int64_t M = 4, N = 5, K = 3;
  // Non-unit strides in both dimensions.
  Stored A = makeMatrix(M, K, 2, /*s0=*/2 * K + 1, /*s1=*/2, rng);
  Stored B = rowMajor(K, N, N, 0, rng);
  Stored C = makeMatrix(M, N, 1, /*s0=*/3, /*s1=*/N * 3 + 1, rng);
  checkGemm(false, false, 1.0f, 1.0f, A, B, C);
  // A broadcast operand (stride 0 across rows); with beta == 0 the loop,
  // like BLAS, must not read C, so NaNs in it must not survive.
  Stored Bb = makeMatrix(K, N, 0, /*s0=*/0, /*s1=*/1, rng);
  Stored C2 = rowMajor(M, N, N, 0, rng);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      C2(i, j) = std::numeric_limits<float>::quiet_NaN();
  checkGemm(false, false, 0.5f, 0.0f, A, Bb, C2);
}

TEST(RuntimeGemmDeathTest, ShapeMismatchAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::mt19937 rng(6);
  Stored A = rowMajor(4, 3, 3, 0, rng);
  Stored B = rowMajor(5, 2, 2, 0, rng); // K mismatch: 3 vs 5.
  Stored C = rowMajor(4, 2, 2, 0, rng);
  EXPECT_DEATH(
      _mlir_ciface_rnnrt_sgemm(0, 0, 1.0f, 0.0f, &A.desc, &B.desc, &C.desc),
      "rnnrt_sgemm: shape mismatch");
  // M mismatch once A is transposed: op(A) is [3, 4] but C has 4 rows.
  Stored B2 = rowMajor(3, 2, 2, 0, rng);
  EXPECT_DEATH(
      _mlir_ciface_rnnrt_sgemm(1, 0, 1.0f, 0.0f, &A.desc, &B2.desc, &C.desc),
      "rnnrt_sgemm: shape mismatch");
}

//===----------------------------------------------------------------------===//
// GEMM planning, shared by the CPU and CUDA entry points.
//===----------------------------------------------------------------------===//

/// A deep copy of `m` whose descriptor views the copy's buffer.
Stored clone(const Stored &m) {
  Stored c = m;
  c.desc.basePtr = c.buffer.data();
  c.desc.data = c.buffer.data();
  return c;
}

/// Executes a planned row-major call the way cblas_sgemm would.
void runRowMajor(const gemm::RowMajorCall &call, float alpha, float beta) {
  for (int i = 0; i < call.M; ++i) {
    for (int j = 0; j < call.N; ++j) {
      double acc = 0.0;
      for (int l = 0; l < call.K; ++l) {
        float a =
            call.transA ? call.a[l * call.lda + i] : call.a[i * call.lda + l];
        float b =
            call.transB ? call.b[j * call.ldb + l] : call.b[l * call.ldb + j];
        acc += static_cast<double>(a) * b;
      }
      float &c = call.c[i * call.ldc + j];
      c = static_cast<float>(alpha * acc) + (beta == 0.0f ? 0.0f : beta * c);
    }
  }
}

/// Executes a column-major call the way cublasSgemm would, after checking
/// the leading-dimension rules cuBLAS enforces.
void runColumnMajor(const gemm::ColumnMajorCall &call, float alpha,
                    float beta) {
  ASSERT_GE(call.lda, std::max(1, call.transA ? call.k : call.m));
  ASSERT_GE(call.ldb, std::max(1, call.transB ? call.n : call.k));
  ASSERT_GE(call.ldc, std::max(1, call.m));
  for (int i = 0; i < call.m; ++i) {
    for (int j = 0; j < call.n; ++j) {
      double acc = 0.0;
      for (int l = 0; l < call.k; ++l) {
        float a =
            call.transA ? call.a[l + i * call.lda] : call.a[i + l * call.lda];
        float b =
            call.transB ? call.b[j + l * call.ldb] : call.b[l + j * call.ldb];
        acc += static_cast<double>(a) * b;
      }
      float &c = call.c[i + j * call.ldc];
      c = static_cast<float>(alpha * acc) + (beta == 0.0f ? 0.0f : beta * c);
    }
  }
}

/// Plans `C = alpha op(A) op(B) + beta C` and checks that both the row-major
/// call and its column-major form compute the reference, on copies of C.
void checkPlans(bool ta, bool tb, float alpha, float beta, Stored &A, Stored &B,
                const Stored &C) {
  Stored viaRows = clone(C), viaColumns = clone(C), reference0 = clone(C);
  std::vector<double> want = reference(ta, tb, alpha, beta, A, B, reference0);
  gemm::Sizes sizes =
      gemm::checkShapes("test", ta, tb, &A.desc, &B.desc, &C.desc);
  gemm::RowMajorCall rows, columns;
  ASSERT_TRUE(
      gemm::planRowMajor(ta, tb, A.desc, B.desc, viaRows.desc, sizes, rows));
  ASSERT_TRUE(gemm::planRowMajor(ta, tb, A.desc, B.desc, viaColumns.desc, sizes,
                                 columns));
  runRowMajor(rows, alpha, beta);
  runColumnMajor(gemm::toColumnMajor(columns), alpha, beta);
  double tol = 1e-5 * static_cast<double>(sizes.K + 1) * 4.0;
  for (int64_t i = 0; i < sizes.M; ++i) {
    for (int64_t j = 0; j < sizes.N; ++j) {
      ASSERT_NEAR(viaRows(i, j), want[i * sizes.N + j], tol)
          << "row-major at (" << i << "," << j << ") ta=" << ta << " tb=" << tb;
      ASSERT_NEAR(viaColumns(i, j), want[i * sizes.N + j], tol)
          << "column-major at (" << i << "," << j << ") ta=" << ta
          << " tb=" << tb;
    }
  }
  for (size_t e = 0; e < C.buffer.size(); ++e) {
    if (C.buffer[e] == kSentinel) {
      ASSERT_EQ(viaRows.buffer[e], kSentinel) << "row-major wrote outside C";
      ASSERT_EQ(viaColumns.buffer[e], kSentinel)
          << "column-major wrote outside C";
    }
  }
}

TEST(RuntimeGemmPlan, RowAndColumnMajorCallsMatchReference) {
  std::mt19937 rng(7);
  const int64_t shapes[][3] = {{9, 14, 6}, {1, 5, 3}, {4, 1, 2}, {3, 4, 0}};
  for (const auto &shape : shapes) {
    int64_t M = shape[0], N = shape[1], K = shape[2];
    for (int layout = 0; layout < 8; ++layout) {
      for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
          int64_t ar, ac, br, bc;
          storedShape(ta, M, K, ar, ac);
          storedShape(tb, K, N, br, bc);
          Stored A = (layout & 1) ? colMajor(ar, ac, ar + 2, 1, rng)
                                  : rowMajor(ar, ac, ac + 1, 2, rng);
          Stored B = (layout & 2) ? colMajor(br, bc, br + 3, 4, rng)
                                  : rowMajor(br, bc, bc, 0, rng);
          Stored C = (layout & 4) ? colMajor(M, N, M + 1, 3, rng)
                                  : rowMajor(M, N, N + 2, 1, rng);
          checkPlans(ta, tb, 1.25f, -0.5f, A, B, C);
        }
      }
    }
  }
}

TEST(RuntimeGemmPlan, IrregularLayoutsAndHugeSizesAreNotPlanned) {
  std::mt19937 rng(8);
  Stored A = makeMatrix(4, 3, 0, /*s0=*/7, /*s1=*/2, rng);
  Stored B = rowMajor(3, 5, 5, 0, rng);
  Stored C = rowMajor(4, 5, 5, 0, rng);
  Stored broadcast = makeMatrix(3, 5, 0, /*s0=*/0, /*s1=*/1, rng);
  gemm::Sizes sizes{4, 5, 3};
  gemm::RowMajorCall call;
  EXPECT_FALSE(
      gemm::planRowMajor(false, false, A.desc, B.desc, C.desc, sizes, call));
  Stored A2 = rowMajor(4, 3, 3, 0, rng);
  EXPECT_FALSE(gemm::planRowMajor(false, false, A2.desc, broadcast.desc, C.desc,
                                  sizes, call));
  EXPECT_TRUE(
      gemm::planRowMajor(false, false, A2.desc, B.desc, C.desc, sizes, call));
  gemm::Sizes huge{int64_t(INT_MAX) + 1, 5, 3};
  EXPECT_FALSE(
      gemm::planRowMajor(false, false, A2.desc, B.desc, C.desc, huge, call));
}

TEST(RuntimeGemm, BackendDescription) {
  setBlasThreads(1);
  std::string desc = gemmBackend();
  EXPECT_EQ(desc.rfind("openblas cblas_sgemm, 1 thread", 0), 0u) << desc;
  EXPECT_EQ(desc.find("threads"), std::string::npos) << desc;
  std::string f64 = gemmBackend(/*f64=*/true);
  EXPECT_EQ(f64.rfind("openblas cblas_dgemm, 1 thread", 0), 0u) << f64;
}

/// rnnrt_dgemm, the f64 entry point: every transposition of row-major
/// operands, a column-major C (computed as C^T) and a broadcast A (the loop
/// fallback), against a long double reference to 1e-13 relative.
TEST(RuntimeGemm, DoublePrecisionEntryPoint) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  struct Matrix {
    std::vector<double> buffer;
    StridedMemRefType<double, 2> desc;
    double at(int64_t r, int64_t c) const {
      return desc.data[desc.offset + r * desc.strides[0] + c * desc.strides[1]];
    }
  };
  auto make = [&](int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
    Matrix m;
    int64_t extent = 1 + (rows - 1) * s0 + (cols - 1) * s1;
    m.buffer.resize(extent);
    for (double &v : m.buffer)
      v = dist(rng);
    m.desc.basePtr = m.desc.data = m.buffer.data();
    m.desc.offset = 0;
    m.desc.sizes[0] = rows;
    m.desc.sizes[1] = cols;
    m.desc.strides[0] = s0;
    m.desc.strides[1] = s1;
    return m;
  };
  const int64_t M = 13, N = 9, K = 17;
  for (int layout = 0; layout < 6; ++layout) {
    // Layouts 0-3: the transpositions; 4: column-major C; 5: broadcast A.
    bool ta = layout < 4 && (layout & 1), tb = layout < 4 && (layout & 2);
    bool colC = layout == 4, broadcastA = layout == 5;
    Matrix A = broadcastA ? make(M, K, 0, 1)
               : ta       ? make(K, M, M, 1)
                          : make(M, K, K, 1);
    Matrix B = tb ? make(N, K, K, 1) : make(K, N, N, 1);
    Matrix C = colC ? make(M, N, 1, M) : make(M, N, N, 1);
    std::vector<long double> want(M * N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        long double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += static_cast<long double>(ta ? A.at(k, i) : A.at(i, k)) *
                 (tb ? B.at(j, k) : B.at(k, j));
        want[i * N + j] = 1.5L * acc + 0.5L * C.at(i, j);
      }
    _mlir_ciface_rnnrt_dgemm(ta, tb, 1.5, 0.5, &A.desc, &B.desc, &C.desc);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        ASSERT_NEAR(C.at(i, j), static_cast<double>(want[i * N + j]), 1e-13)
            << "layout " << layout << " at (" << i << "," << j << ")";
  }
}

//===----------------------------------------------------------------------===//
// JIT symbols.
//===----------------------------------------------------------------------===//

TEST(RuntimeJit, SymbolTableListsEntryPoints) {
  auto symbols = jitSymbols();
  auto lookup = [&](const std::string &name) -> void * {
    for (const auto &entry : symbols)
      if (name == entry.first)
        return entry.second;
    return nullptr;
  };
  EXPECT_EQ(symbols.size(), 6u);
  EXPECT_EQ(lookup("_mlir_memref_to_llvm_alloc"),
            reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc));
  EXPECT_EQ(lookup("_mlir_memref_to_llvm_aligned_alloc"),
            reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc));
  EXPECT_EQ(lookup("_mlir_memref_to_llvm_free"),
            reinterpret_cast<void *>(&_mlir_memref_to_llvm_free));
  EXPECT_EQ(lookup("rnnrt_begin_phase"),
            reinterpret_cast<void *>(&rnnrt_begin_phase));
  EXPECT_EQ(lookup("_mlir_ciface_rnnrt_sgemm"),
            reinterpret_cast<void *>(&_mlir_ciface_rnnrt_sgemm));
  EXPECT_EQ(lookup("_mlir_ciface_rnnrt_dgemm"),
            reinterpret_cast<void *>(&_mlir_ciface_rnnrt_dgemm));

  // Calling through the table reaches the accounting allocator.
  using AllocFn = void *(*)(size_t);
  using FreeFn = void (*)(void *);
  size_t base = currentBytes();
  void *p = reinterpret_cast<AllocFn>(lookup("_mlir_memref_to_llvm_alloc"))(24);
  EXPECT_EQ(currentBytes(), base + 24);
  reinterpret_cast<FreeFn>(lookup("_mlir_memref_to_llvm_free"))(p);
  EXPECT_EQ(currentBytes(), base);
}

} // namespace
