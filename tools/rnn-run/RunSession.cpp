//===- RunSession.cpp - one run of rnn-run, stage by stage ----------------===//
//
// Implements RunSession.h.
//
//===----------------------------------------------------------------------===//

#include "RunSession.h"

#include "rnn/Dialect/RNNAttrs.h"
#include "rnn/Dialect/RNNRoles.h"
#include "rnn/Driver/ArrayIO.h"
#include "rnn/Runtime/Runtime.h"
#include "rnn/Support/StagedFiles.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <malloc.h>
#include <unistd.h>

using namespace mlir;
using namespace ::rnn::run;
using namespace ::rnn::driver;
namespace npz = ::rnn::npz;
namespace cl = llvm::cl;
using mlir::rnn::kGradPrefix;

/// Exits with `error`'s message (exit 2: an error in what the user gave).
static void check(llvm::Error error) {
  if (error)
    fail(llvm::toString(std::move(error)));
}

/// The memory report and its SVG, written while compiling: in place only
/// when the run succeeds. rnn-run fails through std::exit, which destroys
/// this object.
static ::rnn::StagedFiles stagedFiles("rnn-run");

RunSession::RunSession(const DialectRegistry &registry, const RunFlags &flags)
    : flags(flags), context(registry) {
  context.loadAllAvailableDialects();
  flags.driver.apply(pipelineOptions);
  // On the GPU the buffers come from the arena unless asked otherwise or
  // the shape is dynamic: a step then allocates nothing, and a replayed
  // graph cannot repeat allocations anyway.
  pipelineOptions.arena = flags.useArena();
  std::string error;
  if (failed(flags.driver.check(context, error)) ||
      failed(mlir::rnn::verifyPipelineOptions(pipelineOptions, error)))
    fail(error);
  // Where the program runs, chosen once. Running on the GPU needs its
  // driver: this fails before anything is compiled. (It is loaded before
  // the model is read, as the first thing of the run: LeakSanitizer reads
  // garbage in a thread's dynamic TLS when the driver is loaded after the
  // model, and so an f64 model file on the cuda target without a driver
  // is refused for the driver.)
  runner = flags.driver.isCUDA() && flags.emit == Emit::Run
               ? createCudaTarget(flags.cublas, flags.tf32)
               : createHostTarget();
  report.target = mlir::rnn::stringifyTarget(flags.driver.target).str();
  if (flags.driver.isCUDA())
    report.gpuMath =
        mlir::rnn::stringifyGPUMath(flags.driver.gpuMath.getValue()).str();
  report.mode = stringifyMode(flags.mode).str();
  report.remat = flags.driver.remat;
  report.train = flags.train();
  report.cudaGraph = flags.cudaGraph();
  report.iters = flags.iters;
  report.warmup = flags.warmup;
  report.seed = flags.seed.getValue();
}

void RunSession::readInputs() {
  if (flags.inputs.empty())
    return;
  auto read = npz::readNpz(flags.inputs);
  if (!read)
    fail(llvm::toString(read.takeError()));
  inputs = std::move(*read);
}

ModelShape RunSession::presetShape() const {
  const DriverOptions &d = flags.driver;
  ModelShape shape = d.presetShape();
  if (!inputs)
    return shape;
  const std::string &file = flags.inputs;
  // The sizes come from x, weight_ih_l<k> and weight_hh_l0: without one of
  // them, every missing array of layer 0 (which every cell has) is named.
  std::vector<std::string> missing;
  bool sizesMissing = false;
  for (llvm::StringRef role :
       {mlir::rnn::kRoleX, mlir::rnn::kRoleWeightIh, mlir::rnn::kRoleWeightHh,
        mlir::rnn::kRoleBiasIh, mlir::rnn::kRoleBiasHh}) {
    std::string name = role == mlir::rnn::kRoleX
                           ? role.str()
                           : mlir::rnn::perLayerName(role, 0);
    if (inputs->count(name))
      continue;
    missing.push_back(name);
    sizesMissing |= role != mlir::rnn::kRoleBiasIh &&
                    role != mlir::rnn::kRoleBiasHh;
  }
  if (sizesMissing)
    fail(missingArraysMessage(file, missing));
  auto need = [&](const std::string &name, size_t rank,
                  const char *dims) -> const npz::Array & {
    auto it = inputs->find(name);
    if (it == inputs->end())
      fail(file + ": missing array '" + name + "'");
    if (it->second.shape.size() != rank)
      fail(file + ": array '" + name + "' must have rank " +
           std::to_string(rank) + " " + dims + ", got shape " +
           it->second.shapeString());
    return it->second;
  };
  const npz::Array &x = need(mlir::rnn::kRoleX.str(), 3, "[T, B, I]");
  const npz::Array &whh =
      need(mlir::rnn::perLayerName(mlir::rnn::kRoleWeightHh, 0), 2, "[G*H, H]");
  int64_t numLayers = 0;
  while (inputs->count(mlir::rnn::perLayerName(mlir::rnn::kRoleWeightIh, numLayers)))
    ++numLayers;
  if (numLayers == 0)
    need(mlir::rnn::perLayerName(mlir::rnn::kRoleWeightIh, 0), 2, "[G*H, I]");
  shape.seqLen = x.shape[0];
  shape.batch = x.shape[1];
  shape.inputSize = x.shape[2];
  shape.hiddenSize = whh.shape[1];
  shape.layers = numLayers;
  // Flags given explicitly must agree with the file.
  std::pair<const cl::opt<long long> *, int64_t> given[] = {
      {&d.seqLen, shape.seqLen},
      {&d.batch, shape.batch},
      {&d.inputSize, shape.inputSize},
      {&d.hiddenSize, shape.hiddenSize},
      {&d.layers, shape.layers}};
  for (auto [flag, value] : given)
    if (flag->getNumOccurrences() && flag->getValue() != value)
      fail("--" + flag->ArgStr.str() + "=" +
           std::to_string(flag->getValue()) + " disagrees with " + file +
           " (" + std::to_string(value) + ")");
  for (int64_t d : {shape.seqLen, shape.batch, shape.inputSize,
                    shape.hiddenSize})
    if (d <= 0)
      fail(file + ": empty dimension in array 'x' or 'weight_hh_l0'");
  return shape;
}

