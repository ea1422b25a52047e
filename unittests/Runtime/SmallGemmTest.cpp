//===- SmallGemmTest.cpp - The kernel for GEMMs of few rows ---------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Each form of the kernel of SmallGemm.h (AVX-512, AVX2) against a float64
// reference (every row count it takes, column and depth remainders, padded
// leading dimensions, alpha and beta), the independence of each element's
// bits from the rest of the call that the remat policies rely on, and
// which calls rnnrt_sgemm gives it. A form this CPU cannot run takes no
// call, and the tests check that instead (runsOnThisCpu).
//
//===----------------------------------------------------------------------===//

#include "SmallGemm.h"

#include "rnn/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace rnn::runtime::gemm;

namespace {

/// A row-major [rows, cols] matrix with leading dimension `ld` >= cols,
/// the padding filled with a sentinel that must never change.
struct Matrix {
  int rows, cols, ld;
  std::vector<float> data;

  Matrix(int rows, int cols, int ld, std::mt19937 &rng)
      : rows(rows), cols(cols), ld(ld),
        data(static_cast<size_t>(rows) * ld, kSentinel) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        at(r, c) = dist(rng);
  }
  float &at(int r, int c) { return data[static_cast<size_t>(r) * ld + c]; }

  static constexpr float kSentinel = -12345.0f;
};

/// The call C = alpha * A * op(B) + beta * C on the matrices, op(B) = B^T
/// ([N,K] stored) or B ([K,N] stored).
RowMajorCall callOf(Matrix &A, Matrix &B, Matrix &C, bool transB = true) {
  RowMajorCall call;
  call.transA = false;
  call.transB = transB;
  call.M = A.rows;
  call.N = C.cols;
  call.K = A.cols;
  call.a = A.data.data();
  call.lda = A.ld;
  call.b = B.data.data();
  call.ldb = B.ld;
  call.c = C.data.data();
  call.ldc = C.ld;
  return call;
}

/// Runs the kernel on one shape and compares with float64 sums, within the
/// float32 rounding bound of a K-term dot product; the padding of C must
/// be untouched.
void checkShape(SmallGemmIsa isa, bool transB, int M, int N, int K, float alpha,
                float beta, int pad, std::mt19937 &rng) {
  Matrix A(M, K, K + pad, rng), C(M, N, N + pad, rng);
  Matrix B = transB ? Matrix(N, K, K + pad, rng) : Matrix(K, N, N + pad, rng);
  auto b = [&](int n, int k) { return transB ? B.at(n, k) : B.at(k, n); };
  std::vector<double> want(static_cast<size_t>(M) * N);
  std::vector<double> bound(want.size());
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double sum = 0.0, abs = 0.0;
      for (int k = 0; k < K; ++k) {
        sum += static_cast<double>(A.at(m, k)) * b(n, k);
        abs += std::fabs(static_cast<double>(A.at(m, k)) * b(n, k));
      }
      double prior =
          beta == 0.0f ? 0.0 : static_cast<double>(beta) * C.at(m, n);
      want[m * N + n] = alpha * sum + prior;
      bound[m * N + n] = (K + 2) * FLT_EPSILON *
                         (std::fabs(alpha) * abs + std::fabs(prior) + 1e-30);
    }
  }
  if (beta == 0.0f) // Not read: BLAS semantics.
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n)
        C.at(m, n) = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(runSmallGemmWith(isa, callOf(A, B, C, transB), alpha, beta));
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      ASSERT_LE(std::fabs(C.at(m, n) - want[m * N + n]), bound[m * N + n])
          << smallGemmName(isa) << " " << (transB ? "A*B^T" : "A*B")
          << " M=" << M << " N=" << N << " K=" << K << " alpha=" << alpha
          << " beta=" << beta << " at (" << m << "," << n << ")";
  for (int m = 0; m < M; ++m)
    for (int c = N; c < C.ld; ++c)
      ASSERT_EQ(C.at(m, c), Matrix::kSentinel) << "wrote padding";
}

