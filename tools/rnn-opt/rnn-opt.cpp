//===- rnn-opt.cpp - the rnnc optimizer driver ----------------------------===//
//
// mlir-opt for rnnc: every rnn pass and pipeline, plus the upstream dialects
// and passes the pipelines use. --rnn-memory-report and --rnn-memory-svg
// describe the memory plan each rnn-plan-memory leaves (MemoryReport.h).
// They are written under temporary names and put in place (stdout's
// printed) only when the run succeeds, and a report that cannot be written
// fails the run with no output, so main opens the input and output itself,
// around the core of MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/MemoryReport.h"
#include "rnn/InitAll.h"
#include "rnn/Support/StagedFiles.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace rnn {
/// Test-only passes (test/lib).
void registerTestPasses();
} // namespace rnn
} // namespace mlir

using namespace mlir;

static llvm::cl::opt<std::string> memoryReport(
    "rnn-memory-report", llvm::cl::init(""),
    llvm::cl::desc("After rnn-plan-memory, write the memory plan of every "
                   "function: - (stdout, text) or a file (JSON if it ends "
                   "in .json, else text)"),
    llvm::cl::value_desc("file"));
static llvm::cl::opt<std::string> memoryReportShape(
    "rnn-memory-report-shape", llvm::cl::init(""),
    llvm::cl::desc("The call shape (sequence length x batch, e.g. 32x64) "
                   "the reports evaluate the plans of functions of every T "
                   "and B at; the plans of static functions have theirs"),
    llvm::cl::value_desc("TxB"));
static llvm::cl::opt<std::string> memorySVG(
    "rnn-memory-svg", llvm::cl::init(""),
    llvm::cl::desc("After rnn-plan-memory, draw the memory plans as SVG"),
    llvm::cl::value_desc("file"));

namespace {
/// The memory report writer of one chunk of the input, telling main if it
/// failed. A report for stdout, written to the temporary file `toStdout`,
/// is moved to `printed` after each chunk, to be printed when the run
/// succeeds: the reports of every chunk, as a file holds the last one's.
struct ChunkReportWriter : public mlir::rnn::MemoryReportWriter {
  ChunkReportWriter(std::string reportFile, std::string svgFile,
                    std::optional<mlir::rnn::ReportShape> shape,
                    bool &anyFailed, std::string toStdout,
                    std::string &printed)
      : MemoryReportWriter(std::move(reportFile), std::move(svgFile), shape),
        anyFailed(anyFailed), toStdout(std::move(toStdout)), printed(printed) {
  }
  void runAfterPass(Pass *pass, Operation *op) override {
    MemoryReportWriter::runAfterPass(pass, op);
    anyFailed |= failed();
    if (toStdout.empty() || !llvm::sys::fs::exists(toStdout))
      return;
    if (auto text = llvm::MemoryBuffer::getFile(toStdout))
      printed += (*text)->getBuffer();
    else
      anyFailed = true;
    llvm::sys::fs::remove(toStdout);
  }
  bool &anyFailed;
  std::string toStdout;
  std::string &printed;
};

/// The shape of --rnn-memory-report-shape, "TxB" with T and B at least 1;
/// nothing if it is malformed.
std::optional<mlir::rnn::ReportShape> parseReportShape(llvm::StringRef text) {
  auto [seqLen, batch] = text.split('x');
  mlir::rnn::ReportShape shape;
  if (seqLen.getAsInteger(10, shape.seqLen) ||
      batch.getAsInteger(10, shape.batch) || shape.seqLen < 1 ||
      shape.batch < 1)
    return std::nullopt;
  return shape;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  DialectRegistry registry;
  mlir::rnn::registerAllDialects(registry);
  mlir::rnn::registerAllPasses();
  mlir::rnn::registerTestPasses();
  auto [inputFile, outputFile] = registerAndParseCLIOptions(
      argc, argv, "rnnc optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // These print and return before reading any input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(llvm::outs(), nullptr, registry, config));
  std::optional<mlir::rnn::ReportShape> reportShape;
  if (!memoryReportShape.empty()) {
    if (memoryReport.empty() && memorySVG.empty()) {
      llvm::errs() << "rnn-opt: --rnn-memory-report-shape needs "
                      "--rnn-memory-report or --rnn-memory-svg\n";
      return EXIT_FAILURE;
    }
    reportShape = parseReportShape(memoryReportShape);
    if (!reportShape) {
      llvm::errs() << "rnn-opt: --rnn-memory-report-shape expects TxB with "
                      "T and B at least 1 (e.g. 32x64), got '"
                   << memoryReportShape << "'\n";
      return EXIT_FAILURE;
    }
  }
  // Each report is a file of its own, not the output.
  if (!memoryReport.empty() && !memorySVG.empty() &&
      (memoryReport == memorySVG ||
       (memoryReport != "-" && memorySVG != "-" &&
        ::rnn::namesSameFile(memoryReport, memorySVG)))) {
    llvm::errs() << "rnn-opt: --rnn-memory-report and --rnn-memory-svg "
                 << (memoryReport == "-"
                         ? "both write stdout"
                         : "name the same file '" + memoryReport + "'")
                 << "\n";
    return EXIT_FAILURE;
  }
  for (const llvm::cl::opt<std::string> *report : {&memoryReport, &memorySVG})
    for (auto [what, file] :
         {std::pair<const char *, const std::string *>{"output", &outputFile},
          {"input", &inputFile}})
      if (!report->empty() && *report != "-" && *file != "-" &&
          ::rnn::namesSameFile(*report, *file)) {
        llvm::errs() << "rnn-opt: --" << report->ArgStr << " names the " << what
                     << " file '" << *file << "'\n";
        return EXIT_FAILURE;
      }
  ::rnn::StagedFiles staged("rnn-opt");
  const llvm::cl::opt<std::string> *reports[] = {&memoryReport, &memorySVG};
  std::string staging[2];
  for (auto [report, path] : llvm::zip_equal(reports, staging)) {
    auto temporary = staged.stage(*report);
    if (!temporary) {
      llvm::errs() << "rnn-opt: --" << report->ArgStr << ": "
                   << llvm::toString(temporary.takeError()) << "\n";
      return EXIT_FAILURE;
    }
    path = *temporary;
  }
  // One pass manager per chunk of a split input, each chunk's reports
  // written in turn (a file: the last chunk's).
  bool reportFailed = false;
  std::string toStdout =
      memoryReport == "-" ? staging[0] : memorySVG == "-" ? staging[1] : "";
  std::string printed;
  MlirOptMainConfig pipeline = config;
  config.setPassPipelineSetupFn([&](PassManager &pm) -> LogicalResult {
    if (failed(pipeline.setupPassPipeline(pm)))
      return failure();
    if (memoryReport.empty() && memorySVG.empty())
      return success();
    pm.addInstrumentation(std::make_unique<ChunkReportWriter>(
        staging[0], staging[1], reportShape, reportFailed, toStdout, printed));
    return success();
  });
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  // The output is held back until the reports are written: a run whose
  // report fails prints no module.
  std::string result;
  llvm::raw_string_ostream resultStream(result);
  if (failed(MlirOptMain(resultStream, std::move(input), registry, config)) ||
      reportFailed)
    return EXIT_FAILURE;
  if (llvm::Error error = staged.commit()) {
    llvm::errs() << "rnn-opt: " << llvm::toString(std::move(error)) << "\n";
    return EXIT_FAILURE;
  }
  if (!printed.empty()) {
    llvm::outs() << printed;
    llvm::outs().flush();
  }
  output->os() << result;
  output->keep();
  return EXIT_SUCCESS;
}
