//===- SmallGemmTest.cpp - The kernel for GEMMs of few rows ---------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// The kernel of SmallGemm.h against a float64 reference (every row count it
// takes, column and depth remainders, padded leading dimensions, alpha and
// beta), the independence of each element's bits from the rest of the
// call that the remat policies rely on, and which calls rnnrt_sgemm gives
// it. On a CPU without AVX-512F the kernel takes no call, and the tests
// check that instead (runsOnThisCpu).
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
void checkShape(bool transB, int M, int N, int K, float alpha, float beta,
                int pad, std::mt19937 &rng) {
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
  ASSERT_TRUE(runSmallGemm(callOf(A, B, C, transB), alpha, beta));
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      ASSERT_LE(std::fabs(C.at(m, n) - want[m * N + n]), bound[m * N + n])
          << (transB ? "A*B^T" : "A*B") << " M=" << M << " N=" << N
          << " K=" << K << " alpha=" << alpha << " beta=" << beta << " at ("
          << m << "," << n << ")";
  for (int m = 0; m < M; ++m)
    for (int c = N; c < C.ld; ++c)
      ASSERT_EQ(C.at(m, c), Matrix::kSentinel) << "wrote padding";
}

/// Whether the kernel runs on this CPU. Where it does not (no AVX-512F),
/// checks that it declines a call it would otherwise take, leaving C as
/// it was, which is then all there is to test.
bool runsOnThisCpu() {
  if (smallGemmAvailable())
    return true;
  std::mt19937 rng(3);
  Matrix A(4, 8, 8, rng), B(6, 8, 8, rng), C(4, 6, 6, rng);
  std::vector<float> before = C.data;
  EXPECT_FALSE(runSmallGemm(callOf(A, B, C), 1.0f, 0.0f));
  EXPECT_EQ(C.data, before);
  return false;
}

TEST(SmallGemm, MatchesFloat64Reference) {
  if (!runsOnThisCpu())
    return;
  std::mt19937 rng(11);
  for (bool transB : {true, false}) {
    for (int M = 1; M <= kSmallGemmMaxRows; ++M)
      for (int N : {1, 3, 4, 5, 8, 15, 16, 17, 33, 64, 70})
        for (int K : {1, 7, 15, 16, 17, 31, 48, 65})
          checkShape(transB, M, N, K, 1.0f, 0.0f, (M + N + K) % 3, rng);
    // A step's shapes: the products of the forward and of the backward.
    checkShape(transB, 8, 1024, 256, 1.0f, 0.0f, 0, rng);
    checkShape(transB, 16, 512, 128, 1.0f, 1.0f, 0, rng);
    for (float alpha : {1.0f, 0.5f, -2.0f})
      for (float beta : {0.0f, 1.0f, -0.25f})
        checkShape(transB, 5, 39, 37, alpha, beta, 2, rng);
  }
}

// Each element of C is computed from its row of A, its row (B^T) or
// column (B) of B, and K alone: any sub-call over some of the rows and
// columns gives the same bits, at any address.
TEST(SmallGemm, ElementBitsDependOnTheirRowsOnly) {
  if (!runsOnThisCpu())
    return;
  std::mt19937 rng(5);
  const int M = kSmallGemmMaxRows, N = 37, K = 83;
  for (bool transB : {true, false}) {
    Matrix A(M, K, K, rng), C(M, N, N, rng);
    Matrix B = transB ? Matrix(N, K, K, rng) : Matrix(K, N, N, rng);
    ASSERT_TRUE(runSmallGemm(callOf(A, B, C, transB), 1.0f, 0.0f));
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
            ASSERT_TRUE(runSmallGemm(call, 1.0f, 0.0f));
            for (int m = 0; m < rows; ++m)
              for (int n = 0; n < cols; ++n)
                ASSERT_EQ(c.at(m, n), C.at(m0 + m, n0 + n))
                    << (transB ? "A*B^T" : "A*B") << ", rows " << m0 << "+"
                    << rows << ", columns " << n0 << "+" << cols << ", at ("
                    << m << "," << n << ")";
          }
  }
}

TEST(SmallGemm, TakesOnlyFewRowsOfAnUntransposedA) {
  std::mt19937 rng(3);
  Matrix A(4, 8, 8, rng), B(6, 8, 8, rng), C(4, 6, 6, rng);
  RowMajorCall call = callOf(A, B, C);
  EXPECT_EQ(runsOnSmallGemm(call, 1.0f), smallGemmAvailable());
  RowMajorCall other = call;
  other.transA = true;
  EXPECT_FALSE(runsOnSmallGemm(other, 1.0f));
  other = call;
  other.transB = false;
  EXPECT_EQ(runsOnSmallGemm(other, 1.0f), smallGemmAvailable());
  other = call;
  other.M = kSmallGemmMaxRows + 1;
  EXPECT_FALSE(runsOnSmallGemm(other, 1.0f));
  EXPECT_FALSE(runsOnSmallGemm(call, 0.0f)); // Must not read A or B.
}

// rnnrt_sgemm runs the calls the kernel takes on it (the kernel's bits),
// and the others on the BLAS.
TEST(SmallGemm, EntryPointUsesTheKernel) {
  std::mt19937 rng(9);
  for (int transB : {1, 0}) {
    for (int M : {1, 8, kSmallGemmMaxRows, kSmallGemmMaxRows + 1}) {
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
      EXPECT_EQ(taken, smallGemmAvailable() && M <= kSmallGemmMaxRows);
      if (taken) {
        EXPECT_EQ(C.data, viaKernel.data) << "M=" << M << " transB=" << transB;
      }
    }
  }
}

} // namespace
