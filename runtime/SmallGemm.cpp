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
// The AVX2 form (for CPUs without AVX-512F) takes products against B^T of
// at most 4 rows, the same way with vectors of 8 and its 16 registers: R *
// NB = 8 accumulators reduced by reduce8. With more rows, or against B,
// where each block of columns reads B strided by its rows, OpenBLAS's
// AVX2 kernels are faster (bench/results/small-gemm-cpu.txt). Each form is
// written out: a function's target attribute, which lets it use the
// instruction set's intrinsics, cannot depend on a template parameter.
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
namespace avx512 {

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

} // namespace avx512

namespace avx2 {

#define RNN_AVX2 __attribute__((target("avx2,fma")))

/// The lanes [0, count) selected, for maskload and maskstore.
RNN_AVX2 inline __m256i firstLanes(int count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// The sums of the eight lanes of each of v[0..7], as one vector: the sum
/// of v[i] is element 4 * (i % 2) + i / 2. Each sum is formed by the same
/// adds whatever i is.
RNN_AVX2 inline __m256 reduce8(const __m256 *v) {
  __m256 s1[4], s2[2];
  // The 128-bit halves of s1[i]: v[2i]'s halves added, then v[2i+1]'s.
  for (int i = 0; i < 4; ++i)
    s1[i] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x20),
                          _mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x31));
  // Then pairs of elements within each half, then single elements.
  for (int i = 0; i < 2; ++i)
    s2[i] = _mm256_add_ps(_mm256_shuffle_ps(s1[2 * i], s1[2 * i + 1], 0x44),
                          _mm256_shuffle_ps(s1[2 * i], s1[2 * i + 1], 0xEE));
  return _mm256_add_ps(_mm256_shuffle_ps(s2[0], s2[1], 0x88),
                       _mm256_shuffle_ps(s2[0], s2[1], 0xDD));
}

/// Stores alpha * sum (`scaled`) + beta * C at the columns of `out` that
/// `mask` selects, reading C only when beta is not 0.
RNN_AVX2 inline void storeScaled(float *out, __m256 scaled, float beta,
                                 __m256i mask) {
  if (beta != 0.0f)
    scaled = _mm256_fmadd_ps(_mm256_set1_ps(beta),
                             _mm256_maskload_ps(out, mask), scaled);
  _mm256_maskstore_ps(out, mask, scaled);
}

/// Rows [0, rows) of C, rows <= R, for C = alpha * A * B^T + beta * C.
template <int R, int NB>
RNN_AVX2 void rowGroupTransposed(int rows, const RowMajorCall &call,
                                 const float *A, float *C, float alpha,
                                 float beta) {
  static_assert(R * NB == 8, "one vector of sums per group");
  const int N = call.N, K = call.K, kFull = K & ~7;
  const __m256i tail = firstLanes(K & 7);
  const float *a[R];
  for (int m = 0; m < R; ++m)
    a[m] = A + static_cast<size_t>(std::min(m, rows - 1)) * call.lda;
  for (int n = 0; n < N; n += NB) {
    const int cols = std::min(NB, N - n);
    const float *b[NB];
    for (int j = 0; j < NB; ++j)
      b[j] = call.b + static_cast<size_t>(n + (j < cols ? j : 0)) * call.ldb;
    __m256 acc[8];
    for (int i = 0; i < 8; ++i)
      acc[i] = _mm256_setzero_ps();
    for (int k = 0; k < kFull; k += 8) {
      __m256 w[NB];
      for (int j = 0; j < NB; ++j)
        w[j] = _mm256_loadu_ps(b[j] + k);
      for (int m = 0; m < R; ++m) {
        __m256 x = _mm256_loadu_ps(a[m] + k);
        for (int j = 0; j < NB; ++j)
          acc[m * NB + j] = _mm256_fmadd_ps(x, w[j], acc[m * NB + j]);
      }
    }
    if (K & 7) {
      __m256 w[NB];
      for (int j = 0; j < NB; ++j)
        w[j] = _mm256_maskload_ps(b[j] + kFull, tail);
      for (int m = 0; m < R; ++m) {
        __m256 x = _mm256_maskload_ps(a[m] + kFull, tail);
        for (int j = 0; j < NB; ++j)
          acc[m * NB + j] = _mm256_fmadd_ps(x, w[j], acc[m * NB + j]);
      }
    }
    // The sums in the accumulators' order, then each row's NB columns.
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256 sums = _mm256_mul_ps(_mm256_set1_ps(alpha),
                                _mm256_permutevar8x32_ps(reduce8(acc), order));
    alignas(32) float out[8];
    _mm256_store_ps(out, sums);
    const __m256i store = firstLanes(cols);
    for (int m = 0; m < rows; ++m)
      storeScaled(C + static_cast<size_t>(m) * call.ldc + n,
                  _mm256_maskload_ps(out + m * NB, store), beta, store);
  }
}