/// The kernel's forms.
constexpr SmallGemmIsa kForms[] = {SmallGemmIsa::Avx512, SmallGemmIsa::Avx2};

/// Whether the form `isa` runs on this CPU. Where it does not, checks that
/// it declines a call it would otherwise take, leaving C as it was, which
/// is then all there is to test of it.
bool runsOnThisCpu(SmallGemmIsa isa) {
  if (smallGemmSupports(isa))
    return true;
  std::mt19937 rng(3);
  Matrix A(4, 8, 8, rng), B(6, 8, 8, rng), C(4, 6, 6, rng);
  std::vector<float> before = C.data;
  EXPECT_FALSE(runSmallGemmWith(isa, callOf(A, B, C), 1.0f, 0.0f));
  EXPECT_EQ(C.data, before);
  return false;
}

TEST(SmallGemm, MatchesFloat64Reference) {
  for (SmallGemmIsa isa : kForms) {
    if (!runsOnThisCpu(isa))
      continue;
    std::mt19937 rng(11);
    for (bool transB : {true, false}) {
      const int rows = smallGemmMaxRows(isa, transB);
      for (int M = 1; M <= rows; ++M)
        for (int N : {1, 3, 4, 5, 8, 15, 16, 17, 33, 64, 70})
          for (int K : {1, 7, 8, 9, 15, 16, 17, 31, 48, 65})
            checkShape(isa, transB, M, N, K, 1.0f, 0.0f, (M + N + K) % 3, rng);
      if (rows == 0)
        continue;
      // A step's shapes: the products of the forward and of the backward.
      checkShape(isa, transB, std::min(8, rows), 1024, 256, 1.0f, 0.0f, 0, rng);
      checkShape(isa, transB, rows, 512, 128, 1.0f, 1.0f, 0, rng);
      for (float alpha : {1.0f, 0.5f, -2.0f})
        for (float beta : {0.0f, 1.0f, -0.25f})
          checkShape(isa, transB, std::min(5, rows), 39, 37, alpha, beta, 2,
                     rng);
    }
  }
}

// Each element of C is computed from its row of A, its row (B^T) or
// column (B) of B, and K alone: any sub-call over some of the rows and
// columns gives the same bits, at any address.
TEST(SmallGemm, ElementBitsDependOnTheirRowsOnly) {
  for (SmallGemmIsa isa : kForms)
    for (bool transB : {true, false}) {
      const int M = smallGemmMaxRows(isa, transB), N = 37, K = 83;
      if (!runsOnThisCpu(isa) || M == 0)
        continue;
      std::mt19937 rng(5);
      Matrix A(M, K, K, rng), C(M, N, N, rng);
      Matrix B = transB ? Matrix(N, K, K, rng) : Matrix(K, N, N, rng);
      ASSERT_TRUE(runSmallGemmWith(isa, callOf(A, B, C, transB), 1.0f, 0.0f));
      for (int m0 : {0, 3, 5, 13})
        for (int rows : {1, 2, 3, 4, 7})
          for (int n0 : {0, 1, 9, 30})
            for (int cols : {1, 4, 7}) {
              if (m0 + rows > M || n0 + cols > N)
                continue;
              // The sub-operands copied, A's one float off its alignment.
              std::vector<float> a(static_cast<size_t>(rows) * (K + 1) + 1);
              Matrix b = transB ? Matrix(cols, K, K + 3, rng)
                                : Matrix(K, cols, cols + 3, rng);
              Matrix c(rows, cols, cols, rng);
              for (int m = 0; m < rows; ++m)
                for (int k = 0; k < K; ++k)
                  a[1 + static_cast<size_t>(m) * (K + 1) + k] = A.at(m0 + m, k);
              for (int n = 0; n < cols; ++n)
                for (int k = 0; k < K; ++k) {
                  if (transB)
                    b.at(n, k) = B.at(n0 + n, k);
                  else
                    b.at(k, n) = B.at(k, n0 + n);
                }
              RowMajorCall call = callOf(A, b, c, transB);
              call.M = rows;
              call.a = a.data() + 1;
              call.lda = K + 1;
              ASSERT_TRUE(runSmallGemmWith(isa, call, 1.0f, 0.0f));
              for (int m = 0; m < rows; ++m)
                for (int n = 0; n < cols; ++n)
                  ASSERT_EQ(c.at(m, n), C.at(m0 + m, n0 + n))
                      << smallGemmName(isa) << " " << (transB ? "A*B^T" : "A*B")
                      << ", rows " << m0 << "+" << rows << ", columns " << n0
                      << "+" << cols << ", at (" << m << "," << n << ")";
            }
    }
}

