//===- Report.cpp - what rnn-run measured, as JSON or text ----------------===//
//
// Implements Report.h.
//
//===----------------------------------------------------------------------===//

#include "rnn/Driver/Report.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

namespace rnn {
namespace driver {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void printJSON(llvm::raw_ostream &os, const RunReport &r) {
  auto optional = [](std::optional<int64_t> value) {
    return value ? llvm::json::Value(*value) : llvm::json::Value(nullptr);
  };
  const ModelShape &shape = r.shape;
  llvm::json::Object out{
      {"target", r.target},
      {"mode", r.mode},
      {"remat", r.remat},
      {"remat_plan", r.rematPlan},
      {"wavefront", r.wavefront && !r.layersInSequence},
      {"gpu_math", r.gpuMath.empty() ? llvm::json::Value(nullptr)
                                     : llvm::json::Value(r.gpuMath)},
      {"cell", r.cell},
      {"shape", llvm::json::Object{{"T", shape.seqLen},
                                   {"B", shape.batch},
                                   {"I", shape.inputSize},
                                   {"H", shape.hiddenSize},
                                   {"L", shape.layers}}},
      {"dynamic", shape.dynamic},
      {"step_ms",
       llvm::json::Object{
           {"median", median(r.stepMs)},
           {"min", *std::min_element(r.stepMs.begin(), r.stepMs.end())},
           {"max", *std::max_element(r.stepMs.begin(), r.stepMs.end())}}},
      {"fwd_ms", median(r.fwdMs)},
      {"bwd_ms", median(r.bwdMs)},
      {"peak_bytes",
       llvm::json::Object{{"measured", r.measuredPeak},
                          {"predicted", optional(r.predictedPeak)},
                          {"fwd", r.fwdPeak},
                          {"bwd", r.bwdPeak}}},
      {"saved_bytes", r.savedBytes},
      {"arena_bytes", optional(r.arenaBytes)},
      {"flops", r.flops},
      {"gemm", r.gemm},
      {"gemm_block", r.gemmBlock},
      {"gemm_calls", r.gemmCalls},
      {"launches", r.launches},
      {"syncs", r.syncs},
      {"allocations", r.allocations},
      {"cuda_graph", r.cudaGraph},
      {"iters", r.iters},
      {"warmup", r.warmup},
      {"seed", r.seed},
  };
  if (!r.planExpressions.empty()) {
    llvm::json::Object plan;
    for (const auto &[name, expression] : r.planExpressions)
      plan[name] = expression;
    out["plan"] = std::move(plan);
  }
  os << llvm::formatv("{0}", llvm::json::Value(std::move(out))) << "\n";
}

static void printText(llvm::raw_ostream &os, const RunReport &r) {
  auto mib = [](int64_t bytes) {
    return llvm::formatv("{0:f2} MiB", bytes / (1024.0 * 1024.0)).str();
  };
  const ModelShape &shape = r.shape;
  double stepMedian = median(r.stepMs);
  os << llvm::formatv("{0} {1} on {2}: T={3} B={4} I={5} H={6} L={7}", r.cell,
                      r.mode, r.target, shape.seqLen, shape.batch,
                      shape.inputSize, shape.hiddenSize, shape.layers);
  if (r.train)
    os << ", remat " << r.rematPlan;
  if (r.layersInSequence)
    os << ", layers in sequence (the wavefront does not fit the budget)";
  os << "\n";
  os << llvm::formatv(
      "  step   {0:f3} ms median ({1:f3} .. {2:f3}) over {3} iters; "
      "fwd {4:f3} ms, bwd {5:f3} ms; {6:f2} GFLOP/s\n",
      stepMedian, *std::min_element(r.stepMs.begin(), r.stepMs.end()),
      *std::max_element(r.stepMs.begin(), r.stepMs.end()), r.iters,
      median(r.fwdMs), median(r.bwdMs), r.flops / (stepMedian * 1e6));
  os << "  memory peak " << mib(r.measuredPeak) << " measured, "
     << (r.predictedPeak ? mib(*r.predictedPeak) : std::string("none"))
     << " predicted (fwd " << mib(r.fwdPeak) << ", bwd " << mib(r.bwdPeak)
     << "), saved for backward " << mib(r.savedBytes) << "\n";
  for (const auto &[name, expression] : r.planExpressions)
    os << "  plan   " << name << " = " << expression << " bytes\n";
  os << "  gemm   " << r.gemm << "; " << r.gemmCalls
     << " calls per step, blocks of " << r.gemmBlock << " steps\n";
  os << "  host   per step: " << r.launches << " kernel launches, " << r.syncs
     << " synchronizations, " << r.allocations << " allocations"
     << (r.cudaGraph ? "; replayed as a CUDA graph" : "") << "\n";
}

void printReport(llvm::raw_ostream &os, const RunReport &report, bool json) {
  if (json)
    printJSON(os, report);
  else
    printText(os, report);
}

} // namespace driver
} // namespace rnn
