//===- rnn-compile.cpp - compile a model into a shared library ------------===//
//
// rnn-compile [MODEL.mlir | --preset=lstm|gru|mgu|cifg --seq-len=T ...]
//             [--remat=POLICY] [--target=cpu|cuda [--chip=sm_NN]]
//             [--entries=infer,train,fwd,bwd] -o DIR
//
// Writes DIR/librnnc_model.so and DIR/manifest.json. The library exports
// one C entry point per compiled function (rnn-emit-c-abi), of those
// --entries names (default all four; the others are not compiled):
//
//   int32_t rnnc_<f>(void *const *buffers, void *stream);        infer
//   int32_t rnnc_<f>_grad(void *const *buffers, void *stream);   train
//   int32_t rnnc_<f>_fwd(void *const *buffers, void *stream);    forward
//   int32_t rnnc_<f>_bwd(void *const *buffers, void *stream);    backward
//
// `buffers` holds one data pointer per argument, in the order the manifest
// lists them, all owned by the caller: inputs, parameters, outputs,
// gradients, the saved region (fwd and bwd) and a scratch arena of the
// planned size (contents not kept between calls). The library also holds
// its manifest's text (`const char rnnc_manifest[]`), which a loader
// compares with manifest.json before it trusts the argument lists, since an
// entry point cannot check its buffers. The library links the
// project's runtime and OpenBLAS, and needs neither LLVM nor MLIR at run
// time. LLD links it in this process (no toolchain needed), from the link
// kit (--link-kit: the C runtime objects and the static C++ runtime, as
// `c++ -shared -static-libstdc++ -static-libgcc` adds them, and OpenBLAS)
// and the glibc this process runs on; --linker=DRIVER links with a C++
// compiler driver instead.
//
// With --target=cuda every buffer is device memory, the kernels' PTX is
// embedded in the library (loaded by the driver at the first call on each
// device), and an entry point takes a context first (rnnc_context_create,
// one per device) and enqueues its work on `stream`, the caller's CUDA
// stream on that device, without waiting for it. It returns 0, or 1 with
// the reason in rnnc_last_error(). The driver and
// cuBLAS are loaded at run time, as by rnn-run. Errors: one line on stderr,
// exit 2; DIR gets its files only when everything succeeded (each written under
// a temporary name and renamed, the manifest last).
//
// `rnn-compile --print-identity` prints, as JSON, what its libraries depend
// on besides the flags and the model (the executable, LLVM's version, the
// runtime archives), which rnnc's compile cache names a compiler by.
//
// This file holds the flags and the compile stages; Link.cpp the object
// and the link, Manifest.cpp the manifest, and lib/Driver what rnn-run
// shares.
//
//===----------------------------------------------------------------------===//

#include "Link.h"
#include "Manifest.h"

#include "rnn/Driver/Compile.h"
#include "rnn/Driver/Model.h"
#include "rnn/Driver/Options.h"
#include "rnn/InitAll.h"
#include "rnn/Pipelines/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm-c/Core.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;
using namespace ::rnn::driver;
using namespace ::rnn::compile;
namespace cl = llvm::cl;

static cl::OptionCategory category("rnn-compile options");
static DriverOptions flags(category);
static cl::opt<std::string> outputDir("o", cl::init(""),
                                      cl::desc("Output directory (required)"),
                                      cl::value_desc("DIR"), cl::cat(category));
static cl::opt<std::string>
    chip("chip", cl::init("sm_90"),
         cl::desc("GPU chip the PTX is compiled for (--target=cuda; the "
                  "driver also runs it on newer chips) (default sm_90)"),
         cl::cat(category));
static cl::list<std::string>
    entries("entries", cl::CommaSeparated,
            cl::desc("The entry points the library has, of infer, train "
                     "(the fused training function), fwd and bwd (default: "
                     "all four); each costs its share of the compile"),
            cl::value_desc("KIND,..."), cl::cat(category));
