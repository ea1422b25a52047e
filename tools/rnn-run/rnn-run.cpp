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
// This file holds the flags and main; RunSession.cpp the run, and
// lib/Driver what rnn-compile shares.
//
//===----------------------------------------------------------------------===//

#include "RunSession.h"

#include "rnn/InitAll.h"
#include "rnn/Pipelines/Pipelines.h"
#include "rnn/Support/StagedFiles.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <thread>

using namespace mlir;
using namespace ::rnn::run;
namespace cl = llvm::cl;

static cl::OptionCategory category("rnn-run options");

RunFlags::RunFlags(cl::OptionCategory &category)
    : driver(category),
      mode("mode", cl::init(driver::Mode::Train),
           cl::desc("What a step computes (default train)"),
           cl::values(clEnumValN(driver::Mode::Train, "train",
                                 "forward and backward"),
                      clEnumValN(driver::Mode::Infer, "infer", "forward")),
           cl::cat(category)),
      emit("emit", cl::init(Emit::Run),
           cl::desc("Print instead of running (default: run)"),
           cl::values(clEnumValN(Emit::MLIR, "mlir", "the model"),
                      clEnumValN(Emit::PTX, "ptx",
                                 "the kernels (--target=cuda)")),
           cl::cat(category)),
      resetProb("reset-prob", cl::init(0.0),
                cl::desc("Probability of is_init[t, b] for generated masks "
                         "(default 0)"),
                cl::cat(category)),
      tf32("tf32", cl::init(false),
           cl::desc("Let cuBLAS use TF32 tensor cores (--target=cuda)"),
           cl::cat(category)),
      arena("arena", cl::init(false),
            cl::desc("Place the program's buffers in one planned arena "
                     "allocated before the steps: a step allocates nothing "
                     "(the default on --target=cuda without --dynamic)"),
            cl::cat(category)),
      noArena("no-arena", cl::init(false),
              cl::desc("Allocate and free the program's buffers in each "
                       "step, also on --target=cuda (implies "
                       "--no-cuda-graph)"),
              cl::cat(category)),
      noCudaGraph("no-cuda-graph", cl::init(false),
                  cl::desc("Run every step's host code instead of replaying "
                           "a CUDA graph of one step (--target=cuda captures "
                           "one after an eager warm-up step by default)"),
                  cl::cat(category)),
      json("json", cl::init(false), cl::desc("Print one JSON object"),
           cl::cat(category)),
      jitListeners("jit-listeners", cl::init(false),
                   cl::desc("Tell perf (a jitdump per run) and GDB about the "
                            "JIT-compiled code"),
                   cl::cat(category)),
      cublas("cublas", cl::init(""),
             cl::desc("cuBLAS library to load (--target=cuda; default: "
                      "$RNNRT_LIBCUBLAS, the loader's libcublas.so.13, the "
                      "toolkit's, then an installed PyTorch's NVIDIA wheels)"),
             cl::cat(category)),
      inputs("inputs", cl::init(""),
             cl::desc("Input arrays (.npz; default: generated from --seed)"),
             cl::cat(category)),
      outputs("outputs", cl::init(""),
              cl::desc("Output arrays (.npz; default: none written)"),
              cl::cat(category)),
      memoryReport(
          "memory-report", cl::init(""),
          cl::desc("Write the memory plan of the compiled functions to FILE: "
                   "each buffer's role, layer, bytes, offset and live range "
                   "(named by phase and kernel), the backward boundary, the "
                   "peak and what is live at it (JSON if FILE ends in .json, "
                   "else text; - for stdout) (default: none)"),
          cl::value_desc("FILE"), cl::cat(category)),
      memorySVG("memory-svg", cl::init(""),
                cl::desc("Draw the memory plans to FILE as SVG: buffers as "
                         "bars over the function's ops at their arena "
                         "offsets, the peak marked (default: none)"),
                cl::value_desc("FILE"), cl::cat(category)),
      seed("seed", cl::init(0),
           cl::desc("Seed of generated arrays (default 0)"), cl::cat(category)),
      maxMemory("max-memory", cl::init(0),
                cl::desc("Bytes the step may use: its inputs plus the "
                         "planned peak (default: the memory available, "
                         "MemAvailable; on --target=cuda, the device's free "
                         "memory)"),
                cl::cat(category)),
      iters("iters", cl::init(10), cl::desc("Measured steps (default 10)"),
            cl::cat(category)),
      warmup("warmup", cl::init(2),
             cl::desc("Unmeasured steps before (default 2)"),
             cl::cat(category)),
      threads("blas-threads", cl::init(1),
              cl::desc("BLAS threads (default 1, at most the machine's "
                       "hardware threads)"),
              cl::cat(category)) {}

