//===- MemoryReport.h - the memory plan, for people -------------*- C++ -*-===//
//
// The memory plan of a function (MemoryPlan) in the terms of the model:
// each buffer's role and layer, bytes, arena offset and live range, with
// the range's ends named by phase (fwd/bwd) and by the kernel whose time
// loop runs there (`bwd lstm_bwd L1`), the forward/backward boundary, the
// peak and the buffers live at it. Written as text, JSON and an SVG
// picture of the arena over time by the tools (rnn-run --memory-report,
// rnn-opt --rnn-memory-report).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_ANALYSIS_MEMORYREPORT_H
#define RNN_ANALYSIS_MEMORYREPORT_H

#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class Operation;
namespace func {
class FuncOp;
} // namespace func

namespace rnn {
class MemoryPlan;

struct PlannedBuffer {
  std::string role;
  /// The bytes in T, B and P (SizeExpr), for a plan in closed form.
  std::string size;
  /// The model layer, or -1 for a buffer of no layer.
  int64_t layer = -1;
  int64_t bytes = 0;
  int64_t offset = 0;
  /// Op positions in the function's entry block: allocation, last use,
  /// and the free (none if the buffer is returned or never freed).
  unsigned alloc = 0;
  unsigned lastUse = 0;
  std::optional<unsigned> free;
  bool returned = false;
};

/// What the plan predicts for the two phases of a training function: the
/// peak before the forward/backward boundary, the peak from it on, and the
/// bytes held at it that are not returned (what the forward keeps for the
/// backward). The runtime measures the same three figures when each buffer
/// is allocated on its own; in an arena they are known only from the plan.
struct PhaseBytes {
  int64_t fwdPeak = 0;
  int64_t bwdPeak = 0;
  int64_t saved = 0;
};

/// The call shape a plan in closed form (a function compiled for every T
/// and B) is reported at.
struct ReportShape {
  int64_t seqLen = 0, batch = 0;
};

struct MemoryPlanReport {
  std::string function;
  /// For a plan in closed form: the shape it is evaluated at, the GEMM
  /// block's steps there, and under a chunk the chunk's steps and count.
  std::optional<ReportShape> shape;
  int64_t blockSteps = 0;
  std::optional<std::pair<int64_t, int64_t>> chunk;
  /// rnn.remat of the function, and rnn.remat_budget if it was chosen
  /// under a budget.
  std::string remat;
  std::optional<int64_t> budget;
  int64_t peakBytes = 0;
  int64_t arenaBytes = 0;
  /// Ops in the entry block; a buffer never freed lives to this position.
  unsigned positions = 0;
  /// Position of the forward/backward boundary (rnn.begin_backward), if
  /// the function has a backward.
  std::optional<unsigned> backwardStart;
  /// The phase figures, with the boundary.
  std::optional<PhaseBytes> phases;
  /// The first position where the peak is held, and the buffers (indices
  /// into `buffers`) live there.
  unsigned peakPosition = 0;
  std::vector<unsigned> liveAtPeak;
  /// Per position, "fwd lstm_fwd L0": the phase and the kernel of the last
  /// op at or before it that names one (rnn.kernel); empty strings when the
  /// function has no kernel and no phases (hand-written IR).
  std::vector<std::string> positionNames;
  std::vector<PlannedBuffer> buffers;

  /// "gates L0", or the role alone for a buffer of no layer.
  std::string describe(const PlannedBuffer &buffer) const;
};

/// The report of a function's plan (one that isPlanned()), or of a plan in
/// closed form at `shape`; nothing if its sizes overflow there.
std::optional<MemoryPlanReport>
buildMemoryReport(const MemoryPlan &plan,
                  std::optional<ReportShape> shape = std::nullopt);

/// The text report.
void printMemoryReport(const MemoryPlanReport &report, llvm::raw_ostream &os);

/// {"functions": [...]}: every field of the reports.
llvm::json::Value memoryReportToJSON(llvm::ArrayRef<MemoryPlanReport> reports);

/// One SVG picture, a panel per function: buffers as bars over op positions
/// (x) at their arena offsets (y), the backward boundary and the peak
/// marked, the buffers live at the peak outlined.
void printMemorySVG(llvm::ArrayRef<MemoryPlanReport> reports,
                    llvm::raw_ostream &os);

/// Writes the memory plans (MemoryPlan) of the functions of `module` that
/// have one (with `shape`, also the plans in closed form, evaluated
/// there): as text to stdout if `reportFile` is "-", else to `reportFile`
/// (JSON if it ends in .json, else text) unless it is empty, and as an SVG
/// picture to `svgFile` unless it is empty. Each file is written whole or
/// not at all; failure (an error on `module` naming the file, on a
/// function planned in closed form when there is no shape, or naming the
/// shape a plan's sizes overflow at) if one cannot be written.
llvm::LogicalResult
writeMemoryReports(Operation *module, llvm::StringRef reportFile,
                   llvm::StringRef svgFile,
                   std::optional<ReportShape> shape = std::nullopt);

/// Writes the memory reports (writeMemoryReports) after each run of
/// rnn-plan-memory in the pass manager it is added to: on the planned
/// buffers, before later passes (rnn-place-in-arena) make them views of
/// one arena. A report that cannot be written is an error on the module;
/// as the pipeline itself succeeds, failed() tells the tool.
class MemoryReportWriter : public PassInstrumentation {
public:
  MemoryReportWriter(std::string reportFile, std::string svgFile,
                     std::optional<ReportShape> shape = std::nullopt)
      : reportFile(std::move(reportFile)), svgFile(std::move(svgFile)),
        shape(shape) {}
  void runAfterPass(Pass *pass, Operation *op) override;
  bool failed() const { return writeFailed; }

private:
  std::string reportFile, svgFile;
  std::optional<ReportShape> shape;
  bool writeFailed = false;
};

} // namespace rnn
} // namespace mlir

#endif // RNN_ANALYSIS_MEMORYREPORT_H
