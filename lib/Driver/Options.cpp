//===- Options.cpp - the flags rnn-run and rnn-compile share --------------===//
//
// Implements Options.h.
//
//===----------------------------------------------------------------------===//

#include "rnn/Driver/Options.h"

#include "rnn/Driver/Model.h"
#include "rnn/Dialect/RNNAttrs.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm-c/Core.h"
#include "llvm/Support/Path.h"

#include <cstdio>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace rnn {
namespace driver {

StringRef stringifyMode(Mode mode) {
  return mode == Mode::Train ? "train" : "infer";
}

DriverOptions::DriverOptions(cl::OptionCategory &category)
    : modelFile(cl::Positional, cl::init(""), cl::desc("[MODEL.mlir]"),
                cl::cat(category)),
      preset("preset", cl::init(""),
             cl::desc("Built-in model of a cell of the dialect, lstm, gru, "
                      "... (another name lists them; default: none, give it "
                      "or MODEL.mlir)"),
             cl::cat(category)),
      entry("entry", cl::init(""),
            cl::desc("The model function of MODEL.mlir (default: its only "
                     "one)"),
            cl::cat(category)),
      seqLen("seq-len", cl::init(32),
             cl::desc("Sequence length T of a preset (default 32)"),
             cl::cat(category)),
      batch("batch", cl::init(64),
            cl::desc("Batch size B of a preset (default 64)"),
            cl::cat(category)),
      inputSize("input-size", cl::init(256),
                cl::desc("Input size I of a preset (default 256)"),
                cl::cat(category)),
      hiddenSize("hidden-size", cl::init(256),
                 cl::desc("Hidden size H of a preset (default 256)"),
                 cl::cat(category)),
      layers("layers", cl::init(1),
             cl::desc("Number of layers L of a preset (default 1)"),
             cl::cat(category)),
      dropout("dropout", cl::init(0.0),
              cl::desc("Dropout probability between a preset's layers, with "
                       "masks keyed by the argument rng = [seed, offset] "
                       "(train mode; default 0)"),
              cl::cat(category)),
      resetTo("reset-to", cl::init(ResetTo::Zero),
              cl::desc("What a step where is_init is set enters in a "
                       "preset's layers (default zero)"),
              cl::values(clEnumValN(ResetTo::Zero, "zero", "zeros"),
                         clEnumValN(ResetTo::Step, "step",
                                    "arguments h_reset, c_reset [L, T, B, H]"),
                         clEnumValN(ResetTo::Column, "column",
                                    "arguments h_reset, c_reset [L, B, H]")),
              cl::cat(category)),
      storage("storage", cl::init(""),
              cl::desc("Storage type of a preset's saved values that are "
                       "not states and of its GEMM operands: bf16 (with f32; "
                       "f32 accumulation and state) or the element type "
                       "(default)"),
              cl::cat(category)),
      dtype("dtype", cl::init(ElementType::F32),
            cl::desc("Element type of a preset's float tensors (default f32; "
                     "f64 on the cpu target only)"),
            cl::values(clEnumValN(ElementType::F32, "f32", "float32"),
                       clEnumValN(ElementType::F64, "f64", "float64")),
            cl::cat(category)),
      remat("remat", cl::init("none"),
            cl::desc("What the forward saves for the backward: none | gates "
                     "| chunk:K | budget:BYTES (default none)"),
            cl::cat(category)),
      target("target", cl::init(mlir::rnn::Target::CPU),
             cl::desc("Where the program runs (default cpu)"),
             mlir::rnn::targetValues(), cl::cat(category)),
      gemmRows("gemm-rows", cl::init(0),
               cl::desc("Rows the GEMM blocks aim for (0: the target's "
                        "default; see rnn-opt's gemm-rows)"),
               cl::cat(category)),
      wavefront("wavefront", cl::init(false),
                cl::desc("Run the layers as a wavefront, each on a stream of "
                         "its own, block by block (cpu: in program order)"),
                cl::cat(category)),
      cudaToolkit(
          "cuda-toolkit", cl::init(""),
          cl::desc("CUDA toolkit directory with nvvm/libdevice "
                   "(--target=cuda; default: $RNNC_CUDA_TOOLKIT, else the "
                   "build's toolkit)"),
          cl::cat(category)),
      gpuMath("gpu-math", cl::init(mlir::rnn::GPUMath::Polynomial),
              cl::desc("How the kernels compute tanh and exp (--target=cuda; "
                       "default polynomial)"),
              mlir::rnn::gpuMathValues(), cl::cat(category)),
      dynamic("dynamic", cl::init(false),
              cl::desc("Compile the preset for any sequence length and batch "
                       "size (T and B dynamic in its IR); rnn-run runs it at "
                       "--seq-len and --batch"),
              cl::cat(category)) {}

LogicalResult DriverOptions::check(MLIRContext &context,
                                   std::string &error) const {
  auto refuse = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  if (!preset.empty() && failed(checkCellName(context, preset, error)))
    return refuse("--preset: " + error);
  if (!preset.empty() && !modelFile.empty())
    return refuse("give either MODEL.mlir or --preset, not both");
  if (preset.empty() && modelFile.empty())
    return refuse("no model: give MODEL.mlir or --preset=CELL (" +
                  mlir::rnn::listCells(&context, "", ", ") + ")");
  // A flag given empty names nothing: it is not taken as its default.
  if (entry.getNumOccurrences() && entry.empty())
    return refuse("--entry= names no function");
  if (cudaToolkit.getNumOccurrences() && cudaToolkit.empty())
    return refuse("--cuda-toolkit= names no directory");
  if (!entry.empty() && modelFile.empty())
    return refuse("--entry needs a model file (MODEL.mlir)");
  if (cudaToolkit.getNumOccurrences() && !isCUDA())
    return refuse("--cuda-toolkit needs --target=cuda");
  if (gpuMath.getNumOccurrences() && !isCUDA())
    return refuse("--gpu-math needs --target=cuda");
  if (dynamic && !modelFile.empty())
    return refuse("--dynamic applies to --preset: a model file's IR fixes "
                  "its shapes, which are static");
  if (dynamic && wavefront)
    return refuse("--dynamic and --wavefront: a wavefront's blocks are "
                  "known for a static shape only");
  const cl::opt<long long> *sizes[] = {&seqLen, &batch, &inputSize,
                                       &hiddenSize, &layers};
  if (modelFile.empty()) {
    for (const cl::opt<long long> *size : sizes)
      if (*size <= 0)
        return refuse("--" + size->ArgStr + " must be positive, got " +
                      Twine(size->getValue()));
    // Refused before the GPU's driver is looked for (checkTarget refuses
    // an f64 model file once it is read).
    if (dtype == ElementType::F64 && isCUDA())
      return refuse("--target=cuda computes in f32 only; the model is f64");
    return success();
  }
  // A model file's IR fixes what a preset's flags set.
  for (const cl::opt<long long> *size : sizes)
    if (size->getNumOccurrences())
      return refuse("--" + size->ArgStr +
                    " applies to --preset: a model file's IR fixes its shapes");
  std::pair<const cl::Option *, const char *> presetOnly[] = {
      {&dtype, "a model file's IR fixes its types"},
      {&dropout, "a model file places its rnn.dropout ops"},
      {&resetTo, "a model file's layers name their reset states"},
      {&storage, "a model file's layers give their storage type"}};
  for (auto [flag, reason] : presetOnly)
    if (flag->getNumOccurrences())
      return refuse("--" + flag->ArgStr + " applies to --preset: " + reason);
  return success();
}

ModelShape DriverOptions::presetShape() const {
  ModelShape shape;
  shape.cell = preset;
  shape.f64 = dtype == ElementType::F64;
  shape.seqLen = seqLen;
  shape.batch = batch;
  shape.inputSize = inputSize;
  shape.hiddenSize = hiddenSize;
  shape.layers = layers;
  shape.dropout = dropout;
  shape.resetTo = resetTo;
  shape.storage = storage;
  shape.dynamic = dynamic;
  return shape;
}

void DriverOptions::apply(mlir::rnn::PipelineOptions &options) const {
  options.remat = remat.getValue();
  options.target = target.getValue();
  options.gemmRows = gemmRows.getValue();
  options.wavefront = wavefront.getValue();
  options.gpuMath = gpuMath.getValue();
  // The cpu target takes no toolkit (--cuda-toolkit is refused there, and
  // $RNNC_CUDA_TOOLKIT does not apply).
  if (isCUDA())
    options.toolkit =
        mlir::rnn::PipelineOptions::toolkitFromFlag(cudaToolkit.getValue());
}

std::string parseCommandLine(int argc, char **argv, StringRef overview) {
  // --version: rnnc's, and the LLVM it runs.
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    os << "rnnc " RNNC_VERSION " (LLVM " << major << '.' << minor << '.'
       << patch << ")\n";
  });
  // An option reports a bad value on stderr itself, one line per option:
  // stderr goes to a temporary file while the parser runs.
  std::string errors;
  llvm::raw_string_ostream parserErrors(errors);
  llvm::errs().flush();
  FILE *captured = std::tmpfile();
  int savedStderr = captured ? dup(STDERR_FILENO) : -1;
  bool redirected =
      savedStderr >= 0 && dup2(fileno(captured), STDERR_FILENO) >= 0;
  bool parsed =
      llvm::cl::ParseCommandLineOptions(argc, argv, overview, &parserErrors);
  if (redirected) {
    llvm::errs().flush();
    dup2(savedStderr, STDERR_FILENO);
    std::string reported;
    std::rewind(captured);
    char buffer[4096];
    while (size_t n = std::fread(buffer, 1, sizeof(buffer), captured))
      reported.append(buffer, n);
    errors = reported + errors;
  }
  if (savedStderr >= 0)
    close(savedStderr);
  if (captured)
    std::fclose(captured);
  if (parsed)
    return "";
  StringRef first = StringRef(errors).ltrim().split('\n').first.trim();
  first.consume_front((llvm::sys::path::filename(argv[0]) + ": ").str());
  return first.empty() ? "bad command line" : first.str();
}

} // namespace driver
} // namespace rnn