static RunFlags flags(category);

[[noreturn]] void ::rnn::run::fail(const std::string &message, int code) {
  llvm::errs() << "rnn-run: " << message << "\n";
  std::exit(code);
}

/// Checks before anything runs that each file the run writes (--outputs,
/// --memory-report, --memory-svg; `-` is stdout for the reports) can be
/// written and is neither a file the run reads (--inputs, MODEL.mlir) nor
/// another's, and that stdout gets one of them at most: each is written
/// when the run has succeeded, under a temporary name in its directory,
/// and renamed into place, which would overwrite the inputs, another output
/// or a read-only file.
static void checkOutputFiles() {
  namespace fs = llvm::sys::fs;
  if (flags.outputs == "-")
    fail("--outputs=-: the arrays are an .npz archive, written to a file");
  std::vector<const cl::opt<std::string> *> written;
  std::vector<const cl::Option *> toStdout;
  if (flags.json)
    toStdout.push_back(&flags.json);
  for (const cl::opt<std::string> *flag :
       {&flags.outputs, &flags.memoryReport, &flags.memorySVG})
    if (flag->getValue() == "-")
      toStdout.push_back(flag);
    else if (!flag->getValue().empty())
      written.push_back(flag);
  auto given = [](const cl::Option *flag) {
    return "--" + flag->ArgStr.str() + (flag == &flags.json ? "" : "=-");
  };
  if (toStdout.size() > 1)
    fail(given(toStdout[0]) + " and " + given(toStdout[1]) +
         " both write stdout");
  std::pair<const char *, const std::string *> read[] = {
      {"the --inputs file", &flags.inputs},
      {"the model file", &flags.driver.modelFile.getValue()}};
  for (auto [i, flag] : llvm::enumerate(written)) {
    const std::string &path = flag->getValue();
    std::string name = "--" + flag->ArgStr.str();
    for (auto [what, file] : read)
      if (!file->empty() && ::rnn::namesSameFile(path, *file))
        fail(name + " names " + what + " '" + path + "', which the run reads");
    for (const cl::opt<std::string> *other : llvm::drop_begin(written, i + 1))
      if (::rnn::namesSameFile(path, other->getValue()))
        fail(name + " and --" + other->ArgStr.str() + " name the same file '" +
             path + "'");
    if (fs::exists(path)) {
      if (!fs::is_regular_file(path))
        fail(name + " '" + path + "' is not a regular file");
      if (fs::access(path, fs::AccessMode::Write))
        fail(name + " '" + path + "' is not writable");
    }
    llvm::SmallString<256> parent(path);
    llvm::sys::path::remove_filename(parent);
    std::string directory = parent.empty() ? "." : parent.str().str();
    if (!fs::is_directory(directory))
      fail(name + " '" + path + "': no directory '" + directory + "'");
    if (fs::access(directory, fs::AccessMode::Write))
      fail(name + " '" + path + "': directory '" + directory +
           "' is not writable");
  }
}

