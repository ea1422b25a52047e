//===- MemoryReport.cpp - the memory plan, for people ---------------------===//
//
// Implements MemoryReport.h. The SVG is written by hand: it is a handful of
// rectangles, lines and labels, and a drawing library would be the only
// dependency of its kind in the project.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/MemoryReport.h"

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Analysis/MemoryPlan.h"
#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Support/Diagnostics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace mlir::rnn;

std::string MemoryPlanReport::describe(const PlannedBuffer &buffer) const {
  if (buffer.layer < 0)
    return buffer.role;
  return buffer.role + " L" + std::to_string(buffer.layer);
}

std::optional<MemoryPlanReport>
rnn::buildMemoryReport(const MemoryPlan &plan,
                       std::optional<ReportShape> shape) {
  func::FuncOp func = plan.getFunction();
  const BufferLiveness &liveness = plan.getLiveness();
  const std::optional<SymbolicPlan> &symbolic = plan.getSymbolic();
  MemoryPlanReport report;
  // A plan in closed form: sizes, offsets and figures at the shape.
  std::optional<CallShape> call;
  SmallVector<int64_t> offsets(plan.getOffsets());
  if (!plan.isPlanned() && symbolic && shape) {
    call = liveness.getCallShape(shape->seqLen, shape->batch);
    std::optional<SmallVector<int64_t>> placed =
        symbolic->offsets(*call, &report.arenaBytes);
    if (!placed)
      return std::nullopt;
    offsets = std::move(*placed);
    report.shape = shape;
    report.blockSteps = call->P;
    if (liveness.getSizeSymbols().chunk)
      report.chunk = std::make_pair(call->K, call->N);
  }
  report.function = func.getName().str();
  MLIRContext *ctx = func.getContext();
  if (StringAttr remat = RNNDialect::RematAttrHelper(ctx).getAttr(func))
    report.remat = remat.str();
  if (IntegerAttr budget = RNNDialect::RematBudgetAttrHelper(ctx).getAttr(func))
    report.budget = budget.getInt();
  if (!call)
    report.arenaBytes = plan.getArenaBytes();
  report.backwardStart = plan.getBackwardStart();
  report.phases = plan.getPhases();
  if (call && symbolic->fwdPeak) {
    report.phases = symbolic->phasesAt(*call);
    if (!report.phases)
      return std::nullopt;
  }
  report.positions = liveness.getNumPositions();

  // Names of positions: the phase, and the kernel of the last op naming one.
  bool named = false;
  std::string kernel;
  unsigned position = 0;
  for (Operation &op : func.getBody().front()) {
    if (position == report.backwardStart)
      named = true;
    if (auto name = op.getAttrOfType<StringAttr>(kKernelAttr)) {
      kernel = name.str();
      if (auto layer = op.getAttrOfType<IntegerAttr>(kLayerAttr))
        kernel += " L" + std::to_string(layer.getInt());
      named = true;
    }
    bool backward = report.backwardStart && position >= *report.backwardStart;
    std::string phase = backward ? "bwd" : "fwd";
    report.positionNames.push_back(kernel.empty() ? phase
                                                  : phase + " " + kernel);
    ++position;
  }
  if (!named)
    for (std::string &name : report.positionNames)
      name.clear();
  for (auto [info, offset] : llvm::zip(liveness.getBuffers(), offsets)) {
    PlannedBuffer buffer;
    buffer.role = info.role;
    buffer.layer = info.layer;
    buffer.bytes = info.bytes;
    if (call) {
      std::optional<int64_t> bytes = info.size->evaluate(*call);
      if (!bytes)
        return std::nullopt;
      buffer.bytes = *bytes;
      buffer.size = info.size->str();
    }
    buffer.offset = offset;
    buffer.alloc = info.allocIndex;
    buffer.lastUse = info.lastUseIndex;
    if (info.dealloc)
      buffer.free = info.deallocIndex;
    buffer.returned = info.returned;
    report.buffers.push_back(buffer);
  }

  if (call) {
    // The held bytes at each position, at the shape; the first largest.
    for (auto [position, held] : llvm::enumerate(liveness.getHeldSizes())) {
      std::optional<int64_t> bytes = held.evaluate(*call);
      if (!bytes)
        return std::nullopt;
      if (*bytes > report.peakBytes) {
        report.peakBytes = *bytes;
        report.peakPosition = position;
      }
    }
  } else {
    std::tie(report.peakBytes, report.peakPosition) = liveness.getPeak();
  }
  for (auto [index, buffer] : llvm::enumerate(report.buffers))
    if (buffer.alloc <= report.peakPosition &&
        (!buffer.free || *buffer.free > report.peakPosition))
      report.liveAtPeak.push_back(index);
  return report;
}

