//===- small_gemm.cpp - The few-row kernel against cblas_sgemm ------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Times C = A * B^T with A [M,K] and B [N,K] (B the weights, as the
// forward's products have them) and C = A * B with B [K,N] (as the
// backward's have them) on each form of the kernel of runtime/SmallGemm.h
// this CPU has (AVX-512, AVX2) and on cblas_sgemm, interleaved in one
// process, and prints the medians, their ratio and the largest difference.
//
// Usage: build/bench/rnn-bench-small-gemm [ROUNDS]
// Run with OPENBLAS_NUM_THREADS=1 and pinned to a core (taskset -c 0).
//
//===----------------------------------------------------------------------===//

#include "SmallGemm.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace rnn::runtime::gemm;

namespace {

/// Microseconds per call of `run`, over `calls` calls after one more.
template <typename F> double timeCalls(F run, int calls) {
  run();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i)
    run();
  std::chrono::duration<double, std::micro> took =
      std::chrono::steady_clock::now() - start;
  return took.count() / calls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  if (rounds < 1) {
    std::fprintf(stderr,
                 "rnn-bench-small-gemm: ROUNDS must be a positive "
                 "number, got '%s'\n",
                 argv[1]);
    return 2;
  }
  if (!smallGemmAvailable()) {
    std::printf("this CPU has neither AVX-512F nor AVX2: every call runs on "
                "cblas_sgemm\n");
    return 0;
  }
  std::printf("# one call at a time; median of %d rounds; rnnrt_sgemm runs "
              "the %s form\n",
              rounds, smallGemmName(smallGemmIsa()));
  std::printf("%-8s %-7s %4s %5s %5s %12s %12s %7s %9s\n", "C =", "form", "M",
              "N", "K", "kernel us", "cblas us", "ratio", "maxdiff");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  // (gates, state): H = 64, 128, 256, 1024. Against B^T the product is
  // [M, gates] from K = state; against B, [M, state] from K = gates.
  const int shapes[][2] = {{256, 64}, {512, 128}, {1024, 256}, {4096, 1024}};
  for (SmallGemmIsa isa : {SmallGemmIsa::Avx512, SmallGemmIsa::Avx2}) {
    if (!smallGemmSupports(isa))
      continue;
    for (bool transB : {true, false}) {
      for (const auto &shape : shapes) {
        int N = transB ? shape[0] : shape[1], K = transB ? shape[1] : shape[0];
        for (int M : {1, 2, 4, 8, 16}) {
          if (M > smallGemmMaxRows(isa, transB))
            continue;
          std::vector<float> A(static_cast<size_t>(M) * K),
              B(static_cast<size_t>(N) * K);
          std::vector<float> ours(static_cast<size_t>(M) * N),
              blas(ours.size());
          for (float &x : A)
            x = dist(rng);
          for (float &x : B)
            x = dist(rng);
          RowMajorCall call;
          call.transB = transB;
          call.M = M;
          call.N = N;
          call.K = K;
          call.a = A.data();
          call.lda = K;
          call.b = B.data();
          call.ldb = transB ? K : N;
          call.c = ours.data();
          call.ldc = N;
          int calls =
              std::max(5, static_cast<int>(4e7 / (double(M + 8) * N * K)));
          std::vector<double> kernel, cblas;
          for (int r = 0; r < rounds; ++r) {
            kernel.push_back(timeCalls(
                [&] { runSmallGemmWith(isa, call, 1.0f, 0.0f); }, calls));
            cblas.push_back(timeCalls(
                [&] {
                  cblas_sgemm(CblasRowMajor, CblasNoTrans,
                              transB ? CblasTrans : CblasNoTrans, M, N, K, 1.0f,
                              A.data(), K, B.data(), call.ldb, 0.0f,
                              blas.data(), N);
                },
                calls));
          }
          double diff = 0.0;
          for (size_t i = 0; i < ours.size(); ++i)
            diff = std::max(diff, double(std::fabs(ours[i] - blas[i])));
          double k = median(kernel), b = median(cblas);
          std::printf("%-8s %-7s %4d %5d %5d %12.2f %12.2f %7.2f %9.1e\n",
                      transB ? "A*B^T" : "A*B", smallGemmName(isa), M, N, K, k,
                      b, k / b, diff);
        }
      }
    }
  }
  return 0;
}