static LinkFlags linkFlags(category);
static cl::opt<bool> printIdentity(
    "print-identity",
    cl::desc("Print, as JSON, what the libraries this rnn-compile writes "
             "depend on besides its flags and model (its executable, the "
             "LLVM it runs, the runtime archives it links), and exit"),
    cl::cat(category));

/// Each entry point kind and the suffix of its function's name.
static constexpr std::pair<const char *, const char *> kEntryKinds[] = {
    {"infer", ""}, {"train", "_grad"}, {"fwd", "_fwd"}, {"bwd", "_bwd"}};

[[noreturn]] static void fail(const std::string &message, int code = 2) {
  llvm::errs() << "rnn-compile: " << message << "\n";
  std::exit(code);
}

/// Exits with `error`'s message and `code` if there is one.
static void check(llvm::Error error, int code = 2) {
  if (error)
    fail(llvm::toString(std::move(error)), code);
}

/// Prints --print-identity's object: "executable", the absolute path of
/// the program running (a wrapper script execs it), "llvm", the version of
/// the LLVM it runs (a shared library in a build from source), and
/// "runtime_lib" and "cuda_runtime_lib", the absolute paths of the archives
/// it links as this environment chooses them ("" where none). A compile
/// cache names a compiler by their contents.
static void printIdentityAndExit() {
  auto absolute = [](llvm::StringRef given) {
    llvm::SmallString<256> path(given);
    if (!path.empty())
      (void)llvm::sys::fs::make_absolute(path);
    return std::string(path);
  };
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  llvm::json::OStream json(llvm::outs());
  json.object([&] {
    json.attribute("executable", llvm::sys::fs::getMainExecutable(
                                     nullptr, reinterpret_cast<void *>(&fail)));
    json.attribute("llvm",
                   llvm::formatv("{0}.{1}.{2}", major, minor, patch).str());
    json.attribute("runtime_lib", absolute(linkFlags.archive(false)));
    json.attribute("cuda_runtime_lib", absolute(linkFlags.archive(true)));
  });
  llvm::outs() << "\n";
  llvm::outs().flush();
  std::exit(0);
}

/// Refuses, naming them, flags that are missing, unknown or inconsistent;
/// the pipeline a library is compiled with: results as out-params, split
/// entry points, the planned buffers in one arena, a C ABI.
static void checkFlags(MLIRContext &context,
                       mlir::rnn::PipelineOptions &options) {
  if (outputDir.empty())
    fail("no output directory: give -o DIR");
  for (const std::string &kind : entries)
    if (llvm::none_of(kEntryKinds,
                      [&](const auto &known) { return kind == known.first; }))
      fail("--entries: unknown entry point '" + kind +
           "' (expected infer, train, fwd or bwd)");
  if (entries.getNumOccurrences() && entries.empty())
    fail("--entries: no entry point");
  // A path given empty names nothing: it is not taken as its default.
  std::pair<const cl::opt<std::string> *, const char *> paths[] = {
      {&linkFlags.runtimeLib, "file"},
      {&linkFlags.cudaRuntimeLib, "file"},
      {&linkFlags.linker, "compiler driver"},
      {&linkFlags.linkKit, "directory"}};
  for (auto [flag, what] : paths)
    if (flag->getNumOccurrences() && flag->empty())
      fail("--" + flag->ArgStr.str() + "= names no " + what);
  std::string error;
  if (failed(flags.check(context, error)))
    fail(error);
  // A library of the inference entry point alone neither saves nor drops.
  bool training = entries.empty() || llvm::any_of(entries, [](auto &kind) {
                    return kind != "infer";
                  });
  if (!training && flags.remat.getNumOccurrences())
    fail("--remat applies to the training entry points (train, fwd, bwd): "
         "inference saves nothing for a backward pass");
  if (!training && flags.dropout > 0.0)
    fail("--dropout applies to the training entry points (train, fwd, "
         "bwd): inference drops nothing");
  // A library of every shape is called with T and B.
  if (flags.dynamic)
    for (const cl::opt<long long> *size : {&flags.seqLen, &flags.batch})
      if (size->getNumOccurrences())
        fail("--" + size->ArgStr.str() +
             " and --dynamic: a library of every shape takes T and B at "
             "each call");
  if (!flags.isCUDA())
    for (const cl::Option *flag :
         std::initializer_list<const cl::Option *>{&chip,
                                                   &linkFlags.cudaRuntimeLib})
      if (flag->getNumOccurrences())
        fail("--" + flag->ArgStr.str() + " needs --target=cuda");
  flags.apply(options);
  options.outParams = true;
  options.split = true;
  options.arena = true;
  options.cABI = true;
  options.chip = chip;
  if (failed(mlir::rnn::verifyPipelineOptions(options, error)))
    fail(error);
  check(compileThreads().takeError());
}

