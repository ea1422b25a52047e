//===- rnn-run.cpp - execute and measure rnn models -----------------------===//
//
// Builds (--preset) or reads (MODEL.mlir) a model, compiles its training
// (--mode=train) or inference function with the same pipeline as rnn-opt,
// runs it with the JIT, and reports time and the runtime's memory
// accounting. Arrays are exchanged as .npz with PyTorch's names.
// `--target=cuda` runs the same program as PTX kernels launched by the
// runtime (CUDA driver loaded at run time; one-line error without one), with
// device memory through the same accounting; `--emit=ptx` prints the PTX of
// every kernel the chosen mode needs without running anything.
//
// Errors in what the user gave (flags, files, arrays) print one line on
// stderr and exit 2; internal failures exit 1. No output file is written
// unless the run succeeds.
//
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "Jit.h"
#include "Model.h"
#include "RunTarget.h"

#include "rnn/Analysis/MemoryReport.h"
#include "rnn/Dialect/RNNAttrs.h"
#include "rnn/Dialect/RNNDialect.h"
#include "rnn/InitAll.h"
#include "rnn/Pipelines/Pipelines.h"
#include "rnn/Runtime/Runtime.h"
#include "rnn/Support/Npz.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <malloc.h>
#include <map>
#include <random>
#include <thread>

using namespace mlir;
using namespace ::rnn::run;
namespace npz = ::rnn::npz;
namespace cl = llvm::cl;
using mlir::rnn::kGradPrefix;

static cl::OptionCategory category("rnn-run options");

static cl::opt<std::string> modelFile(cl::Positional, cl::init(""),
                                      cl::desc("[MODEL.mlir]"),
                                      cl::cat(category));
static cl::opt<std::string> preset(
    "preset", cl::init(""),
    cl::desc(
        "Built-in model of a cell of the dialect, lstm, gru, ... (another "
        "name lists them; default: none, give it or MODEL.mlir)"),
    cl::cat(category));
static PresetFlags presetFlags(category);
static cl::opt<double>
    resetProb("reset-prob", cl::init(0.0),
              cl::desc("Probability of is_init[t, b] for generated masks "
                       "(default 0)"),
              cl::cat(category));
static cl::opt<std::string> mode("mode", cl::init("train"),
                                 cl::desc("train | infer (default train)"),
                                 cl::cat(category));
static cl::opt<std::string>
    remat("remat", cl::init("none"),
          cl::desc("Remat policy: none | gates | chunk:K | budget:BYTES "
                   "(default none)"),
          cl::cat(category));
static cl::opt<std::string> target("target", cl::init("cpu"),
                                   cl::desc("cpu | cuda (default cpu)"),
                                   cl::cat(category));
static cl::opt<bool> tf32("tf32", cl::init(false),
                          cl::desc("Let cuBLAS use TF32 tensor cores "
                                   "(--target=cuda)"),
                          cl::cat(category));
static cl::opt<bool> arena("arena", cl::init(false),
                           cl::desc("Place the program's buffers in one "
                                    "planned arena allocated before the "
                                    "steps: a step allocates nothing "
                                    "(the default on --target=cuda)"),
                           cl::cat(category));
static cl::opt<bool> noArena("no-arena", cl::init(false),
                             cl::desc("Allocate and free the program's "
                                      "buffers in each step, also on "
                                      "--target=cuda (implies "
                                      "--no-cuda-graph)"),
                             cl::cat(category));
static cl::opt<bool> noCudaGraph(
    "no-cuda-graph", cl::init(false),
    cl::desc("Run every step's host code instead of replaying a CUDA graph "
             "of one step (--target=cuda captures one after an eager "
             "warm-up step by default)"),
    cl::cat(category));
static cl::opt<std::string>
    cublasPath("cublas", cl::init(""),
               cl::desc("cuBLAS library to load (--target=cuda; default: "
                        "$RNNRT_LIBCUBLAS, the loader's libcublas.so.13, "
                        "the toolkit's, then an installed PyTorch's NVIDIA "
                        "wheels)"),
               cl::cat(category));
static cl::opt<std::string> cudaToolkit(
    "cuda-toolkit", cl::init(""),
    cl::desc("CUDA toolkit directory with nvvm/libdevice (--target=cuda; "
             "default: $RNNC_CUDA_TOOLKIT, else the build's toolkit)"),
    cl::cat(category));
static cl::opt<std::string>
    entryFunction("entry", cl::init(""),
                  cl::desc("The model function of MODEL.mlir to run (default: "
                           "its only one)"),
                  cl::cat(category));
static cl::opt<std::string>
    inputsFile("inputs", cl::init(""),
               cl::desc("Input arrays (.npz; default: generated from --seed)"),
               cl::cat(category));
static cl::opt<std::string>
    outputsFile("outputs", cl::init(""),
                cl::desc("Output arrays (.npz; default: none written)"),
                cl::cat(category));
static cl::opt<unsigned long long>
    seed("seed", cl::init(0), cl::desc("Seed of generated arrays (default 0)"),
         cl::cat(category));
static cl::opt<long long> iters("iters", cl::init(10),
                                cl::desc("Measured steps (default 10)"),
                                cl::cat(category));
static cl::opt<long long>
    warmup("warmup", cl::init(2),
           cl::desc("Unmeasured steps before (default 2)"), cl::cat(category));
static cl::opt<bool> json("json", cl::init(false),
                          cl::desc("Print one JSON object"), cl::cat(category));
