//===- SmallGemm.cpp - GEMMs of few rows without packing ------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Against B^T, the kernel computes a group of R rows and NB columns of C,
// R * NB = 16, in sixteen vector accumulators: for each k step of 16, one
// load of each of the NB rows of B and of the R rows of A, and R * NB
// fused multiply-adds. The group's sixteen sums then leave the registers
// as one vector through a tree of shuffles and adds (reduce16). Rows come
// in groups of 4 (a remainder of 1 or 2 has its own shape, 3 runs as 4
// with the last row read twice and stored once), columns in groups of NB
// (the last reads its first column again for the missing ones and stores
// only its own).
//
// Against B, each element is its own accumulator lane: rows in groups of
// 8 (or 4), columns in blocks of 2 (or 4) vectors, and for each k one load
// of B's row k per vector and one broadcast of A's element per row. B is
// read in rows, in place; the columns past the last whole block run one
// masked vector at a time.
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

/// Stores alpha * sum (`scaled`) + beta * C at `out`, reading C only when
/// beta is not 0; with Masked, only the columns `mask` selects.
template <bool Masked>
RNN_AVX512 inline void storeScaled(float *out, __m512 scaled, float beta,
                                   __mmask16 mask) {
  if (beta != 0.0f) {
    __m512 prior =
        Masked ? _mm512_maskz_loadu_ps(mask, out) : _mm512_loadu_ps(out);
    scaled = _mm512_fmadd_ps(_mm512_set1_ps(beta), prior, scaled);
  }
  if (Masked)
    _mm512_mask_storeu_ps(out, mask, scaled);
  else
    _mm512_storeu_ps(out, scaled);
}

/// Rows [0, rows) of C, rows <= R, for C = alpha * A * B^T + beta * C.
template <int R, int NB>
RNN_AVX512 void rowGroupTransposed(int rows, const RowMajorCall &call,
                                   const float *A, float *C, float alpha,
                                   float beta) {
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
    for (int m = 0; m < rows; ++m)
      storeScaled<true>(C + static_cast<size_t>(m) * call.ldc + n,
                        _mm512_maskz_loadu_ps(store, out + m * NB), beta,
                        store);
  }
}

/// Rows [0, rows) of C (rows <= R) and NB vectors of 16 columns, from
/// column 0 of `b` and `c`, for C = alpha * A * B + beta * C: each k loads
/// the NB vectors of B's row k and broadcasts a[m][k] to every row. With
/// Tail, only the columns `mask` selects are read and written.
template <int R, int NB, bool Tail>
RNN_AVX512 inline void columnBlock(int rows, int K, const float *const *a,
                                   const float *b, int ldb, float *c, int ldc,
                                   float alpha, float beta, __mmask16 mask) {
  __m512 acc[R][NB];
  for (int m = 0; m < R; ++m)
    for (int j = 0; j < NB; ++j)
      acc[m][j] = _mm512_setzero_ps();
  for (int k = 0; k < K; ++k, b += ldb) {
    __m512 w[NB];
    for (int j = 0; j < NB; ++j)
      w[j] = Tail ? _mm512_maskz_loadu_ps(mask, b + 16 * j)
                  : _mm512_loadu_ps(b + 16 * j);
    for (int m = 0; m < R; ++m) {
      __m512 x = _mm512_set1_ps(a[m][k]);
      for (int j = 0; j < NB; ++j)
        acc[m][j] = _mm512_fmadd_ps(x, w[j], acc[m][j]);
    }
  }
  for (int m = 0; m < rows; ++m)
    for (int j = 0; j < NB; ++j)
      storeScaled<Tail>(c + static_cast<size_t>(m) * ldc + 16 * j,
                        _mm512_mul_ps(_mm512_set1_ps(alpha), acc[m][j]), beta,
                        mask);
}

/// Rows [0, rows) of C, rows <= R, for C = alpha * A * B + beta * C: blocks
/// of NB vectors of columns, then the rest one vector at a time.
template <int R, int NB>
RNN_AVX512 void rowGroupNotTransposed(int rows, const RowMajorCall &call,
                                      const float *A, float *C, float alpha,
                                      float beta) {
  const float *a[R];
  for (int m = 0; m < R; ++m)
    a[m] = A + static_cast<size_t>(std::min(m, rows - 1)) * call.lda;
  int n = 0;
  for (; n + 16 * NB <= call.N; n += 16 * NB)
    columnBlock<R, NB, false>(rows, call.K, a, call.b + n, call.ldb, C + n,
                              call.ldc, alpha, beta, 0xFFFF);
  for (; n < call.N; n += 16) {
    int cols = std::min(16, call.N - n);
    columnBlock<R, 1, true>(rows, call.K, a, call.b + n, call.ldb, C + n,
                            call.ldc, alpha, beta,
                            static_cast<__mmask16>((1u << cols) - 1));
  }
}

RNN_AVX512 void smallGemm(const RowMajorCall &call, float alpha, float beta) {
  const int group = call.transB ? 4 : 8;
  for (int m = 0; m < call.M; m += group) {
    const float *A = call.a + static_cast<size_t>(m) * call.lda;
    float *C = call.c + static_cast<size_t>(m) * call.ldc;
    int rows = std::min(group, call.M - m);
    if (!call.transB) {
      if (rows > 4)
        rowGroupNotTransposed<8, 2>(rows, call, A, C, alpha, beta);
      else
        rowGroupNotTransposed<4, 4>(rows, call, A, C, alpha, beta);
    } else if (rows == 1) {
      rowGroupTransposed<1, 16>(rows, call, A, C, alpha, beta);
    } else if (rows == 2) {
      rowGroupTransposed<2, 8>(rows, call, A, C, alpha, beta);
    } else {
      rowGroupTransposed<4, 4>(rows, call, A, C, alpha, beta);
    }
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
  return !call.transA && call.M >= 1 && call.M <= kSmallGemmMaxRows &&
         call.N >= 1 && call.K >= 1 && alpha != 0.0f && smallGemmAvailable();
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