void RunSession::loadModel() {
  if (flags.driver.modelFile.empty())
    shape = presetShape();
  LoadedModel loaded;
  if (std::string error;
      failed(driver::loadModel(context, flags.driver.modelFile,
                               flags.driver.entry, shape, loaded, error)))
    fail(error);
  module = std::move(loaded.module);
  model = loaded.func;
  report.cell = loaded.cellName;
  // Inference reads no rng: its dropouts drop nothing.
  if (!flags.train())
    removeDropouts(model);
  // An argument the model does not read would be demanded from --inputs or
  // generated for nothing.
  for (BlockArgument arg : model.getArguments())
    if (arg.use_empty())
      fail("argument #" + std::to_string(arg.getArgNumber()) + " of @" +
           model.getName().str() + " is not used by the model");
  report.flops = gemmFlops(model, flags.train(), shape);
  if (std::string error;
      failed(checkTarget(shape, flags.driver.target, error)))
    fail(error);
  entryName = model.getName().str();
}

int RunSession::printModel() {
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}

void RunSession::buildTrainingFunction() {
  if (flags.train()) {
    // The first error (an infeasible budget, say) is the message.
    std::string error;
    if (failed(buildTrainingFunctions(*module, pipelineOptions, error)))
      fail("cannot build the training function of @" + entryName +
           (error.empty() ? "" : ": " + error));
    entryName += "_grad";
  }
  // Only the entry point (with its remat variants) is compiled: the model
  // function beside a training function would double the compile time, and
  // the PTX holds the kernels this mode needs.
  for (auto func : llvm::make_early_inc_range(module->getOps<func::FuncOp>())) {
    std::optional<mlir::rnn::RematVariant> variant =
        mlir::rnn::readRematVariant(func);
    bool variantOfEntry =
        variant && mlir::rnn::rematDispatchName(func.getName(),
                                                variant->index) == entryName;
    if (func.getName() != entryName && !variantOfEntry &&
        !func.isDeclaration() &&
        SymbolTable::symbolKnownUseEmpty(func, *module)) {
      if (func == model)
        model = nullptr;
      func.erase();
    }
  }
}

