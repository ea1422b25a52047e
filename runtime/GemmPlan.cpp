//===- GemmPlan.cpp - Memref GEMMs as single BLAS calls -------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the shape check and the layout planner declared in GemmPlan.h.
//
// Why: a row-major view (unit inner stride) is a BLAS operand as it stands,
// a column-major view is the transposed row-major matrix, and a column-major
// C is handled by computing C^T = op(B)^T op(A)^T; anything else is left to
// the caller.
//
//===----------------------------------------------------------------------===//

#include "GemmPlan.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

using namespace rnn::runtime::gemm;

namespace {

/// A stored matrix expressed as a row-major BLAS operand: the row-major
/// matrix at `ptr` with leading dimension `ld`, transposed if `transposed`.
template <typename T> struct Operand {
  T *ptr = nullptr;
  int64_t ld = 0;
  bool transposed = false;
};

bool fitsBlasInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

/// Expresses the stored matrix `m` as op(X) for a row-major X, where op is a
/// transpose iff `trans` after accounting for the layout. Returns false if
/// the layout is neither row- nor column-major compatible (or too large for
/// BLAS ints).
template <typename T>
bool asOperand(const Memref2DOf<T> &m, bool trans, Operand<T> &out) {
  int64_t rows = m.sizes[0], cols = m.sizes[1];
  int64_t s0 = m.strides[0], s1 = m.strides[1];
  out.ptr = m.data + m.offset;
  // Row-major: unit inner stride, rows at least `cols` apart. Strides of
  // dimensions of size <= 1 are irrelevant, and so are all strides of an
  // empty matrix (K = 0 gives canonical strides like [0, 1]).
  bool empty = rows == 0 || cols == 0;
  if (empty || ((cols <= 1 || s1 == 1) &&
                (rows <= 1 || s0 >= std::max<int64_t>(1, cols)))) {
    out.ld = rows <= 1 || empty ? std::max<int64_t>(1, cols) : s0;
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

template <typename T>
[[noreturn]] void shapeMismatch(const char *entry, const char *what,
                                bool transA, bool transB,
                                const Memref2DOf<T> *A, const Memref2DOf<T> *B,
                                const Memref2DOf<Product<T>> *C) {
  if (!A || !B || !C) {
    std::fprintf(stderr, "%s: shape mismatch: %s\n", entry, what);
  } else {
    std::fprintf(stderr,
                 "%s: shape mismatch: %s (transA=%d transB=%d "
                 "A=[%lld,%lld] B=[%lld,%lld] C=[%lld,%lld])\n",
                 entry, what, transA ? 1 : 0, transB ? 1 : 0,
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

} // namespace

template <typename T>
Sizes rnn::runtime::gemm::checkShapes(const char *entry, bool transA,
                                      bool transB, const Memref2DOf<T> *A,
                                      const Memref2DOf<T> *B,
                                      const Memref2DOf<Product<T>> *C) {
  if (!A || !B || !C)
    shapeMismatch(entry, "null descriptor", transA, transB, A, B, C);
  Sizes s;
  s.M = C->sizes[0];
  s.N = C->sizes[1];
  int64_t aM = transA ? A->sizes[1] : A->sizes[0];
  int64_t aK = transA ? A->sizes[0] : A->sizes[1];
  int64_t bK = transB ? B->sizes[1] : B->sizes[0];
  int64_t bN = transB ? B->sizes[0] : B->sizes[1];
  if (s.M < 0 || s.N < 0 || aK < 0 || aM != s.M || bN != s.N || aK != bK)
    shapeMismatch(entry, "op(A) must be [M,K], op(B) [K,N], C [M,N]", transA,
                  transB, A, B, C);
  s.K = aK;
  return s;
}

template <typename T>
bool rnn::runtime::gemm::planRowMajor(bool transA, bool transB,
                                      const Memref2DOf<T> &A,
                                      const Memref2DOf<T> &B,
                                      const Memref2DOf<Product<T>> &C,
                                      Sizes sizes, RowMajorCallOf<T> &call) {
  Operand<T> a, b;
  Operand<Product<T>> c;
  if (!fitsBlasInt(sizes.M) || !fitsBlasInt(sizes.N) || !fitsBlasInt(sizes.K) ||
      !asOperand(A, transA, a) || !asOperand(B, transB, b) ||
      !asOperand(C, /*trans=*/false, c))
    return false;
  call.K = static_cast<int>(sizes.K);
  call.c = c.ptr;
  call.ldc = static_cast<int>(c.ld);
  if (!c.transposed) {
    call.transA = a.transposed;
    call.transB = b.transposed;
    call.M = static_cast<int>(sizes.M);
    call.N = static_cast<int>(sizes.N);
    call.a = a.ptr;
    call.lda = static_cast<int>(a.ld);
    call.b = b.ptr;
    call.ldb = static_cast<int>(b.ld);
    return true;
  }
  // C is a column-major view: compute the row-major C^T [N,M] instead,
  // C^T = alpha * op(B)^T * op(A)^T + beta * C^T.
  call.transA = !b.transposed;
  call.transB = !a.transposed;
  call.M = static_cast<int>(sizes.N);
  call.N = static_cast<int>(sizes.M);
  call.a = b.ptr;
  call.lda = static_cast<int>(b.ld);
  call.b = a.ptr;
  call.ldb = static_cast<int>(a.ld);
  return true;
}

// The operand types of the GEMM entry points: rnnrt_sgemm (and the cuda
// one), rnnrt_dgemm and rnnrt_cuda_gemm_bf16.
#define RNN_GEMM_PLAN_INSTANCES(T)                                             \
  template Sizes rnn::runtime::gemm::checkShapes<T>(                           \
      const char *, bool, bool, const Memref2DOf<T> *, const Memref2DOf<T> *,  \
      const Memref2DOf<Product<T>> *);                                         \
  template bool rnn::runtime::gemm::planRowMajor<T>(                           \
      bool, bool, const Memref2DOf<T> &, const Memref2DOf<T> &,                \
      const Memref2DOf<Product<T>> &, Sizes, RowMajorCallOf<T> &);
RNN_GEMM_PLAN_INSTANCES(float)
RNN_GEMM_PLAN_INSTANCES(double)
RNN_GEMM_PLAN_INSTANCES(uint16_t)
#undef RNN_GEMM_PLAN_INSTANCES