/// Removes the entry points --entries leaves out, with their functions and
/// whatever only they use (upstream's symbol-dce: private symbols without
/// a use).
static void dropEntryPoints(ModuleOp module, const std::string &name) {
  if (entries.empty())
    return;
  for (auto [kind, suffix] : kEntryKinds) {
    if (llvm::is_contained(entries, kind))
      continue;
    // The C entry point (and its sizes, for every T and B), then the
    // function.
    std::string entry = "rnnc_" + name + suffix;
    for (std::string symbol : {entry, entry + "_sizes", name + suffix})
      if (auto func = module.lookupSymbol<func::FuncOp>(symbol)) {
        if (!SymbolTable::symbolKnownUseEmpty(func, module))
          func.setPrivate();
        else
          func.erase();
      }
  }
  PassManager pm(module.getContext());
  pm.addPass(createSymbolDCEPass());
  std::string error;
  if (failed(runPipeline(pm, module, error)))
    fail("internal: removing the entry points left out: " + error, 1);
}

/// The model, its training function and, up to planned buffers with C
/// entry points, every entry point, described in `manifest`; the library
/// holds its one model function, made public.
static OwningOpRef<ModuleOp>
compileEntryPoints(MLIRContext &context,
                   const mlir::rnn::PipelineOptions &options,
                   Manifest &manifest) {
  ModelShape shape;
  if (flags.modelFile.empty())
    shape = flags.presetShape();
  LoadedModel loaded;
  std::string error;
  if (failed(loadModel(context, flags.modelFile, flags.entry, shape, loaded,
                       error)) ||
      failed(checkTarget(shape, flags.target, error)))
    fail(error);
  ModuleOp module = *loaded.module;
  func::FuncOp model = loaded.func;
  // The library holds one model: the other functions are not compiled.
  for (auto other : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (other != model)
      other.erase();
  std::string name = model.getName().str();
  model.setPublic();
  // What the entry points compute beyond their arguments, read before
  // inference loses its dropouts.
  if (llvm::Error error = manifest.describeModel(model))
    fail("cannot compile @" + name + ": " + llvm::toString(std::move(error)));

  if (failed(buildTrainingFunctions(module, options, error)))
    fail("cannot compile @" + name + (error.empty() ? "" : ": " + error));
  // The inference entry point reads no rng: its dropouts drop nothing.
  removeDropouts(model);
  if (compileToBuffers(module, options, /*memoryReportFile=*/"",
                       /*memorySVGFile=*/"", error) != CompileStatus::Compiled)
    fail("cannot compile @" + name + (error.empty() ? "" : ": " + error));

  manifest.model = name;
  manifest.cell = loaded.cellName;
  manifest.shape = shape;
  manifest.target = mlir::rnn::stringifyTarget(options.target).str();
  manifest.remat = manifest.rematPlan = flags.remat;
  manifest.gemmRows = options.getGemmRows();
  manifest.wavefront = flags.wavefront;
  if (flags.isCUDA())
    manifest.cuda = {chip.getValue(), options.features.getValue(),
                     mlir::rnn::stringifyGPUMath(options.gpuMath).str()};
  for (auto [kind, suffix] : kEntryKinds) {
    auto func = module.lookupSymbol<func::FuncOp>(name + suffix);
    if (!func)
      fail("internal: no @" + name + suffix + " after compiling", 1);
    if (entries.empty() || llvm::is_contained(entries, kind))
      if (llvm::Error error = manifest.addEntry(
              kind, func, readEntryPlan(func, /*train=*/suffix[0] != 0)))
        fail("internal: " + llvm::toString(std::move(error)), 1);
  }
  // Under a budget for every T and B: the plans each call chooses among.
  SmallVector<func::FuncOp> variants;
  mlir::rnn::trainingVariantsOf(module, name + "_grad", variants);
  for (func::FuncOp variant : variants)
    manifest.addRematVariant(variant);
  dropEntryPoints(module, name);
  return std::move(loaded.module);
}

/// The target's code, as an LLVM module.
static std::unique_ptr<llvm::Module>
compileToLLVM(ModuleOp module, const mlir::rnn::PipelineOptions &options,
              const std::string &name, llvm::LLVMContext &llvmContext) {
  std::string error;
  PassManager pm(module.getContext());
  mlir::rnn::buildTargetStage(pm, options);
  if (failed(runPipeline(pm, module, error)))
    fail("cannot lower @" + name + " to LLVM" +
             (error.empty() ? "" : ": " + error),
         1);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "rnnc_model");
  if (!llvmModule)
    fail("cannot translate @" + name + " to LLVM IR", 1);
  return llvmModule;
}

