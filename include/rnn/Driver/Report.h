//===- Report.h - what rnn-run measured, as JSON or text -------*- C++ -*-===//
//
// One struct holds the figures of a run (the step's times, the memory it
// held against the plan's prediction, the calls its host code issued), and
// one function prints it as rnn-run's JSON object or its text report, so
// that the two cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DRIVER_REPORT_H
#define RNN_DRIVER_REPORT_H

#include "rnn/Driver/Model.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rnn {
namespace driver {

struct RunReport {
  std::string target, mode, remat, cell;
  /// On the cuda target: how the kernels compute tanh and exp (gpu-math).
  std::string gpuMath;
  /// The remat plan the compiler chose (the policy itself unless a budget).
  std::string rematPlan;
  bool train = true;
  /// --wavefront, and whether the budget fits only with the layers in
  /// sequence (then there is no wavefront).
  bool wavefront = false, layersInSequence = false;
  ModelShape shape;
  /// The measured steps' times.
  std::vector<double> stepMs, fwdMs, bwdMs;
  /// Bytes: the measured peak; the peak of each phase and what the forward
  /// kept for the backward; the plan's predicted peak and arena.
  int64_t measuredPeak = 0, fwdPeak = 0, bwdPeak = 0, savedBytes = 0;
  std::optional<int64_t> predictedPeak, arenaBytes;
  /// A program for every T and B: its plan's expressions in T, B and P.
  std::vector<std::pair<std::string, std::string>> planExpressions;
  /// GEMM flops of one step; the BLAS; the steps in one GEMM block.
  int64_t flops = 0, gemmBlock = 0;
  std::string gemm;
  /// What one step's host code issued.
  int64_t gemmCalls = 0, launches = 0, syncs = 0, allocations = 0;
  bool cudaGraph = false;
  int64_t iters = 0, warmup = 0;
  uint64_t seed = 0;
};

/// The median of `values` (not empty).
double median(std::vector<double> values);

/// Prints `report` as one JSON object (rnn-run --json) or as text.
void printReport(llvm::raw_ostream &os, const RunReport &report, bool json);

} // namespace driver
} // namespace rnn

#endif // RNN_DRIVER_REPORT_H
