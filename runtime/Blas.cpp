//===- Blas.cpp - GEMM entry point for compiled code ----------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: `_mlir_ciface_rnnrt_sgemm` and `_mlir_ciface_rnnrt_dgemm`, the
// single- and double-precision GEMMs that compiled programs call on memref
// descriptors, plus the OpenBLAS thread control and a one-line description
// of the backend.
//
// Why: the matrix products dominate LSTM/GRU training time, and a tuned BLAS
// beats anything the compiler would generate on its own. The entry point
// takes arbitrary strided descriptors: row- and column-major views become
// one cblas_sgemm (cblas_dgemm) call (GemmPlan.h), or for a product of a
// few rows, one call of the kernel in SmallGemm.h, which does not pack the
// weights as a BLAS does; anything else
// (broadcast, negative or otherwise irregular strides, sizes beyond BLAS int
// range, K = 0) falls back to a plain loop, so the result is always correct.
//
//===----------------------------------------------------------------------===//

#include "GemmPlan.h"
#include "SmallGemm.h"

#include "rnn/Runtime/Runtime.h"

#include <cblas.h>

#include <algorithm>

using namespace rnn::runtime;

namespace {

using gemm::Memref2DOf;

/// Element (r, c) of the stored matrix `m`.
template <typename T> T &at(const Memref2DOf<T> &m, int64_t r, int64_t c) {
  return m.data[m.offset + r * m.strides[0] + c * m.strides[1]];
}

/// Reference implementation for layouts cblas cannot take, accumulating in
/// double. As with BLAS, beta == 0 means C is not read.
template <typename T>
void gemmLoop(bool transA, bool transB, T alpha, T beta, const Memref2DOf<T> &A,
              const Memref2DOf<T> &B, const Memref2DOf<T> &C,
              gemm::Sizes sizes) {
  for (int64_t i = 0; i < sizes.M; ++i) {
    for (int64_t j = 0; j < sizes.N; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < sizes.K; ++k) {
        T a = transA ? at(A, k, i) : at(A, i, k);
        T b = transB ? at(B, j, k) : at(B, k, j);
        acc += static_cast<double>(a) * static_cast<double>(b);
      }
      T &c = at(C, i, j);
      T prior = beta == T(0) ? T(0) : beta * c;
      c = static_cast<T>(alpha * acc) + prior;
    }
  }
}

CBLAS_TRANSPOSE toCblas(bool transposed) {
  return transposed ? CblasTrans : CblasNoTrans;
}

/// Trims trailing whitespace from a C string returned by OpenBLAS.
std::string trimmed(const char *s) {
  std::string r = s ? s : "";
  while (!r.empty() && (r.back() == ' ' || r.back() == '\n'))
    r.pop_back();
  return r;
}

/// The row-major call `call`: the small-M kernel where it runs it
/// (SmallGemm.h), else cblas_sgemm; cblas_dgemm for doubles.
void rowMajorGemm(const gemm::RowMajorCallOf<float> &call, float alpha,
                  float beta) {
  if (gemm::runSmallGemm(call, alpha, beta))
    return;
  cblas_sgemm(CblasRowMajor, toCblas(call.transA), toCblas(call.transB), call.M,
              call.N, call.K, alpha, call.a, call.lda, call.b, call.ldb, beta,
              call.c, call.ldc);
}

void rowMajorGemm(const gemm::RowMajorCallOf<double> &call, double alpha,
                  double beta) {
  cblas_dgemm(CblasRowMajor, toCblas(call.transA), toCblas(call.transB), call.M,
              call.N, call.K, alpha, call.a, call.lda, call.b, call.ldb, beta,
              call.c, call.ldc);
}

} // namespace

/// The entry points' common body: checks, plans one cblas call or runs the
/// loop.
template <typename T>
static void runGemm(const char *entry, int64_t transA, int64_t transB, T alpha,
                    T beta, Memref2DOf<T> *A, Memref2DOf<T> *B,
                    Memref2DOf<T> *C) {
  countGemmCall();
  bool ta = transA != 0, tb = transB != 0;
  gemm::Sizes sizes = gemm::checkShapes(entry, ta, tb, A, B, C);
  if (sizes.M == 0 || sizes.N == 0)
    return;
  gemm::RowMajorCallOf<T> call;
  if (sizes.K == 0 || !gemm::planRowMajor(ta, tb, *A, *B, *C, sizes, call)) {
    gemmLoop(ta, tb, alpha, beta, *A, *B, *C, sizes);
    return;
  }
  rowMajorGemm(call, alpha, beta);
}

extern "C" void _mlir_ciface_rnnrt_sgemm(int64_t transA, int64_t transB,
                                         float alpha, float beta,
                                         StridedMemRefType<float, 2> *A,
                                         StridedMemRefType<float, 2> *B,
                                         StridedMemRefType<float, 2> *C) {
  runGemm("rnnrt_sgemm", transA, transB, alpha, beta, A, B, C);
}

extern "C" void _mlir_ciface_rnnrt_dgemm(int64_t transA, int64_t transB,
                                         double alpha, double beta,
                                         StridedMemRefType<double, 2> *A,
                                         StridedMemRefType<double, 2> *B,
                                         StridedMemRefType<double, 2> *C) {
  runGemm("rnnrt_dgemm", transA, transB, alpha, beta, A, B, C);
}

namespace rnn {
namespace runtime {

void setBlasThreads(int n) { openblas_set_num_threads(std::max(1, n)); }

std::string gemmBackend(bool f64) {
  int threads = openblas_get_num_threads();
  std::string desc =
      std::string("openblas ") + (f64 ? "cblas_dgemm, " : "cblas_sgemm, ") +
      std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  std::string config = trimmed(openblas_get_config());
  std::string core = trimmed(openblas_get_corename());
  if (!config.empty() || !core.empty()) {
    desc += " (";
    desc += config;
    if (!core.empty())
      desc += (config.empty() ? "core " : ", core ") + core;
    desc += ")";
  }
  gemm::SmallGemmIsa isa = gemm::smallGemmIsa();
  if (!f64 && isa != gemm::SmallGemmIsa::None) {
    int rows = gemm::smallGemmMaxRows(isa, /*transB=*/true);
    desc += "; M <= " + std::to_string(rows) +
            (gemm::smallGemmMaxRows(isa, /*transB=*/false) == rows
                 ? ""
                 : " against B^T") +
            ": rnnc's " + gemm::smallGemmName(isa) + " kernel";
  }
  return desc;
}

} // namespace runtime
} // namespace rnn
