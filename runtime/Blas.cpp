//===- Blas.cpp - GEMM entry point for compiled code ----------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: `_mlir_ciface_rnnrt_sgemm`, the single-precision GEMM that compiled
// programs call on memref descriptors, plus the OpenBLAS thread control and
// a one-line description of the backend.
//
// Why: the matrix products dominate LSTM/GRU training time, and a tuned BLAS
// beats anything the compiler would generate on its own. The entry point
// takes arbitrary strided descriptors: a row-major view (unit inner stride)
// goes to cblas_sgemm directly, a column-major view is handed to cblas as
// the transposed row-major matrix, and anything else (broadcast, negative or
// otherwise irregular strides, sizes beyond BLAS int range) falls back to a
// plain loop, so the result is always correct.
//
//===----------------------------------------------------------------------===//

#include "rnn/Runtime/Runtime.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Memref2D = StridedMemRefType<float, 2>;

/// A stored matrix expressed as a row-major BLAS operand: the operand is the
/// row-major matrix at `ptr` with leading dimension `ld`, transposed if
/// `transposed` is set.
struct BlasOperand {
  float *ptr = nullptr;
  int64_t ld = 0;
  bool transposed = false;
};

bool fitsBlasInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

/// Expresses the stored matrix `m` (its sizes, its strides) as op(X) for a
/// row-major X, where op is a transpose iff `trans` after accounting for the
/// layout. Returns false if the layout is neither row- nor column-major
/// compatible (or too large for BLAS ints).
bool asBlasOperand(const Memref2D &m, bool trans, BlasOperand &out) {
  int64_t rows = m.sizes[0], cols = m.sizes[1];
  int64_t s0 = m.strides[0], s1 = m.strides[1];
  out.ptr = m.data + m.offset;
  // Row-major: unit inner stride, rows at least `cols` apart. Strides of
  // dimensions of size <= 1 are irrelevant.
  if ((cols <= 1 || s1 == 1) &&
      (rows <= 1 || s0 >= std::max<int64_t>(1, cols))) {
    out.ld = rows <= 1 ? std::max<int64_t>(1, cols) : s0;
    out.transposed = trans;
    return fitsBlasInt(out.ld);
  }
  // Column-major: this is the transpose of a row-major [cols, rows] matrix.
  if ((rows <= 1 || s0 == 1) &&
      (cols <= 1 || s1 >= std::max<int64_t>(1, rows))) {
    out.ld = cols <= 1 ? std::max<int64_t>(1, rows) : s1;
    out.transposed = !trans;
    return fitsBlasInt(out.ld);
  }
  return false;
}

/// Element (r, c) of the stored matrix `m`.
float &at(const Memref2D &m, int64_t r, int64_t c) {
  return m.data[m.offset + r * m.strides[0] + c * m.strides[1]];
}

/// Reference implementation for layouts cblas cannot take. As with BLAS,
/// beta == 0 means C is not read.
void gemmLoop(bool transA, bool transB, float alpha, float beta,
              const Memref2D &A, const Memref2D &B, const Memref2D &C,
              int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        float a = transA ? at(A, k, i) : at(A, i, k);
        float b = transB ? at(B, j, k) : at(B, k, j);
        acc += static_cast<double>(a) * static_cast<double>(b);
      }
      float &c = at(C, i, j);
      float prior = beta == 0.0f ? 0.0f : beta * c;
      c = static_cast<float>(alpha * acc) + prior;
    }
  }
}

[[noreturn]] void shapeMismatch(const char *what, bool transA, bool transB,
                                const Memref2D *A, const Memref2D *B,
                                const Memref2D *C) {
  if (!A || !B || !C) {
    std::fprintf(stderr, "rnnrt_sgemm: shape mismatch: %s\n", what);
  } else {
    std::fprintf(stderr,
                 "rnnrt_sgemm: shape mismatch: %s (transA=%d transB=%d "
                 "A=[%lld,%lld] B=[%lld,%lld] C=[%lld,%lld])\n",
                 what, transA ? 1 : 0, transB ? 1 : 0,
                 static_cast<long long>(A->sizes[0]),
                 static_cast<long long>(A->sizes[1]),
                 static_cast<long long>(B->sizes[0]),
                 static_cast<long long>(B->sizes[1]),
                 static_cast<long long>(C->sizes[0]),
                 static_cast<long long>(C->sizes[1]));
  }
  std::fflush(stderr);
  std::abort();
}

CBLAS_TRANSPOSE toCblas(bool transposed) {
  return transposed ? CblasTrans : CblasNoTrans;
}