int RunSession::printKernels() {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
  PassManager pm(&context);
  mlir::rnn::buildToBuffersPipeline(pm, pipelineOptions);
  mlir::rnn::buildTargetStage(pm, pipelineOptions);
  std::string ptx;
  if (failed(pm.run(*module)) || failed(mlir::rnn::collectPTX(*module, ptx))) {
    llvm::StringRef first = llvm::StringRef(diagnostics).split('\n').first;
    fail("GPU compilation failed" + (first.empty() ? "" : ": " + first.str()),
         1);
  }
  llvm::outs() << ptx;
  return 0;
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

void RunSession::runPipeline(PassManager &pm) {
  if (std::string error; failed(driver::runPipeline(pm, *module, error)))
    failCompilation(error);
}

void RunSession::planMemory() {
  entry = module->lookupSymbol<func::FuncOp>(entryName);
  // Under a budget for every T and B the training function is its remat
  // variants until rnn-dispatch-remat gives it back: each has its
  // signature.
  if (!entry)
    entry = module->lookupSymbol<func::FuncOp>(
        mlir::rnn::rematVariantName(entryName, 0));
  std::string error;
  if (failed(readSignature(entry, signature, error,
                           shape.dynamic ? &shape : nullptr)))
    fail(error);
  // A preset takes reset states with --reset-to: an unknown *_reset array
  // is refused with that hint.
  bool resetHint = !flags.driver.preset.empty() &&
                   !flags.driver.resetTo.getNumOccurrences();
  if (inputs)
    check(checkInputArrays(*inputs, signature, flags.train(), flags.inputs,
                           resetHint));

  // Compile the rest of the pipeline, reading the plan before LLVM.
  error.clear();
  std::optional<mlir::rnn::ReportShape> reportShape;
  if (shape.dynamic)
    reportShape = mlir::rnn::ReportShape{shape.seqLen, shape.batch};
  auto reportFile = stagedFiles.stage(flags.memoryReport);
  check(reportFile.takeError());
  auto svgFile = stagedFiles.stage(flags.memorySVG);
  check(svgFile.takeError());
  switch (compileToBuffers(*module, pipelineOptions, *reportFile, *svgFile,
                           error, reportShape)) {
  case CompileStatus::Compiled:
    break;
  case CompileStatus::Failed:
    failCompilation(error);
  case CompileStatus::ReportFailed:
    fail(error);
  }
  entry = module->lookupSymbol<func::FuncOp>(entryName);
  EntryPlan plan = readEntryPlan(entry, flags.train(), &shape);
  if (!plan.rematError.empty())
    fail(plan.rematError);
  report.predictedPeak = plan.peakBytes;
  report.planExpressions = plan.expressions;
  plannedPhases = plan.phases;
  if (pipelineOptions.arena) {
    report.arenaBytes = plan.arenaBytes;
    if (!report.arenaBytes || !plannedPhases)
      fail("--arena: @" + entryName + " has no static memory plan", 1);
    // What the step holds is the arena: the live bytes' peak, plus
    // alignment and the space first fit leaves between buffers.
    report.predictedPeak = *report.arenaBytes;
  }
  checkMemoryLimit();

  report.rematPlan =
      plan.remat.value_or(flags.train() ? flags.driver.remat.getValue()
                                        : "none");
  report.wavefront = flags.driver.wavefront;
  report.layersInSequence = flags.driver.wavefront && plan.sequentialLayers;
  report.gemmBlock = mlir::rnn::gemmBlockSteps(shape.seqLen, shape.batch,
                                               pipelineOptions.getGemmRows());
  // The block the dynamic program computes is the one a static shape has.
  if (plan.blockSteps && *plan.blockSteps != report.gemmBlock)
    fail("the program's GEMM block at T=" + std::to_string(shape.seqLen) +
             ", B=" + std::to_string(shape.batch) + " is " +
             std::to_string(*plan.blockSteps) + " steps, not " +
             std::to_string(report.gemmBlock),
         1);
}

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

// One line naming the figures instead of an allocation failure halfway. On
// the cuda target the inputs and the planned peak are device memory,
// checked against the device's free memory (the inputs are also held on
// the host).
void RunSession::checkMemoryLimit() const {
  uint64_t inputBytes = 0;
  for (const NamedTensor &arg : signature.args)
    if (flags.train() || !llvm::StringRef(arg.name).starts_with(kGradPrefix))
      inputBytes += static_cast<uint64_t>(arg.bytes());
  std::optional<int64_t> peak = report.predictedPeak;
  uint64_t need = inputBytes + static_cast<uint64_t>(peak.value_or(0));
  auto mib = [](uint64_t bytes) {
    return llvm::formatv("{0:f1} MiB", bytes / (1024.0 * 1024.0)).str();
  };
  auto refuse = [&](uint64_t bytes, const char *where, uint64_t limit,
                    const std::string &source) {
    fail("the step needs " + std::to_string(bytes) + " bytes" + where + " (" +
         mib(bytes) + ": inputs " + mib(inputBytes) + ", planned peak " +
         (peak ? mib(*peak) : std::string("unknown")) + "), more than the " +
         std::to_string(limit) + " bytes of " + source);
  };
  bool device = runner->isDevice();
  if (flags.maxMemory.getNumOccurrences()) {
    if (need > flags.maxMemory)
      refuse(need, device ? " of device memory" : "", flags.maxMemory,
             "--max-memory");
    return;
  }
  // The host holds the inputs, and on the CPU the step's buffers.
  uint64_t hostNeed = device ? inputBytes : need;
  if (std::optional<uint64_t> available = availableMemory();
      available && hostNeed > *available)
    refuse(hostNeed, device ? " of host memory" : "", *available,
           "the memory available (MemAvailable; --max-memory sets the "
           "limit)");
  if (std::optional<std::pair<size_t, size_t>> deviceMemory =
          runner->deviceMemory()) {
    auto [free, total] = *deviceMemory;
    if (need > free)
      refuse(need, " of device memory", free,
             "the CUDA device's free memory (cuMemGetInfo, of " +
                 std::to_string(total) + "; --max-memory sets the limit)");
  }
}

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

void RunSession::compile() {
  // Argument values: all from --inputs, or all generated.
  Generator generator{flags.seed, flags.resetProb, shape.hiddenSize};
  bool presetHint = !flags.driver.preset.empty();
  argData.resize(signature.args.size());
  for (auto [i, arg] : llvm::enumerate(signature.args)) {
    if (!flags.train() && llvm::StringRef(arg.name).starts_with(kGradPrefix))
      continue;
    if (!inputs)
      check(generateArgument(arg, generator, argData[i]));
    else if (auto it = inputs->find(arg.array); it != inputs->end())
      check(readArgument(arg, it->second, flags.inputs, presetHint,
                         argData[i]));
    else
      argData[i].assign(arg.bytes(), 0);
  }

  PassManager toLLVM(&context);
  mlir::rnn::buildTargetStage(toLLVM, pipelineOptions);
  runPipeline(toLLVM);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto compiled = JitFunction::compile(*module, entryName, runner->symbols(),
                                       flags.jitListeners);
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
  if (report.arenaBytes) {
    arenaBuffer = runner->allocateArena(*report.arenaBytes);
    arenaWords = descriptor(arenaBuffer, {*report.arenaBytes});
    for (int64_t &word : arenaWords)
      packed.push_back(&word);
  }
  resultStorage.assign(resultWords, 0);
  packed.push_back(resultStorage.data());
}

RunSession::StepCounts RunSession::countsNow() {
  return StepCounts{runtime::kernelLaunches(), runtime::gemmCalls(),
                    runtime::synchronizations(),
                    runner->ledger().totalAllocations()};
}

void RunSession::runSteps() {
  runtime::setBlasThreads(flags.threads);
  // Keep freed memory in the process: without this, glibc returns large
  // blocks to the OS and every step pays the page faults of its buffers
  // again, which measures the kernel rather than the program.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  resultValues.resize(signature.results.size());
  bool graphMode = flags.cudaGraph();
  long long steps = flags.warmup + flags.iters;

  // Graph mode: one eager step (step -1), then the host code runs once
  // more under capture, and every further step replays what it issued.
  for (long long iter = graphMode ? -1 : 0; iter < steps; ++iter) {
    if (graphMode && iter == 0)
      runner->capture([&] { function->invoke(packed); });
    runtime::MemoryFigures figures;
    runtime::StepStats stats = runner->runStep(
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
      if (iter + 1 == steps) {
        resultValues[i].resize(r.bytes());
        runner->read(resultValues[i].data(),
                     aligned + offset * r.elementBytes(), r.bytes());
      }
      // Results in the arena belong to it.
      if (!report.arenaBytes && llvm::find(freed, allocated) == freed.end()) {
        runner->freeResult(allocated);
        freed.push_back(allocated);
      }
      word += 3 + 2 * r.shape.size();
    }
    if (iter < flags.warmup)
      continue;
    report.stepMs.push_back(stats.totalMs);
    report.fwdMs.push_back(stats.fwdMs);
    report.bwdMs.push_back(stats.bwdMs);
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
  if (!flags.outputs.empty()) {
    std::vector<npz::Array> arrays = gatherResults(signature, resultValues);
    std::vector<const npz::Array *> pointers;
    for (const npz::Array &array : arrays)
      pointers.push_back(&array);
    check(npz::writeNpz(flags.outputs, pointers));
  }
  check(stagedFiles.commit());
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
  int64_t held = flags.train() ? last.bytesAtBackwardStart : last.bytesAtEnd;
  report.savedBytes = std::max<int64_t>(0, held - resultBytes);
  report.fwdPeak = last.fwdPeakBytes;
  report.bwdPeak = last.bwdPeakBytes;
  if (report.arenaBytes) {
    report.fwdPeak = plannedPhases->fwdPeak;
    report.bwdPeak = plannedPhases->bwdPeak;
    report.savedBytes = plannedPhases->saved;
  }
  report.measuredPeak = static_cast<int64_t>(last.peakBytes);
  report.shape = shape;
  report.gemm = runner->gemm(shape.f64);
  report.gemmCalls = static_cast<int64_t>(perStep->gemms);
  report.launches = static_cast<int64_t>(perStep->launches);
  report.syncs = static_cast<int64_t>(perStep->syncs);
  report.allocations = static_cast<int64_t>(perStep->allocations);
  printReport(llvm::outs(), report, flags.json);
  return 0;
}
