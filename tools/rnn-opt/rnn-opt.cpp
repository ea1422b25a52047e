//===- rnn-opt.cpp - the rnnc optimizer driver ----------------------------===//
//
// mlir-opt for rnnc: every rnn pass and pipeline, plus the upstream dialects
// and passes the pipelines use. --rnn-memory-report and --rnn-memory-svg
// describe the memory plan each rnn-plan-memory leaves (MemoryReport.h);
// a report that cannot be written fails the run with no output, so main
// opens the input and output itself, around the core of MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/MemoryReport.h"
#include "rnn/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
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
/// failed.
struct ChunkReportWriter : public rnn::MemoryReportWriter {
  ChunkReportWriter(std::optional<rnn::ReportShape> shape, bool &anyFailed)
      : MemoryReportWriter(memoryReport, memorySVG, shape),
        anyFailed(anyFailed) {}
  void runAfterPass(Pass *pass, Operation *op) override {
    MemoryReportWriter::runAfterPass(pass, op);
    anyFailed |= failed();
  }
  bool &anyFailed;
};

/// The shape of --rnn-memory-report-shape, "TxB" with T and B at least 1;
/// nothing if it is malformed.
std::optional<rnn::ReportShape> parseReportShape(llvm::StringRef text) {
  auto [seqLen, batch] = text.split('x');
  rnn::ReportShape shape;
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
  rnn::registerAllDialects(registry);
  rnn::registerAllPasses();
  rnn::registerTestPasses();
  auto [inputFile, outputFile] = registerAndParseCLIOptions(
      argc, argv, "rnnc optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // These print and return before reading any input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(llvm::outs(), nullptr, registry, config));
  std::optional<rnn::ReportShape> reportShape;
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
  // One pass manager per chunk of a split input, each chunk's reports
  // written in turn (a file: the last chunk's).
  bool reportFailed = false;
  MlirOptMainConfig pipeline = config;
  config.setPassPipelineSetupFn([&](PassManager &pm) -> LogicalResult {
    if (failed(pipeline.setupPassPipeline(pm)))
      return failure();
    if (memoryReport.empty() && memorySVG.empty())
      return success();
    pm.addInstrumentation(
        std::make_unique<ChunkReportWriter>(reportShape, reportFailed));
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
  output->os() << result;
  output->keep();
  return EXIT_SUCCESS;
}
