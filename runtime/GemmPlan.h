//===- GemmPlan.h - Memref GEMMs as single BLAS calls -----------*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the shape check shared by the GEMM entry points, and the planner
// that turns C = alpha * op(A) * op(B) + beta * C on strided memref
// descriptors into one row-major BLAS call, or into the equivalent
// column-major (cuBLAS) call.
//
// Why: the CPU entry point (cblas) and the CUDA one (cuBLAS) accept the same
// descriptors with the same semantics, so the layout reasoning lives once,
// here, and is tested on the CPU for both. Private to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_RUNTIME_GEMMPLAN_H
#define RNN_RUNTIME_GEMMPLAN_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstdint>

namespace rnn {
namespace runtime {
namespace gemm {

/// A matrix of T (float, or double for the f64 GEMM) in a descriptor.
template <typename T> using Memref2DOf = StridedMemRefType<T, 2>;
using Memref2D = Memref2DOf<float>;

/// The element type of C in a GEMM whose operands A and B are of T: T
/// itself, except f32 for bf16 operands, which are passed as their 16 bits
/// (uint16_t; the GEMMs only pass pointers).
template <typename T> struct ProductOf { using type = T; };
template <> struct ProductOf<uint16_t> { using type = float; };
template <typename T> using Product = typename ProductOf<T>::type;

/// The logical sizes of a GEMM: op(A) is [M,K], op(B) [K,N], C [M,N].
struct Sizes {
  int64_t M = 0, N = 0, K = 0;
};

/// Checks that the descriptors are non-null and their sizes agree, and
/// returns the GEMM's sizes. On a mismatch, prints one line starting with
/// `entry` (the entry point's name) to stderr and aborts: the compiler
/// emitted an inconsistent call.
template <typename T>
Sizes checkShapes(const char *entry, bool transA, bool transB,
                  const Memref2DOf<T> *A, const Memref2DOf<T> *B,
                  const Memref2DOf<Product<T>> *C);

/// One row-major BLAS call: c = alpha * op(a) * op(b) + beta * c with
/// op(a) [M,K], op(b) [K,N], c [M,N], each a row-major matrix with its
/// leading dimension (cblas_sgemm with CblasRowMajor).
template <typename T> struct RowMajorCallOf {
  bool transA = false, transB = false;
  int M = 0, N = 0, K = 0;
  const T *a = nullptr;
  int lda = 0;
  const T *b = nullptr;
  int ldb = 0;
  Product<T> *c = nullptr;
  int ldc = 0;
};
using RowMajorCall = RowMajorCallOf<float>;

/// Expresses the memref GEMM as one row-major call. Each operand may be a
/// row-major or a column-major view (a column-major C is computed as C^T).
/// Returns false if an operand is neither (broadcast or otherwise irregular
/// strides) or a size does not fit a BLAS int. Pointers are only offset,
/// never read, so they may be device pointers.
template <typename T>
bool planRowMajor(bool transA, bool transB, const Memref2DOf<T> &A,
                  const Memref2DOf<T> &B, const Memref2DOf<Product<T>> &C,
                  Sizes sizes, RowMajorCallOf<T> &call);

/// One column-major BLAS call (cublasSgemm, cublasGemmEx): c = alpha *
/// op(a) * op(b) + beta * c with op(a) [m,k], op(b) [k,n], c [m,n],
/// column-major.
template <typename T> struct ColumnMajorCallOf {
  bool transA = false, transB = false;
  int m = 0, n = 0, k = 0;
  const T *a = nullptr;
  int lda = 0;
  const T *b = nullptr;
  int ldb = 0;
  Product<T> *c = nullptr;
  int ldc = 0;
};
using ColumnMajorCall = ColumnMajorCallOf<float>;

/// The column-major call computing the same result as `call`: a row-major
/// matrix is its transpose in column-major order, so C^T = op(B)^T op(A)^T
/// swaps the operands and the M/N sizes while keeping every transpose flag.
template <typename T>
ColumnMajorCallOf<T> toColumnMajor(const RowMajorCallOf<T> &call) {
  ColumnMajorCallOf<T> cm;
  cm.transA = call.transB;
  cm.transB = call.transA;
  cm.m = call.N;
  cm.n = call.M;
  cm.k = call.K;
  cm.a = call.b;
  cm.lda = call.ldb;
  cm.b = call.a;
  cm.ldb = call.lda;
  cm.c = call.c;
  cm.ldc = call.ldc;
  return cm;
}

} // namespace gemm
} // namespace runtime
} // namespace rnn

#endif // RNN_RUNTIME_GEMMPLAN_H
