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

using Memref2D = StridedMemRefType<float, 2>;

/// The logical sizes of a GEMM: op(A) is [M,K], op(B) [K,N], C [M,N].
struct Sizes {
  int64_t M = 0, N = 0, K = 0;
};

/// Checks that the descriptors are non-null and their sizes agree, and
/// returns the GEMM's sizes. On a mismatch, prints one line starting with
/// `entry` (the entry point's name) to stderr and aborts: the compiler
/// emitted an inconsistent call.
Sizes checkShapes(const char *entry, bool transA, bool transB,
                  const Memref2D *A, const Memref2D *B, const Memref2D *C);

/// One row-major BLAS call: c = alpha * op(a) * op(b) + beta * c with
/// op(a) [M,K], op(b) [K,N], c [M,N], each a row-major matrix with its
/// leading dimension (cblas_sgemm with CblasRowMajor).
struct RowMajorCall {
  bool transA = false, transB = false;
  int M = 0, N = 0, K = 0;
  const float *a = nullptr;
  int lda = 0;
  const float *b = nullptr;
  int ldb = 0;
  float *c = nullptr;
  int ldc = 0;
};

/// Expresses the memref GEMM as one row-major call. Each operand may be a
/// row-major or a column-major view (a column-major C is computed as C^T).
/// Returns false if an operand is neither (broadcast or otherwise irregular
/// strides) or a size does not fit a BLAS int. Pointers are only offset,
/// never read, so they may be device pointers.
bool planRowMajor(bool transA, bool transB, const Memref2D &A,
                  const Memref2D &B, const Memref2D &C, Sizes sizes,
                  RowMajorCall &call);

/// One column-major BLAS call (cublasSgemm): c = alpha * op(a) * op(b) +
/// beta * c with op(a) [m,k], op(b) [k,n], c [m,n], column-major.
struct ColumnMajorCall {
  bool transA = false, transB = false;
  int m = 0, n = 0, k = 0;
  const float *a = nullptr;
  int lda = 0;
  const float *b = nullptr;
  int ldb = 0;
  float *c = nullptr;
  int ldc = 0;
};

/// The column-major call computing the same result as `call`: a row-major
/// matrix is its transpose in column-major order, so C^T = op(B)^T op(A)^T
/// swaps the operands and the M/N sizes while keeping every transpose flag.
ColumnMajorCall toColumnMajor(const RowMajorCall &call);

} // namespace gemm
} // namespace runtime
} // namespace rnn

#endif // RNN_RUNTIME_GEMMPLAN_H
