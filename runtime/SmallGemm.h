//===- SmallGemm.h - GEMMs of few rows without packing ----------*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the single-precision kernel `rnnrt_sgemm` runs, instead of
// cblas_sgemm, for products of at most kSmallGemmMaxRows rows, C = alpha *
// A * op(B) + beta * C with A [M,K] not transposed and op(B) = B^T (B
// [N,K]) or B (B [K,N]), all row-major: a time step's products at a small
// batch (the forward's h * W^T, the backward's dG * W) and a rollout's.
//
// Why: a BLAS copies (packs) both operands into its own layout on every
// call. With few rows, packing the weights costs more than the product:
// in a T=1, B=8, H=256 LSTM step, OpenBLAS spends 60% of its GEMMs' time
// packing them. This kernel reads them in place, in 0.16x to 0.85x of
// cblas_sgemm's time with OpenBLAS's AVX2 kernels, 0.23x to 0.96x with
// its AVX-512 ones, whose small-matrix path is faster (up to 1.5x) only
// on products of under about 100,000 multiply-adds
// (bench/results/small-gemm-cpu.txt).
//
// Bits. Every element is computed the same way whatever the call's M, N,
// the other rows and columns, and the addresses: against B^T, sixteen
// lane sums over k in order, then one fixed tree of sums; against B, one
// chain of fused multiply-adds over k in order. A call's result thus
// depends on its operands and K only, as the remat policies need (every
// policy issues the same calls). The kernel has an AVX-512F form and an
// AVX2 (with FMA) one for products against B^T of at most 4 rows (a
// rollout's at a batch of 1 to 4), which a CPU without AVX-512F runs; their
// bits differ, and a process uses one form for every call. A CPU with
// neither runs every call on cblas_sgemm.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_RUNTIME_SMALLGEMM_H
#define RNN_RUNTIME_SMALLGEMM_H

#include "GemmPlan.h"

namespace rnn {
namespace runtime {
namespace gemm {

/// The most rows (M) a call may have to run on any form of the kernel.
constexpr int kSmallGemmMaxRows = 16;

/// The forms of the kernel, by instruction set.
enum class SmallGemmIsa { None, Avx2, Avx512 };

/// Whether this CPU can run the kernel's form `isa` (never None).
bool smallGemmSupports(SmallGemmIsa isa);

/// The form rnnrt_sgemm runs on this CPU: AVX-512 where it can, else AVX2,
/// else None (the kernel takes no call).
SmallGemmIsa smallGemmIsa();

/// "AVX-512", "AVX2" or "none".
const char *smallGemmName(SmallGemmIsa isa);

/// Whether this CPU runs the kernel (smallGemmIsa() is not None).
bool smallGemmAvailable();

/// The most rows a call against B^T (`transB`) or B may have to run on the
/// form `isa`: 16 for AVX-512; for AVX2, 4 against B^T and none against
/// B.
int smallGemmMaxRows(SmallGemmIsa isa, bool transB);

/// Whether the form `isa` runs `call`: A not transposed, 1 <= M <=
/// smallGemmMaxRows, N and K positive, alpha nonzero (a zero alpha must
/// not read A or B, as in BLAS), on a CPU that supports the form.
bool smallGemmTakes(SmallGemmIsa isa, const RowMajorCall &call, float alpha);

/// Whether rnnrt_sgemm runs `call` on the kernel (smallGemmTakes of the
/// form smallGemmIsa()).
bool runsOnSmallGemm(const RowMajorCall &call, float alpha);

/// Runs `call` on the kernel's form smallGemmIsa() if runsOnSmallGemm,
/// with BLAS semantics (C is not read when beta is 0); returns whether it
/// did.
bool runSmallGemm(const RowMajorCall &call, float alpha, float beta);

/// runSmallGemm on the form `isa`, if this CPU supports it (for the tests
/// and the benchmark, which check every form the CPU has).
bool runSmallGemmWith(SmallGemmIsa isa, const RowMajorCall &call, float alpha,
                      float beta);

} // namespace gemm
} // namespace runtime
} // namespace rnn

#endif // RNN_RUNTIME_SMALLGEMM_H