RNN_AVX2 void smallGemm(const RowMajorCall &call, float alpha, float beta) {
  // Rows come in groups of 4 (calls of at most smallGemmMaxRows rows).
  for (int m = 0; m < call.M; m += 4) {
    const float *A = call.a + static_cast<size_t>(m) * call.lda;
    float *C = call.c + static_cast<size_t>(m) * call.ldc;
    int rows = std::min(4, call.M - m);
    if (rows == 1)
      rowGroupTransposed<1, 8>(rows, call, A, C, alpha, beta);
    else if (rows == 2)
      rowGroupTransposed<2, 4>(rows, call, A, C, alpha, beta);
    else
      rowGroupTransposed<4, 2>(rows, call, A, C, alpha, beta);
  }
}

} // namespace avx2
} // namespace
#endif

bool rnn::runtime::gemm::smallGemmSupports(SmallGemmIsa isa) {
#if RNN_SMALL_GEMM
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  static const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return (isa == SmallGemmIsa::Avx512 && avx512) ||
         (isa == SmallGemmIsa::Avx2 && avx2);
#else
  (void)isa;
  return false;
#endif
}

SmallGemmIsa rnn::runtime::gemm::smallGemmIsa() {
  static const SmallGemmIsa best =
      smallGemmSupports(SmallGemmIsa::Avx512) ? SmallGemmIsa::Avx512
      : smallGemmSupports(SmallGemmIsa::Avx2) ? SmallGemmIsa::Avx2
                                              : SmallGemmIsa::None;
  return best;
}

const char *rnn::runtime::gemm::smallGemmName(SmallGemmIsa isa) {
  switch (isa) {
  case SmallGemmIsa::Avx512:
    return "AVX-512";
  case SmallGemmIsa::Avx2:
    return "AVX2";
  case SmallGemmIsa::None:
    break;
  }
  return "none";
}

bool rnn::runtime::gemm::smallGemmAvailable() {
  return smallGemmIsa() != SmallGemmIsa::None;
}

int rnn::runtime::gemm::smallGemmMaxRows(SmallGemmIsa isa, bool transB) {
  switch (isa) {
  case SmallGemmIsa::Avx512:
    return kSmallGemmMaxRows;
  case SmallGemmIsa::Avx2:
    return transB ? 4 : 0;
  case SmallGemmIsa::None:
    break;
  }
  return 0;
}

bool rnn::runtime::gemm::smallGemmTakes(SmallGemmIsa isa,
                                        const RowMajorCall &call, float alpha) {
  return !call.transA && call.M >= 1 &&
         call.M <= smallGemmMaxRows(isa, call.transB) && call.N >= 1 &&
         call.K >= 1 && alpha != 0.0f && smallGemmSupports(isa);
}

bool rnn::runtime::gemm::runsOnSmallGemm(const RowMajorCall &call,
                                         float alpha) {
  return smallGemmTakes(smallGemmIsa(), call, alpha);
}

bool rnn::runtime::gemm::runSmallGemmWith(SmallGemmIsa isa,
                                          const RowMajorCall &call, float alpha,
                                          float beta) {
  if (!smallGemmTakes(isa, call, alpha))
    return false;
#if RNN_SMALL_GEMM
  if (isa == SmallGemmIsa::Avx512)
    avx512::smallGemm(call, alpha, beta);
  else
    avx2::smallGemm(call, alpha, beta);
#endif
  return true;
}

bool rnn::runtime::gemm::runSmallGemm(const RowMajorCall &call, float alpha,
                                      float beta) {
  return runSmallGemmWith(smallGemmIsa(), call, alpha, beta);
}