/// "[alloc, free]", with "result" or "end" for a buffer never freed.
static std::string rangeText(const PlannedBuffer &buffer) {
  std::string end = buffer.free ? std::to_string(*buffer.free)
                                : (buffer.returned ? "result" : "end");
  return llvm::formatv("[{0}, {1}]", buffer.alloc, end).str();
}

/// Name of the position where `buffer` stops holding memory.
static std::string endName(const MemoryPlanReport &report,
                           const PlannedBuffer &buffer) {
  if (!buffer.free)
    return buffer.returned ? "result" : "end";
  return report.positionNames[*buffer.free];
}

void rnn::printMemoryReport(const MemoryPlanReport &report,
                            llvm::raw_ostream &os) {
  os << "memory plan of @" << report.function;
  if (report.shape && report.chunk)
    os << llvm::formatv(
        " at T={0}, B={1} (P={2}, K={3}, N={4}; sizes in T, B, P, K and N)",
        report.shape->seqLen, report.shape->batch, report.blockSteps,
        report.chunk->first, report.chunk->second);
  else if (report.shape)
    os << llvm::formatv(" at T={0}, B={1} (P={2}; sizes in T, B and P)",
                        report.shape->seqLen, report.shape->batch,
                        report.blockSteps);
  os << "\n";
  if (!report.remat.empty()) {
    os << "  remat " << report.remat;
    if (report.budget)
      os << " (chosen under budget " << *report.budget << " bytes)";
    os << "\n";
  }
  for (const PlannedBuffer &buffer : report.buffers) {
    os << llvm::formatv("  {0,-18} {1,12} bytes  live {2,-16} offset {3}",
                        report.describe(buffer), buffer.bytes,
                        rangeText(buffer), buffer.offset);
    const std::string &from = report.positionNames[buffer.alloc];
    if (!from.empty())
      os << "  " << from << " .. " << endName(report, buffer);
    if (!buffer.size.empty())
      os << "  = " << buffer.size;
    os << "\n";
  }
  os << llvm::formatv("  predicted peak {0} bytes, arena {1} bytes\n",
                      report.peakBytes, report.arenaBytes);
  if (report.backwardStart) {
    os << "  backward from op " << *report.backwardStart;
    if (report.phases)
      os << llvm::formatv(": forward peak {0} bytes, backward peak {1} bytes, "
                          "saved for backward {2} bytes",
                          report.phases->fwdPeak, report.phases->bwdPeak,
                          report.phases->saved);
    os << "\n";
  }
  if (report.peakBytes == 0)
    return;
  os << "  at the peak (op " << report.peakPosition;
  if (!report.positionNames[report.peakPosition].empty())
    os << ", " << report.positionNames[report.peakPosition];
  os << "):";
  for (unsigned index : report.liveAtPeak)
    os << " " << report.describe(report.buffers[index]) << ";";
  os << "\n";
}

llvm::json::Value rnn::memoryReportToJSON(ArrayRef<MemoryPlanReport> reports) {
  llvm::json::Array functions;
  for (const MemoryPlanReport &report : reports) {
    auto name = [&](unsigned position) -> llvm::json::Value {
      if (position >= report.positionNames.size() ||
          report.positionNames[position].empty())
        return nullptr;
      return report.positionNames[position];
    };
    llvm::json::Array buffers;
    for (const PlannedBuffer &buffer : report.buffers) {
      llvm::json::Object entry{
          {"role", buffer.role},
          {"layer", buffer.layer < 0 ? llvm::json::Value(nullptr)
                                     : llvm::json::Value(buffer.layer)},
          {"bytes", buffer.bytes},
          {"offset", buffer.offset},
          {"alloc", buffer.alloc},
          {"alloc_at", name(buffer.alloc)},
          {"last_use", buffer.lastUse},
          {"last_use_at", name(buffer.lastUse)},
          {"free", buffer.free ? llvm::json::Value(*buffer.free)
                               : llvm::json::Value(nullptr)},
          {"free_at",
           buffer.free ? name(*buffer.free) : llvm::json::Value(nullptr)},
          {"returned", buffer.returned}};
      if (!buffer.size.empty())
        entry["size"] = buffer.size;
      buffers.push_back(std::move(entry));
    }
    llvm::json::Object function{
        {"name", report.function},
        {"remat", report.remat.empty() ? llvm::json::Value(nullptr)
                                       : llvm::json::Value(report.remat)},
        {"predicted_peak_bytes", report.peakBytes},
        {"arena_bytes", report.arenaBytes},
        {"positions", report.positions},
        {"backward_start", report.backwardStart
                               ? llvm::json::Value(*report.backwardStart)
                               : llvm::json::Value(nullptr)},
        {"peak",
         llvm::json::Object{{"bytes", report.peakBytes},
                            {"position", report.peakPosition},
                            {"at", name(report.peakPosition)},
                            {"live", llvm::json::Array(report.liveAtPeak)}}},
        {"buffers", std::move(buffers)}};
    if (report.budget)
      function["remat_budget"] = *report.budget;
    if (report.shape) {
      llvm::json::Object shape{{"T", report.shape->seqLen},
                               {"B", report.shape->batch},
                               {"P", report.blockSteps}};
      if (report.chunk) {
        shape["K"] = report.chunk->first;
        shape["N"] = report.chunk->second;
      }
      function["shape"] = std::move(shape);
    }
    if (report.phases)
      function["phases"] =
          llvm::json::Object{{"fwd_peak_bytes", report.phases->fwdPeak},
                             {"bwd_peak_bytes", report.phases->bwdPeak},
                             {"saved_bytes", report.phases->saved}};
    functions.push_back(std::move(function));
  }
  return llvm::json::Object{{"functions", std::move(functions)}};
}