static cl::opt<std::string> memoryReportFile(
    "memory-report", cl::init(""),
    cl::desc("Write the memory plan of the compiled functions to FILE: "
             "each buffer's role, layer, bytes, offset and live range "
             "(named by phase and kernel), the backward boundary, the peak "
             "and what is live at it (JSON if FILE ends in .json, else "
             "text; - for stdout) (default: none)"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<std::string> memorySVGFile(
    "memory-svg", cl::init(""),
    cl::desc("Draw the memory plans to FILE as SVG: buffers as bars over "
             "the function's ops at their arena offsets, the peak marked "
             "(default: none)"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<std::string>
    emit("emit", cl::init(""),
         cl::desc("mlir | ptx: print and exit (default: run)"),
         cl::cat(category));
static ScheduleFlags schedule(category);
static cl::opt<long long> threads("blas-threads", cl::init(1),
                                  cl::desc("BLAS threads (default 1, at most "
                                           "the machine's hardware threads)"),
                                  cl::cat(category));
static cl::opt<unsigned long long> maxMemory(
    "max-memory", cl::init(0),
    cl::desc("Bytes the step may use: its inputs plus the planned peak "
             "(default: the memory available, MemAvailable; on "
             "--target=cuda, the device's free memory)"),
    cl::cat(category));
static cl::opt<bool> jitListeners(
    "jit-listeners", cl::init(false),
    cl::desc("Tell perf (a jitdump per run) and GDB about the JIT-compiled "
             "code"),
    cl::cat(category));

[[noreturn]] void ::rnn::run::fail(const std::string &message, int code) {
  llvm::errs() << "rnn-run: " << message << "\n";
  std::exit(code);
}

static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Options and shapes
//===----------------------------------------------------------------------===//

/// Sets the compiler options the flags select.
static void selectPipelineOptions(mlir::rnn::PipelineOptions &options) {
  options.remat = remat;
  options.target = target;
  schedule.apply(options);
  // On the GPU the buffers come from the arena unless asked otherwise: a
  // step then allocates nothing, and a replayed graph cannot repeat
  // allocations anyway.
  options.arena = arena || (target == "cuda" && !noArena);
  options.toolkit =
      mlir::rnn::PipelineOptions::toolkitFromFlag(cudaToolkit.getValue());
}

/// Whether steps replay a CUDA graph of one step.
static bool useCudaGraph() {
  return target == "cuda" && !noCudaGraph && !noArena;
}

static void checkOptions(MLIRContext &context,
                         const mlir::rnn::PipelineOptions &options) {
  if (mode != "train" && mode != "infer")
    fail("--mode must be train or infer, got '" + mode + "'");
  if (target != "cpu" && target != "cuda")
    fail("--target must be cpu or cuda, got '" + target + "'");
  if (!emit.empty() && emit != "mlir" && emit != "ptx")
    fail("--emit must be mlir or ptx, got '" + emit + "'");
  const std::string &dtype = presetFlags.dtype;
  if (dtype != "f32" && dtype != "f64")
    fail("--dtype must be f32 or f64, got '" + dtype + "'");
  if (presetFlags.dtype.getNumOccurrences() && !modelFile.empty())
    fail("--dtype applies to --preset: a model file's IR fixes its types");
  if (presetFlags.dropout.getNumOccurrences() && !modelFile.empty())
    fail("--dropout applies to --preset: a model file places its rnn.dropout "
         "ops");
  if (presetFlags.resetTo.getNumOccurrences() && !modelFile.empty())
    fail("--reset-to applies to --preset: a model file's layers name their "
         "reset states");
  if (presetFlags.storage.getNumOccurrences() && !modelFile.empty())
    fail("--storage applies to --preset: a model file's layers give their "
         "storage type");
  std::string error;
  if (!preset.empty() &&
      failed(::rnn::run::checkCellName(context, preset, error)))
    fail("--preset: " + error);
  if (!preset.empty() && !modelFile.empty())
    fail("give either MODEL.mlir or --preset, not both");
  if (preset.empty() && modelFile.empty())
    fail("no model: give MODEL.mlir or --preset=CELL (" +
         mlir::rnn::listCells(&context, "", ", ") + ")");
  struct {
    const char *flag;
    long long value;
  } positive[] = {{"seq-len", presetFlags.seqLen},
                  {"batch", presetFlags.batch},
                  {"input-size", presetFlags.inputSize},
                  {"hidden-size", presetFlags.hiddenSize},
                  {"layers", presetFlags.layers},
                  {"iters", iters}};
  for (auto &p : positive)
    if (p.value <= 0)
      fail(std::string("--") + p.flag + " must be positive, got " +
           std::to_string(p.value));
  if (warmup < 0)
    fail("--warmup must be >= 0, got " + std::to_string(warmup));
  if (threads <= 0)
    fail("--blas-threads must be positive, got " + std::to_string(threads));
  // More threads than the machine runs only contend (and OpenBLAS with
  // dozens of threads under a memory limit may never finish starting them).
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  if (threads > static_cast<long long>(hardware))
    fail("--blas-threads=" + std::to_string(threads) +
         " exceeds this machine's " + std::to_string(hardware) +
         " hardware threads");
  if (!(resetProb >= 0.0 && resetProb <= 1.0))
    fail("--reset-prob must be in [0, 1], got " + std::to_string(resetProb));
  if (emit == "ptx" && target != "cuda")
    fail("--emit=ptx needs --target=cuda");
  for (auto [set, flag] : {std::pair<bool, const char *>{tf32, "--tf32"},
                           {noCudaGraph, "--no-cuda-graph"},
                           {!cublasPath.empty(), "--cublas"},
                           {!cudaToolkit.empty(), "--cuda-toolkit"}})
    if (set && target != "cuda")
      fail(std::string(flag) + " needs --target=cuda");
  if (arena && noArena)
    fail("give either --arena or --no-arena, not both");
  if (!entryFunction.empty() && modelFile.empty())
    fail("--entry needs a model file (MODEL.mlir)");
  if (mode == "infer" && remat.getNumOccurrences())
    fail("--remat applies to --mode=train: inference saves nothing for a "
         "backward pass");
  if (mode == "infer" && presetFlags.dropout > 0.0)
    fail("--dropout applies to --mode=train: inference drops nothing (as "
         "torch.nn.LSTM in eval mode)");
  // A model file's IR fixes its shapes.
  if (!modelFile.empty())
    for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
             &presetFlags.seqLen, &presetFlags.batch, &presetFlags.inputSize,
             &presetFlags.hiddenSize, &presetFlags.layers})
      if (flag->getNumOccurrences())
        fail("--" + flag->ArgStr.str() +
             " does not apply to a model file: its shapes are in its IR");
  std::string message;
  if (failed(mlir::rnn::verifyPipelineOptions(options, message)))
    fail(message);
}

/// Where the program runs, chosen once. Running on the GPU needs its
/// driver: this fails before anything is compiled.
static std::unique_ptr<RunTarget> chooseRunTarget() {
  if (target == "cuda" && emit.empty())
    return createCudaTarget(cublasPath, tf32);
  return createHostTarget();
}

/// Checks before anything runs that --outputs can be written and is not the
/// --inputs file: the archive is written after the steps, and replaced
/// atomically, which would overwrite the inputs or a read-only file.
static void checkOutputsFile() {
  namespace fs = llvm::sys::fs;
  if (outputsFile.empty())
    return;
  bool same = outputsFile == inputsFile;
  if (!same && !inputsFile.empty() && fs::exists(outputsFile))
    (void)fs::equivalent(outputsFile.getValue(), inputsFile.getValue(), same);
  if (same)
    fail("--outputs names the --inputs file '" + outputsFile +
         "'; the inputs would be overwritten");
  if (fs::exists(outputsFile)) {
    if (!fs::is_regular_file(outputsFile))
      fail("--outputs '" + outputsFile + "' is not a regular file");
    if (fs::access(outputsFile, fs::AccessMode::Write))
      fail("--outputs '" + outputsFile + "' is not writable");
    return;
  }
  llvm::SmallString<256> parent(outputsFile.getValue());
  llvm::sys::path::remove_filename(parent);
  std::string directory = parent.empty() ? "." : parent.str().str();
  if (!fs::is_directory(directory))
    fail("--outputs '" + outputsFile + "': no directory '" + directory + "'");
  if (fs::access(directory, fs::AccessMode::Write))
    fail("--outputs '" + outputsFile + "': directory '" + directory +
         "' is not writable");
}

/// The preset's shape: from the flags, or from the arrays in --inputs.
static ModelShape presetShape(const npz::ArrayMap *inputs) {
  ModelShape shape = presetFlags.shape(preset);
  if (!inputs)
    return shape;

  auto need = [&](const std::string &name, size_t rank,
                  const char *dims) -> const npz::Array & {
    auto it = inputs->find(name);
    if (it == inputs->end())
      fail(inputsFile + ": missing array '" + name + "'");
    if (it->second.shape.size() != rank)
      fail(inputsFile + ": array '" + name + "' must have rank " +
           std::to_string(rank) + " " + dims + ", got shape " +
           it->second.shapeString());
    return it->second;
  };
  const npz::Array &x = need("x", 3, "[T, B, I]");
  const npz::Array &whh = need("weight_hh_l0", 2, "[G*H, H]");
  int64_t numLayers = 0;
  while (inputs->count("weight_ih_l" + std::to_string(numLayers)))
    ++numLayers;
  if (numLayers == 0)
    need("weight_ih_l0", 2, "[G*H, I]");
  ModelShape fromFile = shape;
  fromFile.seqLen = x.shape[0];
  fromFile.batch = x.shape[1];
  fromFile.inputSize = x.shape[2];
  fromFile.hiddenSize = whh.shape[1];
  fromFile.layers = numLayers;
  // Flags given explicitly must agree with the file.
  struct {
    cl::opt<long long> &flag;
    int64_t value;
  } given[] = {{presetFlags.seqLen, fromFile.seqLen},
               {presetFlags.batch, fromFile.batch},
               {presetFlags.inputSize, fromFile.inputSize},
               {presetFlags.hiddenSize, fromFile.hiddenSize},
               {presetFlags.layers, fromFile.layers}};
  for (auto &g : given)
    if (g.flag.getNumOccurrences() && g.flag != g.value)
      fail("--" + g.flag.ArgStr.str() + "=" + std::to_string(g.flag) +
           " disagrees with " + inputsFile + " (" + std::to_string(g.value) +
           ")");
  for (int64_t d : {fromFile.seqLen, fromFile.batch, fromFile.inputSize,
                    fromFile.hiddenSize})
    if (d <= 0)
      fail(inputsFile + ": empty dimension in array 'x' or 'weight_hh_l0'");
  return fromFile;
}

//===----------------------------------------------------------------------===//
// Arrays
//===----------------------------------------------------------------------===//

/// Bytes of memory available to the process (MemAvailable), or nothing.
static std::optional<uint64_t> availableMemory() {
  auto buffer = llvm::MemoryBuffer::getFileAsStream("/proc/meminfo");
  if (!buffer)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.consume_front("MemAvailable:"))
      continue;
    uint64_t kib = 0;
    if (line.trim().split(' ').first.getAsInteger(10, kib))
      return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

/// Refuses, before anything is allocated, a step whose inputs and planned
/// peak exceed --max-memory or the memory available: one line naming the
/// figures instead of an allocation failure halfway. On the cuda target the
/// inputs and the planned peak are device memory, checked against the
/// device's free memory (the inputs are also held on the host).
static void checkMemoryLimit(RunTarget &runner, const Signature &signature,
                             bool train, std::optional<int64_t> peak) {
  uint64_t inputs = 0;
  for (const NamedTensor &arg : signature.args)
    if (train || !llvm::StringRef(arg.name).starts_with(kGradPrefix))
      inputs += static_cast<uint64_t>(arg.bytes());
  uint64_t need = inputs + static_cast<uint64_t>(peak.value_or(0));
  auto mib = [](uint64_t bytes) {
    return llvm::formatv("{0:f1} MiB", bytes / (1024.0 * 1024.0)).str();
  };
  auto refuse = [&](uint64_t bytes, const char *where, uint64_t limit,
                    const std::string &source) {
    fail("the step needs " + std::to_string(bytes) + " bytes" + where + " (" +
         mib(bytes) + ": inputs " + mib(inputs) + ", planned peak " +
         (peak ? mib(*peak) : std::string("unknown")) + "), more than the " +
         std::to_string(limit) + " bytes of " + source);
  };
  bool device = runner.isDevice();
  if (maxMemory.getNumOccurrences()) {
    if (need > maxMemory)
      refuse(need, device ? " of device memory" : "", maxMemory,
             "--max-memory");
    return;
  }
  // The host holds the inputs, and on the CPU the step's buffers.
  uint64_t hostNeed = device ? inputs : need;
  if (std::optional<uint64_t> available = availableMemory();
      available && hostNeed > *available)
    refuse(hostNeed, device ? " of host memory" : "", *available,
           "the memory available (MemAvailable; --max-memory sets the "
           "limit)");
  if (std::optional<std::pair<size_t, size_t>> deviceMemory =
          runner.deviceMemory()) {
    auto [free, total] = *deviceMemory;
    if (need > free)
      refuse(need, " of device memory", free,
             "the CUDA device's free memory (cuMemGetInfo, of " +
                 std::to_string(total) + "; --max-memory sets the limit)");
  }
}

/// Whether `arg` is a layer's initial state (`h0`, `c0`, ...: a per-layer
/// tensor named `<state>0`), which --inputs may leave out: zeros, as in
/// PyTorch.
static bool isInitialState(const NamedTensor &arg) {
  return arg.layer >= 0 &&
         llvm::StringRef(arg.name).ends_with(mlir::rnn::kInitialStateSuffix);
}

/// Checks that --inputs gives every argument the step reads (but the
/// initial states, zeros by default) and nothing else: a misspelled or
/// missing array must not be generated in its place, and an array the model
/// does not know means the file is for another model. The cotangents
/// (grad_ + a result's name) belong to the model's training step, so a file
/// may carry them in infer mode.
static void checkInputArrays(const npz::ArrayMap &inputs,
                             const Signature &signature, bool train) {
  llvm::StringSet<> known;
  for (const NamedTensor &arg : signature.args) {
    known.insert(arg.array);
    if (!train && llvm::StringRef(arg.name).starts_with(kGradPrefix))
      continue;
    if (!inputs.count(arg.array) && !isInitialState(arg))
      fail(inputsFile + ": missing array '" + arg.array + "'");
  }
  for (const NamedTensor &result : signature.results)
    known.insert((kGradPrefix + result.array).str());
  for (const auto &[name, array] : inputs)
    if (!known.contains(name)) {
      std::string names;
      for (const NamedTensor &arg : signature.args)
        if (train || !llvm::StringRef(arg.name).starts_with(kGradPrefix))
          if (names.find("'" + arg.array + "'") == std::string::npos)
            names += (names.empty() ? "'" : ", '") + arg.array + "'";
      // A preset's layers take reset states with --reset-to.
      bool resetState = !preset.empty() &&
                        !presetFlags.resetTo.getNumOccurrences() &&
                        llvm::StringRef(name).ends_with("_reset");
      fail(inputsFile + ": array '" + name +
           "' is not an input of the model (inputs: " + names + ")" +
           (resetState ? "; a reset state needs --reset-to=step or column"
                       : ""));
    }
}

/// Deterministic per-array generator: the stream depends on the seed, the
/// name and the layer, not on the order of the arguments.
static std::mt19937_64 generatorFor(const NamedTensor &arg) {
  uint64_t h = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (char c : arg.name)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  h ^= static_cast<uint64_t>(arg.layer + 1) * 0xBF58476D1CE4E5B9ull;
  return std::mt19937_64(h);
}

/// Generated values: weights and biases ~ U(-1/sqrt(H), 1/sqrt(H)) as
/// PyTorch initializes them, states ~ U(-0.5, 0.5), everything else
/// ~ U(-1, 1); the mask is Bernoulli(--reset-prob); a dropout's `rng` is
/// [--seed, 0].
static void generate(const NamedTensor &arg, int64_t hidden,
                     std::vector<char> &bytes) {
  std::mt19937_64 gen = generatorFor(arg);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int64_t n = arg.numElements();
  if (arg.dtype == npz::DType::I64) {
    if (arg.name != "rng" || n != 2)
      fail("cannot generate the i64 argument '" + arg.name +
           "' (only a dropout's rng, [seed, offset]); give it in --inputs");
    int64_t words[2] = {static_cast<int64_t>(seed.getValue()), 0};
    bytes.assign(reinterpret_cast<char *>(words),
                 reinterpret_cast<char *>(words) + sizeof(words));
    return;
  }
  if (arg.dtype == npz::DType::Bool) {
    bytes.resize(n);
    for (int64_t i = 0; i < n; ++i)
      bytes[i] = unit(gen) < resetProb ? 1 : 0;
    return;
  }
  double bound = 1.0;
  if (mlir::rnn::bufferRole(arg.name) == mlir::rnn::BufferRole::Parameter)
    bound = 1.0 / std::sqrt(static_cast<double>(hidden));
  else if (isInitialState(arg))
    bound = 0.5;
  bytes.resize(n * arg.elementBytes());
  for (int64_t i = 0; i < n; ++i) {
    double value = (2.0 * unit(gen) - 1.0) * bound;
    if (arg.dtype == npz::DType::F64)
      reinterpret_cast<double *>(bytes.data())[i] = value;
    else
      reinterpret_cast<float *>(bytes.data())[i] = static_cast<float>(value);
  }
}

/// The shape of the npz array that holds `t` (with the stacked layers).
static std::vector<int64_t> arrayShape(const NamedTensor &t) {
  std::vector<int64_t> shape = t.shape;
  if (t.stacked)
    shape.insert(shape.begin(), t.stacked);
  return shape;
}

/// Copies the argument's values out of the npz file (the layer's slice for
/// stacked per-layer states), checking dtype and shape.
static void fromFile(const NamedTensor &arg, const npz::Array &array,
                     std::vector<char> &bytes) {
  std::vector<int64_t> want = arrayShape(arg);
  if (array.shape != want)
    fail(inputsFile + ": array '" + arg.array + "' has shape " +
         array.shapeString() + ", expected " + shapeString(want));
  int64_t n = arg.numElements();
  int64_t offset = arg.stacked ? arg.layer * n : 0;
  if (arg.dtype == npz::DType::Bool) {
    if (array.dtype != npz::DType::Bool && array.dtype != npz::DType::U8)
      fail(inputsFile + ": array '" + arg.array + "' has dtype " +
           npz::dtypeName(array.dtype).str() + ", expected bool or uint8");
    bytes.resize(n);
    for (int64_t i = 0; i < n; ++i)
      bytes[i] = array.data[offset + i] != 0;
    return;
  }
  npz::DType element = arg.dtype;
  bool sameBits = element == npz::DType::I64 && array.dtype == npz::DType::U64;
  if (array.dtype != element && !sameBits)
    fail(
        inputsFile + ": array '" + arg.array + "' has dtype " +
        npz::dtypeName(array.dtype).str() + ", expected " +
        npz::dtypeName(element).str() +
        (arg.isFloat()
             ? std::string(" (the model's element type") +
                   (preset.empty() ? "" : "; --dtype=f32|f64 sets a preset's") +
                   ")"
             : std::string(" or uint64")));
  int64_t size = arg.elementBytes();
  bytes.assign(array.data.begin() + offset * size,
               array.data.begin() + (offset + n) * size);
}

//===----------------------------------------------------------------------===//
// Calling the compiled function
//===----------------------------------------------------------------------===//

/// The words of a memref descriptor: allocated and aligned pointers, offset,
/// sizes, strides (row-major, identity layout).
static std::vector<int64_t> descriptor(void *data,
                                       llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> words = {reinterpret_cast<int64_t>(data),
                                reinterpret_cast<int64_t>(data), 0};
  words.insert(words.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  words.insert(words.end(), strides.begin(), strides.end());
  return words;
}

/// Compiles `entryName` (only: the other functions of the module are
/// dropped, so that the PTX holds the kernels this mode needs) for the GPU
/// and prints the PTX; exits on failure.
static void printPTX(ModuleOp module, llvm::StringRef entryName,
                     const mlir::rnn::PipelineOptions &options) {
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (func.getName() != entryName && !func.isDeclaration())
      func.erase();
  MLIRContext *context = module.getContext();
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, context, os);
  PassManager pm(context);
  mlir::rnn::buildToBuffersPipeline(pm, options);
  mlir::rnn::buildTargetStage(pm, options);
  std::string ptx;
  if (failed(pm.run(module)) || failed(mlir::rnn::collectPTX(module, ptx))) {
    llvm::StringRef first = llvm::StringRef(diagnostics).split('\n').first;
    fail("GPU compilation failed" + (first.empty() ? "" : ": " + first.str()),
         1);
  }
  llvm::outs() << ptx;
}

/// Exits after a failed compile stage whose first error is `error`. A pass
/// that rejects the program names the rule in its error: that line is the
/// message, exit status 2. A failure without an error is the compiler's own
/// (exit 1).
[[noreturn]] static void failCompilation(const std::string &error) {
  if (error.empty())
    fail("compilation failed", 1);
  fail("compilation failed: " + error);
}

/// Runs `pm` on `module`; exits if it fails (failCompilation).
static void runPipeline(PassManager &pm, ModuleOp module) {
  if (std::string error; failed(::rnn::run::runPipeline(pm, module, error)))
    failCompilation(error);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {
/// One run, stage by stage: main calls the stages in order.
class RunSession {
public:
  explicit RunSession(const DialectRegistry &registry);
  /// --inputs, if given.
  void readInputs();
  /// The model function: from the model file, or built from the preset.
  void loadModel();
  /// --emit=mlir: prints the model.
  int printModel();
  /// The training function @f_grad, in train mode.
  void buildTrainingFunction();
  /// --emit=ptx: prints the kernels of the entry point.
  int printKernels();
  /// The pipeline up to the memory plan; the plan's figures, the reports,
  /// and the memory the step needs checked against what there is.
  void planMemory();
  /// The target's code, JIT-compiled, and the arguments of the step.
  void compile();
  /// The steps: warmup, then the measured ones.
  void runSteps();
  /// --outputs, per-layer states stacked as [L, ...] where they stack.
  void writeOutputs();
  /// The figures, as JSON or text.
  int printFigures();

private:
  MLIRContext context;
  mlir::rnn::PipelineOptions pipelineOptions;
  std::unique_ptr<RunTarget> runner;
  std::optional<npz::ArrayMap> inputs;
  OwningOpRef<ModuleOp> module;
  ModelShape shape;
  func::FuncOp model;
  std::string cellName;
  int64_t flops = 0;
  bool train = mode == "train";
  std::string entryName;

  func::FuncOp entry;
  Signature signature;
  std::optional<int64_t> predictedPeak;
  // The figures of each phase: rnn-plan-memory's for a training function,
  // the one phase of an inference function. In an arena the step holds one
  // allocation, and the runtime cannot tell the phases apart.
  std::optional<mlir::rnn::PhaseBytes> plannedPhases;
  std::optional<int64_t> arenaBytes;
  std::string rematPlan;
  /// --wavefront, and the budget fits only with the layers in sequence.
  bool layersInSequence = false;
  int64_t gemmBlock = 0;

  std::unique_ptr<JitFunction> function;
  std::vector<std::vector<char>> argData;
  // Packed arguments: one pointer per descriptor word, then the results.
  std::vector<std::vector<int64_t>> argWords;
  std::vector<void *> packed;
  // The arena, the last argument under --arena: a 1-D byte buffer.
  void *arenaBuffer = nullptr;
  std::vector<int64_t> arenaWords;
  std::vector<int64_t> resultStorage;

  // What one step's host code issues, counted on the first step (eager on
  // every target; a replayed graph repeats the work of the captured one).
  struct StepCounts {
    size_t launches = 0, gemms = 0, syncs = 0, allocations = 0;
  };
  StepCounts countsNow() {
    return StepCounts{::rnn::runtime::kernelLaunches(),
                      ::rnn::runtime::gemmCalls(),
                      ::rnn::runtime::synchronizations(),
                      runner->ledger().totalAllocations()};
  }
  std::optional<StepCounts> perStep;
  bool graphMode = useCudaGraph();
  std::vector<double> stepMs, fwdMs, bwdMs;
  ::rnn::runtime::MemoryFigures last;
  std::vector<std::vector<char>> resultValues;
};
} // namespace

RunSession::RunSession(const DialectRegistry &registry) : context(registry) {
  context.loadAllAvailableDialects();
  selectPipelineOptions(pipelineOptions);
  checkOptions(context, pipelineOptions);
  runner = chooseRunTarget();
  checkOutputsFile();
}

void RunSession::readInputs() {
  if (inputsFile.empty())
    return;
  auto read = npz::readNpz(inputsFile);
  if (!read)
    fail(llvm::toString(read.takeError()));
  inputs = std::move(*read);
}

void RunSession::loadModel() {
  if (modelFile.empty())
    shape = presetShape(inputs ? &*inputs : nullptr);
  LoadedModel loaded;
  if (std::string error; failed(::rnn::run::loadModel(
          context, modelFile, entryFunction, shape, loaded, error)))
    fail(error);
  module = std::move(loaded.module);
  model = loaded.func;
  cellName = loaded.cellName;
  // Inference reads no rng: its dropouts drop nothing.
  if (mode == "infer")
    removeDropouts(model);
  // An argument the model does not read would be demanded from --inputs or
  // generated for nothing.
  for (BlockArgument arg : model.getArguments())
    if (arg.use_empty())
      fail("argument #" + std::to_string(arg.getArgNumber()) + " of @" +
           model.getName().str() + " is not used by the model");
  flops = gemmFlops(model, mode == "train");
  if (std::string error; failed(::rnn::run::checkTarget(shape, target, error)))
    fail(error);
  entryName = model.getName().str();
}

int RunSession::printModel() {
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}

void RunSession::buildTrainingFunction() {
  if (!train)
    return;
  // The first error (an infeasible budget, say) is the message.
  std::string error;
  if (failed(buildTrainingFunctions(*module, pipelineOptions, error)))
    fail("cannot build the training function of @" + entryName +
         (error.empty() ? "" : ": " + error));
  entryName += "_grad";
}

int RunSession::printKernels() {
  printPTX(*module, entryName, pipelineOptions);
  return 0;
}

void RunSession::planMemory() {
  entry = module->lookupSymbol<func::FuncOp>(entryName);
  std::string error;
  if (failed(readSignature(entry, signature, error)))
    fail(error);

  if (inputs)
    checkInputArrays(*inputs, signature, train);

  // Compile the rest of the pipeline, reading the plan before LLVM.
  error.clear();
  switch (compileToBuffers(*module, pipelineOptions, memoryReportFile,
                           memorySVGFile, error)) {
  case CompileStatus::Compiled:
    break;
  case CompileStatus::Failed:
    failCompilation(error);
  case CompileStatus::ReportFailed:
    fail(error);
  }
  EntryPlan plan = readEntryPlan(entry, train);
  predictedPeak = plan.peakBytes;
  plannedPhases = plan.phases;
  if (pipelineOptions.arena) {
    arenaBytes = plan.arenaBytes;
    if (!arenaBytes || !plannedPhases)
      fail("--arena: @" + entryName + " has no static memory plan", 1);
    // What the step holds is the arena: the live bytes' peak, plus
    // alignment and the space first fit leaves between buffers.
    predictedPeak = *arenaBytes;
  }
  checkMemoryLimit(*runner, signature, train, predictedPeak);

  // The plan the remat policy chose (the policy itself unless a budget).
  rematPlan = plan.remat.value_or(train ? remat.getValue() : "none");
  layersInSequence = schedule.wavefront && plan.sequentialLayers;
  gemmBlock = mlir::rnn::gemmBlockSteps(shape.seqLen, shape.batch,
                                        pipelineOptions.getGemmRows());
}

void RunSession::compile() {
  // Argument values: all from --inputs, or all generated.
  argData.resize(signature.args.size());
  for (auto [i, arg] : llvm::enumerate(signature.args)) {
    if (!train && llvm::StringRef(arg.name).starts_with(kGradPrefix))
      continue;
    if (!inputs)
      generate(arg, shape.hiddenSize, argData[i]);
    else if (auto it = inputs->find(arg.array); it != inputs->end())
      fromFile(arg, it->second, argData[i]);
    else
      argData[i].assign(arg.bytes(), 0);
  }

  PassManager toLLVM(&context);
  mlir::rnn::buildTargetStage(toLLVM, pipelineOptions);
  runPipeline(toLLVM, *module);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto compiled =
      JitFunction::compile(*module, entryName, runner->symbols(), jitListeners);
  if (!compiled)
    fail("JIT compilation failed: " + llvm::toString(compiled.takeError()), 1);
  function = std::move(*compiled);

  for (auto [i, arg] : llvm::enumerate(signature.args))
    argWords.push_back(descriptor(runner->input(argData[i]), arg.shape));
  for (auto &words : argWords)
    for (int64_t &word : words)
      packed.push_back(&word);
  size_t resultWords = 0;
  for (const NamedTensor &r : signature.results)
    resultWords += 3 + 2 * r.shape.size();
  if (arenaBytes) {
    arenaBuffer = runner->allocateArena(*arenaBytes);
    arenaWords = descriptor(arenaBuffer, {*arenaBytes});
    for (int64_t &word : arenaWords)
      packed.push_back(&word);
  }
  resultStorage.assign(resultWords, 0);
  packed.push_back(resultStorage.data());
}

void RunSession::runSteps() {
  ::rnn::runtime::setBlasThreads(threads);
  // Keep freed memory in the process: without this, glibc returns large
  // blocks to the OS and every step pays the page faults of its buffers
  // again, which measures the kernel rather than the program.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  resultValues.resize(signature.results.size());

  // Graph mode: one eager step (step -1), then the host code runs once
  // more under capture, and every further step replays what it issued.
  for (long long iter = graphMode ? -1 : 0; iter < warmup + iters; ++iter) {
    if (graphMode && iter == 0)
      runner->capture([&] { function->invoke(packed); });
    ::rnn::runtime::MemoryFigures figures;
    ::rnn::runtime::StepStats stats = runner->runStep(
        [&] {
          StepCounts before = countsNow();
          function->invoke(packed);
          if (perStep)
            return;
          StepCounts after = countsNow();
          perStep =
              StepCounts{after.launches - before.launches,
                         after.gemms - before.gemms, after.syncs - before.syncs,
                         after.allocations - before.allocations};
        },
        figures);
    // Read and free the results the program allocated.
    size_t word = 0;
    std::vector<void *> freed;
    for (auto [i, r] : llvm::enumerate(signature.results)) {
      auto *allocated = reinterpret_cast<void *>(resultStorage[word]);
      auto *aligned = reinterpret_cast<char *>(resultStorage[word + 1]);
      int64_t offset = resultStorage[word + 2];
      if (iter + 1 == warmup + iters) {
        resultValues[i].resize(r.bytes());
        runner->read(resultValues[i].data(),
                     aligned + offset * r.elementBytes(), r.bytes());
      }
      // Results in the arena belong to it.
      if (!arenaBytes && llvm::find(freed, allocated) == freed.end()) {
        runner->freeResult(allocated);
        freed.push_back(allocated);
      }
      word += 3 + 2 * r.shape.size();
    }
    if (iter < warmup)
      continue;
    stepMs.push_back(stats.totalMs);
    fwdMs.push_back(stats.fwdMs);
    bwdMs.push_back(stats.bwdMs);
    last = figures;
  }
  runner->releaseCapture();
  if (arenaBuffer)
    runner->freeArena(arenaBuffer);
  if (runner->ledger().liveAllocations() != 0 ||
      runner->ledger().badFrees() != 0)
    fail("runtime accounting: " +
             std::to_string(runner->ledger().liveAllocations()) +
             " allocations leaked, " +
             std::to_string(runner->ledger().badFrees()) + " bad frees",
         1);
}

void RunSession::writeOutputs() {
  if (outputsFile.empty())
    return;
  std::map<std::string, npz::Array> byName;
  std::vector<std::string> order;
  for (auto [i, r] : llvm::enumerate(signature.results)) {
    auto [it, inserted] = byName.try_emplace(
        r.array, npz::Array::zeros(r.array, r.dtype, arrayShape(r)));
    if (inserted)
      order.push_back(r.array);
    int64_t offset = r.stacked ? r.layer * r.bytes() : 0;
    std::copy(resultValues[i].begin(), resultValues[i].end(),
              it->second.data.begin() + offset);
  }
  std::vector<const npz::Array *> arrays;
  for (const std::string &name : order)
    arrays.push_back(&byName.at(name));
  if (llvm::Error err = npz::writeNpz(outputsFile, arrays))
    fail(llvm::toString(std::move(err)));
}

int RunSession::printFigures() {
  // Bytes held in each phase and what the forward kept for the backward:
  // as measured when every buffer is allocated on its own (where they equal
  // the plan's, test/Integration/memory-phases.test), the plan's in the
  // arena, which the step holds as one allocation.
  int64_t resultBytes = 0;
  for (const NamedTensor &r : signature.results)
    if (!llvm::StringRef(r.name).starts_with(kGradPrefix))
      resultBytes += r.bytes();
  int64_t held = train ? last.bytesAtBackwardStart : last.bytesAtEnd;
  int64_t savedBytes = std::max<int64_t>(0, held - resultBytes);
  int64_t fwdPeak = last.fwdPeakBytes, bwdPeak = last.bwdPeakBytes;
  if (arenaBytes) {
    fwdPeak = plannedPhases->fwdPeak;
    bwdPeak = plannedPhases->bwdPeak;
    savedBytes = plannedPhases->saved;
  }
  double stepMedian = median(stepMs);
  if (json) {
    llvm::json::Object out{
        {"target", target},
        {"mode", mode},
        {"remat", remat},
        {"remat_plan", rematPlan},
        {"wavefront", schedule.wavefront && !layersInSequence},
        {"cell", cellName},
        {"shape", llvm::json::Object{{"T", shape.seqLen},
                                     {"B", shape.batch},
                                     {"I", shape.inputSize},
                                     {"H", shape.hiddenSize},
                                     {"L", shape.layers}}},
        {"step_ms",
         llvm::json::Object{
             {"median", stepMedian},
             {"min", *std::min_element(stepMs.begin(), stepMs.end())},
             {"max", *std::max_element(stepMs.begin(), stepMs.end())}}},
        {"fwd_ms", median(fwdMs)},
        {"bwd_ms", median(bwdMs)},
        {"peak_bytes",
         llvm::json::Object{
             {"measured", static_cast<int64_t>(last.peakBytes)},
             {"predicted", predictedPeak ? llvm::json::Value(*predictedPeak)
                                         : llvm::json::Value(nullptr)},
             {"fwd", fwdPeak},
             {"bwd", bwdPeak}}},
        {"saved_bytes", savedBytes},
        {"arena_bytes", arenaBytes ? llvm::json::Value(*arenaBytes)
                                   : llvm::json::Value(nullptr)},
        {"flops", flops},
        {"gemm", runner->gemm(shape.f64)},
        {"gemm_block", gemmBlock},
        {"gemm_calls", static_cast<int64_t>(perStep->gemms)},
        {"launches", static_cast<int64_t>(perStep->launches)},
        {"syncs", static_cast<int64_t>(perStep->syncs)},
        {"allocations", static_cast<int64_t>(perStep->allocations)},
        {"cuda_graph", graphMode},
        {"iters", static_cast<int64_t>(iters)},
        {"warmup", static_cast<int64_t>(warmup)},
        {"seed", static_cast<int64_t>(seed)},
    };
    llvm::outs() << llvm::formatv("{0}", llvm::json::Value(std::move(out)))
                 << "\n";
    return 0;
  }
  auto mib = [](int64_t bytes) {
    return llvm::formatv("{0:f2} MiB", bytes / (1024.0 * 1024.0)).str();
  };
  llvm::outs() << llvm::formatv("{0} {1} on {2}: T={3} B={4} I={5} H={6} L={7}",
                                cellName, mode, target, shape.seqLen,
                                shape.batch, shape.inputSize, shape.hiddenSize,
                                shape.layers);
  if (train)
    llvm::outs() << ", remat " << rematPlan;
  if (layersInSequence)
    llvm::outs() << ", layers in sequence (the wavefront does not fit the "
                    "budget)";
  llvm::outs() << "\n";
  llvm::outs() << llvm::formatv(
      "  step   {0:f3} ms median ({1:f3} .. {2:f3}) over {3} iters; "
      "fwd {4:f3} ms, bwd {5:f3} ms; {6:f2} GFLOP/s\n",
      stepMedian, *std::min_element(stepMs.begin(), stepMs.end()),
      *std::max_element(stepMs.begin(), stepMs.end()), iters.getValue(),
      median(fwdMs), median(bwdMs), flops / (stepMedian * 1e6));
  llvm::outs() << "  memory peak " << mib(last.peakBytes) << " measured, "
               << (predictedPeak ? mib(*predictedPeak) : std::string("none"))
               << " predicted (fwd " << mib(fwdPeak) << ", bwd " << mib(bwdPeak)
               << "), saved for backward " << mib(savedBytes) << "\n";
  llvm::outs() << "  gemm   " << runner->gemm(shape.f64) << "; "
               << perStep->gemms << " calls per step, blocks of " << gemmBlock
               << " steps\n";
  llvm::outs() << "  host   per step: " << perStep->launches
               << " kernel launches, " << perStep->syncs
               << " synchronizations, " << perStep->allocations
               << " allocations"
               << (graphMode ? "; replayed as a CUDA graph" : "") << "\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  if (std::string error = parseCommandLine(argc, argv, "rnnc runner\n");
      !error.empty())
    fail(error);
  DialectRegistry registry;
  mlir::rnn::registerAllDialects(registry);
  // The pipelines by name: rnn-rematerialize runs its predict-pipeline.
  mlir::rnn::registerPipelines();

  RunSession run(registry);
  run.readInputs();
  run.loadModel();
  if (emit == "mlir")
    return run.printModel();
  run.buildTrainingFunction();
  if (emit == "ptx")
    return run.printKernels();
  run.planMemory();
  run.compile();
  run.runSteps();
  run.writeOutputs();
  return run.printFigures();
}