TEST(SmallGemm, TakesOnlyFewRowsOfAnUntransposedA) {
  std::mt19937 rng(3);
  Matrix A(4, 8, 8, rng), B(6, 8, 8, rng), C(4, 6, 6, rng);
  RowMajorCall call = callOf(A, B, C);
  for (SmallGemmIsa isa : kForms) {
    bool has = smallGemmSupports(isa);
    EXPECT_EQ(smallGemmTakes(isa, call, 1.0f), has);
    RowMajorCall other = call;
    other.transA = true;
    EXPECT_FALSE(smallGemmTakes(isa, other, 1.0f));
    for (bool transB : {true, false}) {
      other = call;
      other.transB = transB;
      other.M = smallGemmMaxRows(isa, transB);
      EXPECT_EQ(smallGemmTakes(isa, other, 1.0f), has && other.M > 0);
      ++other.M;
      EXPECT_FALSE(smallGemmTakes(isa, other, 1.0f));
    }
    EXPECT_FALSE(smallGemmTakes(isa, call, 0.0f)); // Must not read A or B.
  }
  EXPECT_EQ(smallGemmMaxRows(SmallGemmIsa::Avx512, false), kSmallGemmMaxRows);
  EXPECT_EQ(smallGemmMaxRows(SmallGemmIsa::Avx2, true), 4);
  EXPECT_EQ(smallGemmMaxRows(SmallGemmIsa::Avx2, false), 0);
  // rnnrt_sgemm's form: the widest this CPU has.
  SmallGemmIsa best = smallGemmIsa();
  EXPECT_EQ(best, smallGemmSupports(SmallGemmIsa::Avx512) ? SmallGemmIsa::Avx512
                  : smallGemmSupports(SmallGemmIsa::Avx2) ? SmallGemmIsa::Avx2
                                                          : SmallGemmIsa::None);
  EXPECT_EQ(runsOnSmallGemm(call, 1.0f), smallGemmTakes(best, call, 1.0f));
}

// rnnrt_sgemm runs the calls the kernel takes on it (the kernel's bits),
// and the others on the BLAS.
TEST(SmallGemm, EntryPointUsesTheKernel) {
  std::mt19937 rng(9);
  for (int transB : {1, 0}) {
    for (int M : {1, 4, 5, 8, kSmallGemmMaxRows, kSmallGemmMaxRows + 1}) {
      const int N = 40, K = 70;
      Matrix A(M, K, K, rng), C(M, N, N, rng);
      Matrix B = transB ? Matrix(N, K, K, rng) : Matrix(K, N, N, rng);
      Matrix viaKernel = C;
      StridedMemRefType<float, 2> a{
          A.data.data(), A.data.data(), 0, {M, K}, {K, 1}};
      StridedMemRefType<float, 2> b{
          B.data.data(), B.data.data(), 0, {B.rows, B.cols}, {B.cols, 1}};
      StridedMemRefType<float, 2> c{
          C.data.data(), C.data.data(), 0, {M, N}, {N, 1}};
      _mlir_ciface_rnnrt_sgemm(0, transB, 1.0f, 1.0f, &a, &b, &c);
      bool taken = runSmallGemm(callOf(A, B, viaKernel, transB), 1.0f, 1.0f);
      EXPECT_EQ(taken, M <= smallGemmMaxRows(smallGemmIsa(), transB));
      if (taken) {
        EXPECT_EQ(C.data, viaKernel.data) << "M=" << M << " transB=" << transB;
      }
    }
  }
}

} // namespace
