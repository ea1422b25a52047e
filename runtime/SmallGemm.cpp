//===- SmallGemm.cpp - GEMMs of few rows without packing ------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// The kernel computes a group of R rows and NB columns of C, R * NB = 16,
// in sixteen vector accumulators: for each k step of 16, one load of each
// of the NB rows of B and of the R rows of A, and R * NB fused
// multiply-adds. The group's sixteen sums then leave the registers as one
// vector through a tree of shuffles and adds (reduce16). Rows come in
// groups of 4 (a remainder of 1 or 2 has its own shape, 3 runs as 4 with
// the last row read twice and stored once), columns in groups of NB (the
// last reads its first column again for the missing ones and stores only
// its own).
//
//===----------------------------------------------------------------------===//

#include "SmallGemm.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RNN_SMALL_GEMM 1
#include <immintrin.h>
// GCC's _mm512_undefined_ps, which the shuffles pass as their unused
// merge operand, initializes a variable with itself, and GCC 12 warns of
// it once inlined.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#else
#define RNN_SMALL_GEMM 0
#endif

#include <algorithm>
#include <cstddef>

using namespace rnn::runtime::gemm;

#if RNN_SMALL_GEMM
namespace {

#define RNN_AVX512 __attribute__((target("avx512f")))

/// The sums of the sixteen lanes of each of v[0..15], as one vector: the
/// sum of v[i] is element 4 * (i % 4) + i / 4. Each sum is formed by the
/// same adds whatever i is.
RNN_AVX512 inline __m512 reduce16(const __m512 *v) {
  __m512 s1[8], s2[4], s3[2];
  // Each 256-bit half of s1[i]: v[2i]'s, then v[2i+1]'s, halves added.
  for (int i = 0; i < 8; ++i)
    s1[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44),
                          _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
  // Each 128-bit quarter of s2[i]: the quarters of one of v[4i..4i+3].
  for (int i = 0; i < 4; ++i)
    s2[i] = _mm512_add_ps(_mm512_shuffle_f32x4(s1[2 * i], s1[2 * i + 1], 0x88),
                          _mm512_shuffle_f32x4(s1[2 * i], s1[2 * i + 1], 0xDD));
  // Then pairs of elements within each quarter, then single elements.
  for (int i = 0; i < 2; ++i)
    s3[i] = _mm512_add_ps(_mm512_shuffle_ps(s2[2 * i], s2[2 * i + 1], 0x44),
                          _mm512_shuffle_ps(s2[2 * i], s2[2 * i + 1], 0xEE));
  return _mm512_add_ps(_mm512_shuffle_ps(s3[0], s3[1], 0x88),
                       _mm512_shuffle_ps(s3[0], s3[1], 0xDD));
}

/// Rows [0, rows) of C, rows <= R, for C = alpha * A * B^T + beta * C.
template <int R, int NB>
RNN_AVX512 void rowGroup(int rows, const RowMajorCall &call, const float *A,
                         float *C, float alpha, float beta) {
  static_assert(R * NB == 16, "one vector of sums per group");
  const int N = call.N, K = call.K, kFull = K & ~15;
  const __mmask16 tail = static_cast<__mmask16>((1u << (K & 15)) - 1);
  const float *a[R];
  for (int m = 0; m < R; ++m)
    a[m] = A + static_cast<size_t>(std::min(m, rows - 1)) * call.lda;
  for (int n = 0; n < N; n += NB) {
    const int cols = std::min(NB, N - n);
    const float *b[NB];
    for (int j = 0; j < NB; ++j)
      b[j] = call.b + static_cast<size_t>(n + (j < cols ? j : 0)) * call.ldb;
    __m512 acc[16];
    for (int i = 0; i < 16; ++i)
      acc[i] = _mm512_setzero_ps();
    for (int k = 0; k < kFull; k += 16) {
      __m512 w[NB];
      for (int j = 0; j < NB; ++j)
        w[j] = _mm512_loadu_ps(b[j] + k);
      for (int m = 0; m < R; ++m) {
        __m512 x = _mm512_loadu_ps(a[m] + k);
        for (int j = 0; j < NB; ++j)
          acc[m * NB + j] = _mm512_fmadd_ps(x, w[j], acc[m * NB + j]);
      }
    }
    if (tail) {
      __m512 w[NB];
      for (int j = 0; j < NB; ++j)
        w[j] = _mm512_maskz_loadu_ps(tail, b[j] + kFull);
      for (int m = 0; m < R; ++m) {
        __m512 x = _mm512_maskz_loadu_ps(tail, a[m] + kFull);
        for (int j = 0; j < NB; ++j)
          acc[m * NB + j] = _mm512_fmadd_ps(x, w[j], acc[m * NB + j]);
      }
    }
    // The sums in the accumulators' order, then each row's NB columns.
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6,
                                            10, 14, 3, 7, 11, 15);
    __m512 sums = _mm512_mul_ps(_mm512_set1_ps(alpha),
                                _mm512_permutexvar_ps(order, reduce16(acc)));
    alignas(64) float out[16];
    _mm512_store_ps(out, sums);
    const __mmask16 store = static_cast<__mmask16>((1u << cols) - 1);
    for (int m = 0; m < rows; ++m) {
      float *c = C + static_cast<size_t>(m) * call.ldc + n;
      __m512 r = _mm512_maskz_loadu_ps(store, out + m * NB);
      if (beta != 0.0f)
        r = _mm512_fmadd_ps(_mm512_set1_ps(beta),
                            _mm512_maskz_loadu_ps(store, c), r);
      _mm512_mask_storeu_ps(c, store, r);
    }
  }
}

RNN_AVX512 void smallGemm(const RowMajorCall &call, float alpha, float beta) {
  for (int m = 0; m < call.M; m += 4) {
    const float *A = call.a + static_cast<size_t>(m) * call.lda;
    float *C = call.c + static_cast<size_t>(m) * call.ldc;
    int rows = std::min(4, call.M - m);
    if (rows == 1)
      rowGroup<1, 16>(rows, call, A, C, alpha, beta);
    else if (rows == 2)
      rowGroup<2, 8>(rows, call, A, C, alpha, beta);
    else
      rowGroup<4, 4>(rows, call, A, C, alpha, beta);
  }
}

} // namespace
#endif

bool rnn::runtime::gemm::smallGemmAvailable() {
#if RNN_SMALL_GEMM
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
#else
  return false;
#endif
}

bool rnn::runtime::gemm::runsOnSmallGemm(const RowMajorCall &call,
                                         float alpha) {
  return !call.transA && call.transB && call.M >= 1 &&
         call.M <= kSmallGemmMaxRows && call.N >= 1 && call.K >= 1 &&
         alpha != 0.0f && smallGemmAvailable();
}

bool rnn::runtime::gemm::runSmallGemm(const RowMajorCall &call, float alpha,
                                      float beta) {
  if (!runsOnSmallGemm(call, alpha))
    return false;
#if RNN_SMALL_GEMM
  smallGemm(call, alpha, beta);
#endif
  return true;
}
