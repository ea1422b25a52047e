//===- PlanMemory.cpp - rnn-plan-memory -----------------------------------===//
//
// Static memory plan of a lowered function (see Passes.td): arena offsets
// by first fit over live ranges, and the predicted peak of bytes held.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Analysis/MemoryReport.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNPLANMEMORYPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

/// Offsets are multiples of this, as the runtime aligns each buffer.
static constexpr int64_t kAlignment = 64;

namespace {
struct RNNPlanMemoryPass
    : public rnn::impl::RNNPlanMemoryPassBase<RNNPlanMemoryPass> {
  using RNNPlanMemoryPassBase::RNNPlanMemoryPassBase;

  /// The reports of the functions planned so far.
  std::vector<MemoryPlanReport> reports;

  void runOnOperation() override {
    reports.clear();
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        planFunction(func);
    if (!reportFile.empty()) {
      bool json = llvm::StringRef(reportFile).ends_with(".json");
      if (failed(writeFile(reportFile, [&](llvm::raw_ostream &os) {
            if (json) {
              os << llvm::formatv("{0:2}", memoryReportToJSON(reports)) << "\n";
              return;
            }
            for (const MemoryPlanReport &report : reports)
              printMemoryReport(report, os);
          })))
        return signalPassFailure();
    }
    if (!svgFile.empty() &&
        failed(writeFile(svgFile, [&](llvm::raw_ostream &os) {
          printMemorySVG(reports, os);
        })))
      return signalPassFailure();
  }

  /// Writes `path` through a temporary file renamed into place
  /// (llvm::writeToOutput), so that no partial file is left behind.
  LogicalResult writeFile(llvm::StringRef path,
                          llvm::function_ref<void(llvm::raw_ostream &)> write) {
    llvm::Error error =
        llvm::writeToOutput(path, [&](llvm::raw_ostream &os) -> llvm::Error {
          write(os);
          return llvm::Error::success();
        });
    if (!error)
      return success();
    // The error names the file again; the message names it once.
    std::error_code ec = llvm::errorToErrorCode(std::move(error));
    return getOperation().emitError("rnn-plan-memory: cannot write ")
           << path << ": " << ec.message();
  }

  void planFunction(func::FuncOp func) {
    BufferLiveness liveness(func);
    if (!liveness.isStatic()) {
      func.emitRemark("rnn-plan-memory: buffers allocated inside loops or "
                      "with dynamic sizes; no static plan");
      return;
    }
    Builder b(&getContext());
    unsigned end = liveness.getNumPositions();
    auto freedAt = [&](const BufferInfo &info) {
      return info.dealloc ? info.deallocIndex : end;
    };

    // First fit: a buffer may take any space whose previous holder was
    // freed before the buffer is allocated.
    struct Placed {
      int64_t offset, size;
      unsigned freedAt;
    };
    SmallVector<Placed> placed;
    SmallVector<int64_t> offsets;
    int64_t arena = 0;
    for (const BufferInfo &info : liveness.getBuffers()) {
      int64_t size = 0;
      if (llvm::AddOverflow(info.bytes, kAlignment - 1, size)) {
        func.emitError("rnn-plan-memory: a buffer of ")
            << info.bytes << " bytes cannot be placed in 64-bit offsets";
        return signalPassFailure();
      }
      size = size / kAlignment * kAlignment;
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (const Placed &p : placed)
        if (p.freedAt > info.allocIndex)
          busy.push_back({p.offset, p.offset + p.size});
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset <= lo - size)
          break;
        offset = std::max(offset, hi);
      }
      int64_t top = 0;
      if (llvm::AddOverflow(offset, size, top)) {
        func.emitError("rnn-plan-memory: the arena of @")
            << func.getName() << " would exceed 64-bit offsets";
        return signalPassFailure();
      }
      placed.push_back({offset, size, freedAt(info)});
      offsets.push_back(offset);
      arena = std::max(arena, top);
      info.alloc->setAttr("rnn.offset", b.getI64IntegerAttr(offset));
    }
    int64_t peak = liveness.getPeakBytes();
    func->setAttr("rnn.predicted_peak_bytes", b.getI64IntegerAttr(peak));
    func->setAttr("rnn.arena_bytes", b.getI64IntegerAttr(arena));
    if (std::optional<unsigned> start = findBackwardStart(func)) {
      PhaseBytes phases = predictPhaseBytes(liveness, *start);
      func->setAttr("rnn.predicted_fwd_peak_bytes",
                    b.getI64IntegerAttr(phases.fwdPeak));
      func->setAttr("rnn.predicted_bwd_peak_bytes",
                    b.getI64IntegerAttr(phases.bwdPeak));
      func->setAttr("rnn.predicted_saved_bytes",
                    b.getI64IntegerAttr(phases.saved));
    }
    if (!report && reportFile.empty() && svgFile.empty())
      return;
    reports.push_back(buildMemoryReport(func, liveness, offsets, arena));
    if (report)
      printMemoryReport(reports.back(), llvm::outs());
  }
};
} // namespace