/// `text` with the characters XML gives a meaning escaped.
static std::string xml(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// A fill colour per role, the same in every panel.
static std::string colourOf(llvm::StringRef role) {
  static const char *palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                  "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                  "#9c755f", "#bab0ac"};
  uint32_t hash = 2166136261u; // FNV-1a: stable across runs and builds.
  for (char c : role)
    hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  return palette[hash % std::size(palette)];
}

void rnn::printMemorySVG(ArrayRef<MemoryPlanReport> reports,
                         llvm::raw_ostream &os) {
  constexpr double width = 960, plotLeft = 90, plotRight = 930;
  constexpr double panelHeight = 300, plotTop = 40, plotHeight = 220;
  double height = std::max<size_t>(reports.size(), 1) * panelHeight + 10;
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                      "font-family=\"sans-serif\" font-size=\"11\">\n",
                      width, height);
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (auto [panel, report] : llvm::enumerate(reports)) {
    double top = panel * panelHeight;
    double positions = std::max(report.positions, 1u);
    double arena = std::max<int64_t>(report.arenaBytes, 1);
    auto x = [&](double position) {
      return plotLeft + (plotRight - plotLeft) * position / positions;
    };
    auto y = [&](double offset) {
      return top + plotTop + plotHeight * (1.0 - offset / arena);
    };
    os << llvm::formatv("<g class=\"function\" data-name=\"{0}\">\n",
                        xml(report.function));
    os << llvm::formatv(
        "<text x=\"{0}\" y=\"{1}\" font-size=\"13\" font-weight=\"bold\">"
        "@{2}{3}: predicted peak {4} bytes, arena {5} bytes</text>\n",
        plotLeft, top + 20, xml(report.function),
        report.remat.empty() ? "" : " (remat " + xml(report.remat) + ")",
        report.peakBytes, report.arenaBytes);
    // Axes: op positions along x, arena offsets along y.
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" "
                        "height=\"{3}\" fill=\"none\" stroke=\"#888\"/>\n",
                        plotLeft, top + plotTop, plotRight - plotLeft,
                        plotHeight);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\">{2} "
                        "B</text>\n",
                        plotLeft - 4, y(arena) + 4, report.arenaBytes);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\">0"
                        "</text>\n",
                        plotLeft - 4, y(0) + 4);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">"
                        "op position in the function (0 .. {2})</text>\n",
                        (plotLeft + plotRight) / 2,
                        top + plotTop + plotHeight + 16, report.positions);
    for (auto [index, buffer] : llvm::enumerate(report.buffers)) {
      double end = buffer.free ? *buffer.free : report.positions;
      double x0 = x(buffer.alloc), x1 = std::max(x(end), x0 + 1);
      double size = std::max<int64_t>(buffer.bytes, 1);
      double y0 = y(buffer.offset + size), y1 = y(buffer.offset);
      bool live = llvm::is_contained(report.liveAtPeak, index);
      std::string from = report.positionNames[buffer.alloc];
      std::string title =
          llvm::formatv("{0}: {1} bytes at offset {2}, "
                        "live {3}{4}",
                        report.describe(buffer), buffer.bytes, buffer.offset,
                        rangeText(buffer),
                        from.empty() ? ""
                                     : " (" + from + " .. " +
                                           endName(report, buffer) + ")")
              .str();
      os << llvm::formatv(
          "<rect class=\"buffer\" x=\"{0}\" y=\"{1}\" width=\"{2}\" "
          "height=\"{3}\" fill=\"{4}\" fill-opacity=\"0.8\" stroke=\"{5}\" "
          "stroke-width=\"{6}\"><title>{7}</title></rect>\n",
          x0, y0, x1 - x0, std::max(y1 - y0, 0.5), colourOf(buffer.role),
          live ? "black" : "white", live ? 1.5 : 0.5, xml(title));
    }
    if (report.backwardStart) {
      double bx = x(*report.backwardStart);
      os << llvm::formatv(
          "<line class=\"backward\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" "
          "y2=\"{2}\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n"
          "<text x=\"{3}\" y=\"{4}\">backward</text>\n",
          bx, top + plotTop - 6, top + plotTop + plotHeight, bx + 3,
          top + plotTop - 8);
    }
    if (report.peakBytes > 0) {
      double px = x(report.peakPosition);
      os << llvm::formatv(
          "<line class=\"peak\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" "
          "stroke=\"#d00\" stroke-width=\"1.5\"/>\n"
          "<text x=\"{3}\" y=\"{4}\" fill=\"#d00\">peak {5} bytes (op "
          "{6})</text>\n",
          px, top + plotTop, top + plotTop + plotHeight, px + 3,
          top + plotTop + 12, report.peakBytes, report.peakPosition);
    }
    // Legend: one swatch per role.
    std::vector<std::string> roles;
    for (const PlannedBuffer &buffer : report.buffers)
      if (!llvm::is_contained(roles, buffer.role))
        roles.push_back(buffer.role);
    double lx = plotLeft;
    for (const std::string &role : roles) {
      double ly = top + plotTop + plotHeight + 30;
      os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"10\" "
                          "height=\"10\" fill=\"{2}\"/><text x=\"{3}\" "
                          "y=\"{4}\">{5}</text>\n",
                          lx, ly - 9, colourOf(role), lx + 13, ly, xml(role));
      lx += 20 + 7 * role.size();
    }
    os << "</g>\n";
  }
  os << "</svg>\n";
}