/// Refuses rnn-run's own flags where they are out of range or inconsistent
/// (DriverOptions::check, in the session, checks the shared ones).
static void checkFlags() {
  // The run keeps each measured step's times.
  constexpr long long kMaxSteps = 10'000'000;
  if (flags.iters <= 0 || flags.iters > kMaxSteps)
    fail("--iters must be in [1, " + std::to_string(kMaxSteps) + "], got " +
         std::to_string(flags.iters));
  if (flags.warmup < 0 || flags.warmup > kMaxSteps)
    fail("--warmup must be in [0, " + std::to_string(kMaxSteps) + "], got " +
         std::to_string(flags.warmup));
  for (const cl::opt<std::string> *file :
       {&flags.inputs, &flags.outputs, &flags.memoryReport, &flags.memorySVG,
        &flags.cublas})
    if (file->getNumOccurrences() && file->empty())
      fail("--" + file->ArgStr.str() + "= names no file");
  // The arrays of an --inputs file are the run's, is_init and rng too.
  if (!flags.inputs.empty())
    for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
             &flags.seed, &flags.resetProb})
      if (flag->getNumOccurrences())
        fail("--" + flag->ArgStr.str() +
             " generates arrays, and the arrays come from --inputs");
  if (flags.threads <= 0)
    fail("--blas-threads must be positive, got " +
         std::to_string(flags.threads));
  // More threads than the machine runs only contend (and OpenBLAS with
  // dozens of threads under a memory limit may never finish starting them).
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  if (flags.threads > static_cast<long long>(hardware))
    fail("--blas-threads=" + std::to_string(flags.threads) +
         " exceeds this machine's " + std::to_string(hardware) +
         " hardware threads");
  if (!(flags.resetProb >= 0.0 && flags.resetProb <= 1.0))
    fail("--reset-prob must be in [0, 1], got " +
         std::to_string(flags.resetProb));
  bool cuda = flags.driver.isCUDA();
  if (flags.emit == Emit::PTX && !cuda)
    fail("--emit=ptx needs --target=cuda");
  // --emit prints the model or its kernels and runs nothing.
  if (flags.emit != Emit::Run) {
    for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
             &flags.json, &flags.outputs, &flags.memoryReport,
             &flags.memorySVG})
      if (flag->getNumOccurrences())
        fail("--emit prints and runs nothing: --" + flag->ArgStr.str() +
             " has nothing to write");
    for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
             &flags.iters, &flags.warmup, &flags.seed, &flags.resetProb,
             &flags.maxMemory, &flags.threads, &flags.jitListeners, &flags.tf32,
             &flags.noCudaGraph, &flags.cublas})
      if (flag->getNumOccurrences())
        fail("--emit prints and runs nothing: --" + flag->ArgStr.str() +
             " applies to a run");
  }
  for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
           &flags.tf32, &flags.noCudaGraph, &flags.cublas})
    if (flag->getNumOccurrences() && !cuda)
      fail("--" + flag->ArgStr.str() + " needs --target=cuda");
  if (flags.arena && flags.noArena)
    fail("give either --arena or --no-arena, not both");
  if (flags.arena && flags.driver.dynamic)
    fail("--arena needs static T and B: a dynamic shape's buffers are "
         "allocated each on its own");
  if (!flags.train() && flags.driver.remat.getNumOccurrences())
    fail("--remat applies to --mode=train: inference saves nothing for a "
         "backward pass");
  if (!flags.train() && flags.driver.dropout > 0.0)
    fail("--dropout applies to --mode=train: inference drops nothing (as "
         "torch.nn.LSTM in eval mode)");
  checkOutputFiles();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  if (std::string error =
          ::rnn::driver::parseCommandLine(argc, argv, "rnnc runner\n");
      !error.empty())
    fail(error);
  checkFlags();
  DialectRegistry registry;
  mlir::rnn::registerAllDialects(registry);
  // The pipelines by name: rnn-rematerialize runs its predict-pipeline.
  mlir::rnn::registerPipelines();

  RunSession run(registry, flags);
  run.readInputs();
  run.loadModel();
  if (flags.emit == Emit::MLIR)
    return run.printModel();
  run.buildTrainingFunction();
  if (flags.emit == Emit::PTX)
    return run.printKernels();
  run.planMemory();
  run.compile();
  run.runSteps();
  run.writeOutputs();
  return run.printFigures();
}