/// C = alpha op(A) op(B) + beta C for a C of one row. OpenBLAS hands such
/// products to its GEMV kernel, which sums in another order than its GEMM
/// kernel; every row of a product must not depend on how many rows are
/// computed with it (a chunk of one step of one sequence is one row of the
/// input projection), so the row is computed twice, as a GEMM of two rows.
void singleRow(float alpha, float beta, const Memref2D &A, bool transA,
               const BlasOperand &b, const Memref2D &C, int64_t N, int64_t K) {
  std::vector<float> a2(2 * K), c2(2 * N, 0.0f);
  for (int64_t k = 0; k < K; ++k)
    a2[k] = a2[K + k] = transA ? at(A, k, 0) : at(A, 0, k);
  if (beta != 0.0f)
    for (int64_t j = 0; j < N; ++j)
      c2[j] = c2[N + j] = at(C, 0, j);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, toCblas(b.transposed), 2,
              static_cast<int>(N), static_cast<int>(K), alpha, a2.data(),
              static_cast<int>(K), b.ptr, static_cast<int>(b.ld), beta,
              c2.data(), static_cast<int>(N));
  for (int64_t j = 0; j < N; ++j)
    at(C, 0, j) = c2[j];
}

/// Trims trailing whitespace from a C string returned by OpenBLAS.
std::string trimmed(const char *s) {
  std::string r = s ? s : "";
  while (!r.empty() && (r.back() == ' ' || r.back() == '\n'))
    r.pop_back();
  return r;
}

} // namespace

extern "C" void _mlir_ciface_rnnrt_sgemm(int64_t transA, int64_t transB,
                                         float alpha, float beta,
                                         StridedMemRefType<float, 2> *A,
                                         StridedMemRefType<float, 2> *B,
                                         StridedMemRefType<float, 2> *C) {
  bool ta = transA != 0, tb = transB != 0;
  if (!A || !B || !C)
    shapeMismatch("null descriptor", ta, tb, A, B, C);
  int64_t M = C->sizes[0], N = C->sizes[1];
  int64_t aM = ta ? A->sizes[1] : A->sizes[0];
  int64_t aK = ta ? A->sizes[0] : A->sizes[1];
  int64_t bK = tb ? B->sizes[1] : B->sizes[0];
  int64_t bN = tb ? B->sizes[0] : B->sizes[1];
  if (M < 0 || N < 0 || aK < 0 || aM != M || bN != N || aK != bK)
    shapeMismatch("op(A) must be [M,K], op(B) [K,N], C [M,N]", ta, tb, A, B, C);
  int64_t K = aK;
  if (M == 0 || N == 0)
    return;

  BlasOperand a, b, c;
  bool blasOk = K > 0 && fitsBlasInt(M) && fitsBlasInt(N) && fitsBlasInt(K) &&
                asBlasOperand(*A, ta, a) && asBlasOperand(*B, tb, b) &&
                asBlasOperand(*C, /*trans=*/false, c);
  if (!blasOk) {
    gemmLoop(ta, tb, alpha, beta, *A, *B, *C, M, N, K);
    return;
  }
  if (M == 1 && N > 1) {
    singleRow(alpha, beta, *A, ta, b, *C, N, K);
    return;
  }
  if (!c.transposed) {
    cblas_sgemm(CblasRowMajor, toCblas(a.transposed), toCblas(b.transposed),
                static_cast<int>(M), static_cast<int>(N), static_cast<int>(K),
                alpha, a.ptr, static_cast<int>(a.ld), b.ptr,
                static_cast<int>(b.ld), beta, c.ptr, static_cast<int>(c.ld));
    return;
  }
  // C is a column-major view: compute the row-major C^T [N,M] instead,
  // C^T = alpha * op(B)^T * op(A)^T + beta * C^T.
  cblas_sgemm(CblasRowMajor, toCblas(!b.transposed), toCblas(!a.transposed),
              static_cast<int>(N), static_cast<int>(M), static_cast<int>(K),
              alpha, b.ptr, static_cast<int>(b.ld), a.ptr,
              static_cast<int>(a.ld), beta, c.ptr, static_cast<int>(c.ld));
}

namespace rnn {
namespace runtime {

void setBlasThreads(int n) { openblas_set_num_threads(std::max(1, n)); }

std::string gemmBackend() {
  int threads = openblas_get_num_threads();
  std::string desc = "openblas cblas_sgemm, " + std::to_string(threads) +
                     (threads == 1 ? " thread" : " threads");
  std::string config = trimmed(openblas_get_config());
  std::string core = trimmed(openblas_get_corename());
  if (!config.empty() || !core.empty()) {
    desc += " (";
    desc += config;
    if (!core.empty())
      desc += (config.empty() ? "core " : ", core ") + core;
    desc += ")";
  }
  return desc;
}

} // namespace runtime
} // namespace rnn