/// Writes `path` through a temporary file renamed into place
/// (llvm::writeToOutput), so that no partial file is left behind.
static LogicalResult writeFile(Operation *module, StringRef what,
                               StringRef path,
                               function_ref<void(llvm::raw_ostream &)> write) {
  llvm::Error error =
      llvm::writeToOutput(path, [&](llvm::raw_ostream &os) -> llvm::Error {
        write(os);
        return llvm::Error::success();
      });
  if (!error)
    return success();
  // The error names the file again; the message names it once.
  std::error_code ec = llvm::errorToErrorCode(std::move(error));
  return rnn::emitErrorAt(module, "cannot write the ")
         << what << " " << path << ": " << ec.message();
}

LogicalResult rnn::writeMemoryReports(Operation *module, StringRef reportFile,
                                      StringRef svgFile,
                                      std::optional<ReportShape> shape) {
  if (reportFile.empty() && svgFile.empty())
    return success();
  std::vector<MemoryPlanReport> reports;
  for (auto func : module->getRegion(0).getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    MemoryPlan plan(func);
    if (!plan.isPlanned()) {
      if (!plan.getSymbolic())
        continue;
      if (!shape)
        return rnn::emitErrorAt(func)
               << "@" << func.getSymName()
               << " is planned for every T and B: its memory report needs a "
                  "shape to evaluate the plan at (rnn-opt "
                  "--rnn-memory-report-shape=TxB)";
    }
    std::optional<MemoryPlanReport> report = buildMemoryReport(plan, shape);
    if (!report)
      return rnn::emitErrorAt(func)
             << "@" << func.getSymName()
             << " has sizes beyond 64 bits at T=" << shape->seqLen
             << ", B=" << shape->batch << ": no memory report";
    reports.push_back(std::move(*report));
  }
  if (reportFile == "-") {
    for (const MemoryPlanReport &report : reports)
      printMemoryReport(report, llvm::outs());
  } else if (!reportFile.empty()) {
    bool json = reportFile.ends_with(".json");
    if (failed(writeFile(
            module, "memory report", reportFile, [&](llvm::raw_ostream &os) {
              if (json) {
                os << llvm::formatv("{0:2}", memoryReportToJSON(reports))
                   << "\n";
                return;
              }
              for (const MemoryPlanReport &report : reports)
                printMemoryReport(report, os);
            })))
      return failure();
  }
  if (!svgFile.empty() && failed(writeFile(module, "memory SVG", svgFile,
                                           [&](llvm::raw_ostream &os) {
                                             printMemorySVG(reports, os);
                                           })))
    return failure();
  return success();
}

void MemoryReportWriter::runAfterPass(Pass *pass, Operation *op) {
  if (pass->getArgument() == "rnn-plan-memory" &&
      mlir::failed(writeMemoryReports(op, reportFile, svgFile, shape)))
    writeFailed = true;
}