/// The manifest's text in the library, as the NUL-terminated
/// `const char rnnc_manifest[]`: a loader compares it with manifest.json
/// before it trusts the file's argument lists, which the entry points do
/// not check.
static void embedManifest(llvm::Module &llvmModule, llvm::StringRef text) {
  llvm::Constant *data = llvm::ConstantDataArray::getString(
      llvmModule.getContext(), text, /*AddNull=*/true);
  auto *global = new llvm::GlobalVariable(
      llvmModule, data->getType(), /*isConstant=*/true,
      llvm::GlobalValue::ExternalLinkage, data, "rnnc_manifest");
  global->setAlignment(llvm::Align(1));
}

/// The library and its manifest in the output directory.
static void writeLibrary(llvm::Module &llvmModule,
                         const std::string &manifest) {
  auto objects = emitObjects(llvmModule);
  check(objects.takeError(), 1);
  LinkJob job;
  job.blas = !flags.isCUDA();
  auto archives = linkFlags.archives(flags.isCUDA());
  check(archives.takeError());
  job.archives = std::move(*archives);
  std::unique_ptr<Linker> linker = linkFlags.createLinker();
  // The built-in linker resets every command-line option to its default:
  // what follows reads none.
  std::string directory = outputDir;
  check(::rnn::compile::writeLibrary(directory, *objects, manifest, *linker,
                                     std::move(job)));
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  flags.dynamic.setDescription(
      "Compile a library of every sequence length and batch size (T and B "
      "dynamic in its IR), which each call gives; no --seq-len or --batch");
  // A bad option is one line and exit 2, as every other refusal.
  if (std::string error = parseCommandLine(
          argc, argv, "rnnc: compile a model into a shared library\n");
      !error.empty())
    fail(error);
  if (printIdentity)
    printIdentityAndExit();
  DialectRegistry registry;
  mlir::rnn::registerAllDialects(registry);
  // The pipelines by name: rnn-rematerialize runs its predict-pipeline.
  mlir::rnn::registerPipelines();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  mlir::rnn::PipelineOptions options;
  checkFlags(context, options);
  Manifest manifest;
  OwningOpRef<ModuleOp> module =
      compileEntryPoints(context, options, manifest);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      compileToLLVM(*module, options, manifest.model, llvmContext);
  std::string text = manifest.render(context);
  embedManifest(*llvmModule, text);
  writeLibrary(*llvmModule, text);
  return 0;
}
