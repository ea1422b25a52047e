//===- rnn-compile.cpp - compile a model into a shared library ------------===//
//
// rnn-compile [MODEL.mlir | --preset=lstm|gru --seq-len=T ...]
//             [--remat=POLICY] [--target=cpu|cuda [--chip=sm_NN]] -o DIR
//
// Writes DIR/librnnc_model.so and DIR/manifest.json. The library exports
// one C entry point per compiled function (rnn-emit-c-abi):
//
//   int32_t rnnc_<f>(void *const *buffers, void *stream);        infer
//   int32_t rnnc_<f>_grad(void *const *buffers, void *stream);   train
//   int32_t rnnc_<f>_fwd(void *const *buffers, void *stream);    forward
//   int32_t rnnc_<f>_bwd(void *const *buffers, void *stream);    backward
//
// `buffers` holds one data pointer per argument, in the order the manifest
// lists them, all owned by the caller: inputs, parameters, outputs,
// gradients, the saved region (fwd and bwd) and a scratch arena of the
// planned size (contents not kept between calls). The library links the
// project's runtime and OpenBLAS, and needs neither LLVM nor MLIR at run
// time. LLD links it in this process (no toolchain needed), from the link
// kit (--link-kit: the C runtime objects and the static C++ runtime, as
// `c++ -shared -static-libstdc++ -static-libgcc` adds them, and OpenBLAS)
// and the glibc this process runs on; --linker=DRIVER links with a C++
// compiler driver instead.
//
// With --target=cuda every buffer is device memory, the kernels' PTX is
// embedded in the library (loaded by the driver at the first call, on the
// device rnnc_set_device chose, default 0), and an entry point enqueues
// its work on `stream`, the caller's CUDA stream, without waiting for it.
// It returns 0, or 1 with the reason in rnnc_last_error(). The driver and
// cuBLAS are loaded at run time, as by rnn-run. Errors: one line on stderr,
// exit 2; DIR gets its files only when everything succeeded (each written under
// a temporary name and renamed, the manifest last).
//
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "Model.h"

#include "rnn/Dialect/RNNAttrs.h"
#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Dialect/RNNRoles.h"
#include "rnn/InitAll.h"
#include "rnn/Pipelines/Pipelines.h"

#include "lld/Common/Driver.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

#include <dlfcn.h>
#include <link.h>

LLD_HAS_DRIVER(elf)

using namespace mlir;
using namespace ::rnn::run;
namespace cl = llvm::cl;

static cl::OptionCategory category("rnn-compile options");
static cl::opt<std::string> modelFile(cl::Positional, cl::init(""),
                                      cl::desc("[MODEL.mlir]"),
                                      cl::cat(category));
static cl::opt<std::string> outputDir("o", cl::init(""),
                                      cl::desc("Output directory (required)"),
                                      cl::value_desc("DIR"), cl::cat(category));
static cl::opt<std::string>
    preset("preset", cl::init(""),
           cl::desc("Build the model of a cell of the dialect (lstm, gru, "
                    "...; another name lists them)"),
           cl::cat(category));
static PresetFlags presetFlags(category);
static cl::opt<std::string>
    remat("remat", cl::init("none"),
          cl::desc("What the forward saves for the backward: none | gates | "
                   "chunk:K | budget:BYTES (default none)"),
          cl::cat(category));
static cl::opt<std::string>
    target("target", cl::init("cpu"),
           cl::desc("Target: cpu | cuda (PTX kernels embedded in the "
                    "library, run on the caller's stream) (default cpu)"),
           cl::cat(category));
static ScheduleFlags schedule(category);
static cl::opt<std::string>
    chip("chip", cl::init("sm_90"),
         cl::desc("GPU chip the PTX is compiled for (--target=cuda; the "
                  "driver also runs it on newer chips) (default sm_90)"),
         cl::cat(category));
static cl::opt<std::string> cudaToolkit(
    "cuda-toolkit", cl::init(""),
    cl::desc("CUDA toolkit directory with nvvm/libdevice (--target=cuda; "
             "default: $RNNC_CUDA_TOOLKIT, else the build's toolkit)"),
    cl::cat(category));
static cl::opt<std::string>
    entryFunction("entry", cl::init(""),
                  cl::desc("The model function of MODEL.mlir to compile "
                           "(default: its only one)"),
                  cl::cat(category));
static cl::opt<std::string>
    runtimeLib("runtime-lib", cl::init(""),
               cl::desc("The rnnc runtime archive to link (default: "
                        "$RNNC_RUNTIME_LIB, else the build's)"),
               cl::cat(category));
static cl::opt<std::string> cudaRuntimeLib(
    "cuda-runtime-lib", cl::init(""),
    cl::desc("The rnnc CUDA runtime archive to link (--target=cuda; "
             "default: $RNNC_CUDA_RUNTIME_LIB, else the build's)"),
    cl::cat(category));
static cl::opt<std::string>
    linker("linker", cl::init(""),
           cl::desc("C++ compiler driver that links the library instead of "
                    "the built-in linker (LLD, in process)"),
           cl::cat(category));
static cl::opt<std::string> linkKit(
    "link-kit", cl::init(""),
    cl::desc("Directory with what the built-in linker links besides glibc "
             "(C runtime objects, static C++ runtime, OpenBLAS) (default: "
             "$RNNC_LINK_KIT, else the build's)"),
    cl::cat(category));

/// The scratch directory in the output directory while the library is
/// written; fail() removes it (std::exit runs no destructors).
static std::string scratchDirectory;

[[noreturn]] static void fail(const std::string &message, int code = 2) {
  llvm::errs() << "rnn-compile: " << message << "\n";
  if (!scratchDirectory.empty())
    llvm::sys::fs::remove_directories(scratchDirectory);
  std::exit(code);
}

static std::string errorText(llvm::Error error) {
  return llvm::toString(std::move(error));
}

/// One entry point of the manifest, with its memory plan.
static llvm::json::Object describeEntry(func::FuncOp func,
                                        const EntryPlan &plan) {
  llvm::json::Array args;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto memref = cast<MemRefType>(type);
    llvm::json::Object arg;
    auto name = func.getArgAttrOfType<StringAttr>(
        i, mlir::rnn::RNNDialect::NameAttrHelper::getNameStr());
    std::string argName =
        name ? name.getValue().str() : "arg" + std::to_string(i);
    arg["name"] = argName;
    arg["role"] =
        mlir::rnn::stringifyBufferRole(mlir::rnn::bufferRole(argName)).str();
    if (auto layer = func.getArgAttrOfType<IntegerAttr>(
            i, mlir::rnn::RNNDialect::LayerAttrHelper::getNameStr()))
      arg["layer"] = layer.getInt();
    arg["shape"] = llvm::json::Array(memref.getShape());
    Type element = memref.getElementType();
    arg["dtype"] = element.isInteger(1)    ? "bool"
                   : element.isInteger(8)  ? "uint8"
                   : element.isF32()       ? "float32"
                   : element.isF64()       ? "float64"
                   : element.isInteger(64) ? "int64"
                                           : "unknown";
    args.push_back(std::move(arg));
  }
  llvm::json::Object entry;
  entry["symbol"] = "rnnc_" + func.getName().str();
  entry["args"] = std::move(args);
  if (plan.arenaBytes)
    entry["arena_bytes"] = *plan.arenaBytes;
  if (plan.peakBytes)
    entry["predicted_peak_bytes"] = *plan.peakBytes;
  if (plan.savedBytes)
    entry["saved_bytes"] = *plan.savedBytes;
  if (plan.saved) {
    llvm::json::Array layout;
    for (const SavedRegion &region : *plan.saved)
      layout.push_back(llvm::json::Object{{"role", region.role},
                                          {"offset", region.offset},
                                          {"bytes", region.bytes}});
    entry["saved"] = std::move(layout);
  }
  return entry;
}

/// Writes `contents` to `path` through a temporary file in its directory.
static void writeAtomically(llvm::StringRef path, llvm::StringRef contents) {
  std::string tmp = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      fail("cannot write " + tmp + ": " + ec.message());
    os << contents;
    os.close();
    if (os.has_error())
      fail("cannot write " + tmp + ": " + os.error().message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    fail("cannot write " + path.str() + ": " + ec.message());
}

/// Compiles `llvmModule` for this machine into an object file at `path`.
static void emitObject(llvm::Module &llvmModule, llvm::StringRef path) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    fail("cannot target this machine: " + errorText(builder.takeError()), 1);
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  auto machine = builder->createTargetMachine();
  if (!machine)
    fail("cannot target this machine: " + errorText(machine.takeError()), 1);
  llvmModule.setDataLayout((*machine)->createDataLayout());
  llvmModule.setTargetTriple((*machine)->getTargetTriple());
  inlineIntoEntryPoints(llvmModule, "rnnc_");
  auto optimize = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                            machine->get());
  if (llvm::Error error = optimize(&llvmModule))
    fail("cannot optimize the program: " + errorText(std::move(error)), 1);

  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    fail("cannot write " + path.str() + ": " + ec.message());
  llvm::legacy::PassManager pm;
  if ((*machine)->addPassesToEmitFile(pm, out.os(), nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    fail("this machine's target cannot emit object files", 1);
  pm.run(llvmModule);
  out.keep();
}

/// The runtime archive (`what`) that `flag` names, else $`env`, else
/// `built`; an error if it does not exist.
static std::string findArchive(llvm::StringRef what,
                               const cl::opt<std::string> &flag,
                               const char *env, llvm::StringRef built) {
  std::string path = flag;
  if (path.empty())
    if (const char *value = std::getenv(env); value && *value)
      path = value;
  if (path.empty())
    path = built.str();
  if (path.empty() || !llvm::sys::fs::exists(path))
    fail("no " + what.str() + " archive" + (path.empty() ? "" : " at " + path) +
         " (give --" + flag.ArgStr.str() + " or $" + env + ")");
  return path;
}

/// The files of the link kit, in link order around the program: C runtime
/// objects first, then the static C++ and C runtimes, then the objects
/// that end the library.
static constexpr const char *kKitFirst[] = {"crti.o", "crtbeginS.o", "shims.o"};
static constexpr const char *kKitArchives[] = {
    "libstdc++.a", "libgcc.a", "libgcc_eh.a", "libc_nonshared.a"};
static constexpr const char *kKitLast[] = {"crtendS.o", "crtn.o"};
/// The kit's BLAS: a library for the cpu target calls it.
static constexpr const char *kKitBlas = "libopenblas.so.0";

/// The path of the glibc library `soname` this process has loaded (or can
/// load): the built-in linker links against the C library the process runs
/// on, so a library compiled here loads here.
static std::optional<std::string> loadedLibrary(const char *soname) {
  void *handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if (!handle)
    handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return std::nullopt;
  struct link_map *map = nullptr;
  std::optional<std::string> path;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
      *map->l_name)
    path = map->l_name;
  dlclose(handle);
  return path;
}

/// The runtime archives a library links: the CUDA runtime first (it calls
/// into the other).
static llvm::SmallVector<std::string> runtimeArchives() {
  llvm::SmallVector<std::string> archives;
  if (target == "cuda")
    archives.push_back(findArchive("rnnc CUDA runtime", cudaRuntimeLib,
                                   "RNNC_CUDA_RUNTIME_LIB",
                                   RNN_CUDA_RUNTIME_ARCHIVE));
  archives.push_back(findArchive("rnnc runtime", runtimeLib, "RNNC_RUNTIME_LIB",
                                 RNN_RUNTIME_ARCHIVE));
  return archives;
}

/// Links with the C++ compiler driver `driver` (--linker).
static void linkWithDriver(llvm::StringRef driver, llvm::StringRef object,
                           llvm::StringRef library, llvm::StringRef exports,
                           llvm::StringRef scratch) {
  auto program = llvm::sys::findProgramByName(driver);
  if (!program)
    fail("no C++ compiler driver '" + driver.str() +
         "' to link the library (--linker)");
  llvm::SmallVector<std::string> archives = runtimeArchives();
  std::string log = (scratch + "/link.log").str();
  std::string versionScript = ("-Wl,--version-script=" + exports).str();
  llvm::SmallVector<llvm::StringRef> args = {*program, "-shared", "-o", library,
                                             object};
  args.append(archives.begin(), archives.end());
  // Static C++ runtime: the library loads next to any libstdc++ (PyTorch's,
  // an older system's).
  args.append({"-static-libstdc++", "-static-libgcc"});
  // The CPU's GEMMs; a cuda library calls cuBLAS, loaded at run time.
  if (target == "cpu")
    args.push_back("-lopenblas");
  args.append(
      {"-lpthread", "-ldl", "-lm", "-Wl,--no-undefined", versionScript});
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*program, args, std::nullopt, redirects, 0,
                                     0, &message);
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    std::string first =
        text ? (*text)->getBuffer().split('\n').first.str() : message;
    if (first.empty())
      first = driver.str() + " exited " + std::to_string(rc);
    fail("linking the library failed: " + first);
  }
}

/// Links with LLD in this process: no toolchain is needed, only the link
/// kit (what `c++ -shared -static-libstdc++ -static-libgcc` would add) and
/// the glibc this process runs on. The link line is the driver's.
static void linkInProcess(llvm::StringRef object, llvm::StringRef library,
                          llvm::StringRef exports) {
  std::string kit = linkKit;
  if (kit.empty())
    if (const char *value = std::getenv("RNNC_LINK_KIT"); value && *value)
      kit = value;
  if (kit.empty())
    kit = RNN_LINK_KIT;
  auto inKit = [&](llvm::StringRef name) {
    llvm::SmallString<256> path(kit);
    llvm::sys::path::append(path, name);
    if (!llvm::sys::fs::exists(path))
      fail("the link kit " + kit + " has no " + name.str() +
           " (give --link-kit or $RNNC_LINK_KIT, or --linker=c++)");
    return path.str().str();
  };
  // Every string the argument list points into.
  std::vector<std::string> strings;
  for (const char *name : kKitFirst)
    strings.push_back(inKit(name));
  strings.push_back(object.str());
  for (std::string &archive : runtimeArchives())
    strings.push_back(std::move(archive));
  if (target == "cpu")
    strings.push_back(inKit(kKitBlas));
  strings.push_back("--start-group");
  for (const char *name : kKitArchives)
    strings.push_back(inKit(name));
  // glibc: libpthread and libdl are stubs since 2.34 and real before
  // (optional); --as-needed drops what is not used.
  static constexpr std::pair<const char *, bool> kGlibc[] = {
      {"libm.so.6", true},
      {"libc.so.6", true},
      {"libpthread.so.0", false},
      {"libdl.so.2", false},
      {"ld-linux-x86-64.so.2", true}};
  for (auto [soname, required] : kGlibc) {
    if (std::optional<std::string> path = loadedLibrary(soname))
      strings.push_back(*path);
    else if (required)
      fail(std::string("cannot find this system's ") + soname +
           " to link the library against");
  }
  strings.push_back("--end-group");
  for (const char *name : kKitLast)
    strings.push_back(inKit(name));

  std::string out = library.str();
  std::string versionScript = ("--version-script=" + exports).str();
  std::vector<const char *> args = {"ld.lld",
                                    "--build-id",
                                    "--eh-frame-hdr",
                                    "-m",
                                    "elf_x86_64",
                                    "--hash-style=gnu",
                                    "--as-needed",
                                    "-shared",
                                    "-z",
                                    "relro",
                                    "-z",
                                    "now",
                                    "--no-undefined",
                                    versionScript.c_str(),
                                    "-o",
                                    out.c_str()};
  for (const std::string &s : strings)
    args.push_back(s.c_str());

  std::string diagnostics;
  llvm::raw_string_ostream errs(diagnostics);
  lld::Result result =
      lld::lldMain(args, llvm::nulls(), errs, {{lld::Gnu, &lld::elf::link}});
  if (result.retCode != 0) {
    llvm::StringRef first = llvm::StringRef(diagnostics).split('\n').first;
    first.consume_front("ld.lld: ");
    fail("linking the library failed: " +
         (first.empty() ? std::string("ld.lld exited with ") +
                              std::to_string(result.retCode)
                        : first.str()));
  }
}

/// Links `object` with the runtime into the shared library `library`,
/// exporting only the entry points.
static void link(llvm::StringRef object, llvm::StringRef library,
                 llvm::StringRef scratch) {
  std::string exports = (scratch + "/exports.map").str();
  writeAtomically(exports, "{ global: rnnc_*; local: *; };\n");
  if (!linker.empty())
    linkWithDriver(linker, object, library, exports, scratch);
  else
    linkInProcess(object, library, exports);
}

namespace {
/// What main compiles, stage by stage.
struct Compilation {
  OwningOpRef<ModuleOp> module;
  /// The model function's name, its cell(s) and shape.
  std::string name, cellName;
  ModelShape shape;
  /// The manifest's entry points, and the plan the remat policy chose.
  llvm::json::Object entries;
  std::string rematPlan;
  /// Whether the library's layers run as a wavefront: --wavefront, unless
  /// the budget fits only with them in sequence.
  bool wavefront = false;
};
} // namespace

/// Parses the command line; a bad option is one line and exit 2.
static void parseCommandLine(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  // A bad option is one line and exit 2, as every other refusal.
  if (std::string error = ::rnn::run::parseCommandLine(
          argc, argv, "rnnc: compile a model into a shared library\n");
      !error.empty())
    fail(error);
}

/// Refuses, naming them, flags that are missing, unknown or inconsistent.
static void checkFlags(MLIRContext &context) {
  if (outputDir.empty())
    fail("no output directory: give -o DIR");
  if (!preset.empty() && !modelFile.empty())
    fail("give either MODEL.mlir or --preset, not both");
  if (preset.empty() && modelFile.empty())
    fail("no model: give MODEL.mlir or --preset=CELL (" +
         mlir::rnn::listCells(&context, "", ", ") + ")");
  if (std::string error;
      !preset.empty() && failed(checkCellName(context, preset, error)))
    fail("--preset: " + error);
  if (target != "cpu" && target != "cuda")
    fail("--target must be cpu or cuda, got '" + target + "'");
  const std::string &dtype = presetFlags.dtype;
  if (dtype != "f32" && dtype != "f64")
    fail("--dtype must be f32 or f64, got '" + dtype + "'");
  if (target != "cuda")
    for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
             &chip, &cudaToolkit, &cudaRuntimeLib})
      if (flag->getNumOccurrences())
        fail("--" + flag->ArgStr.str() + " needs --target=cuda");
  if (!entryFunction.empty() && modelFile.empty())
    fail("--entry needs a model file (MODEL.mlir)");
  for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
           &presetFlags.seqLen, &presetFlags.batch, &presetFlags.inputSize,
           &presetFlags.hiddenSize, &presetFlags.layers, &presetFlags.dtype,
           &presetFlags.dropout, &presetFlags.resetTo, &presetFlags.storage}) {
    if (!modelFile.empty() && flag->getNumOccurrences())
      fail("--" + flag->ArgStr.str() +
           " applies to --preset: a model file's IR fixes its shapes, "
           "types, dropouts, reset states and storage types");
  }
}

/// The pipeline a library is compiled with: results as out-params, split
/// entry points, the planned buffers in one arena, a C ABI.
static void selectPipelineOptions(mlir::rnn::PipelineOptions &options) {
  options.remat = remat;
  options.target = target;
  schedule.apply(options);
  options.outParams = true;
  options.split = true;
  options.arena = true;
  options.cABI = true;
  options.chip = chip;
  options.toolkit =
      mlir::rnn::PipelineOptions::toolkitFromFlag(cudaToolkit.getValue());
  {
    std::string message;
    if (failed(mlir::rnn::verifyPipelineOptions(options, message)))
      fail(message);
  }
}

/// The model: parsed from its file or built from the preset; the library
/// holds its one model function, made public.
static void loadModel(MLIRContext &context, Compilation &compiled) {
  if (modelFile.empty())
    compiled.shape = presetFlags.shape(preset);
  LoadedModel loaded;
  if (std::string error; failed(::rnn::run::loadModel(
          context, modelFile, entryFunction, compiled.shape, loaded, error)))
    fail(error);
  compiled.module = std::move(loaded.module);
  compiled.cellName = loaded.cellName;
  func::FuncOp model = loaded.func;
  // The library holds one model: the other functions are not compiled.
  for (auto other :
       llvm::make_early_inc_range(compiled.module->getOps<func::FuncOp>()))
    if (other != model)
      other.erase();
  if (std::string error; failed(checkTarget(compiled.shape, target, error)))
    fail(error);
  compiled.name = model.getName().str();
  model.setPublic();
}

/// The training function and, up to planned buffers with C entry points,
/// every entry point, described for the manifest.
static void compileEntryPoints(MLIRContext &context,
                               const mlir::rnn::PipelineOptions &options,
                               Compilation &compiled) {
  const std::string &name = compiled.name;
  ModuleOp module = *compiled.module;
  func::FuncOp model = module.lookupSymbol<func::FuncOp>(name);
  {
    std::string error;
    if (failed(buildTrainingFunctions(module, options, error)))
      fail("cannot compile @" + name + (error.empty() ? "" : ": " + error));
    // The inference entry point reads no rng: its dropouts drop nothing.
    removeDropouts(model);
    if (compileToBuffers(module, options, /*memoryReportFile=*/"",
                         /*memorySVGFile=*/"",
                         error) != CompileStatus::Compiled)
      fail("cannot compile @" + name + (error.empty() ? "" : ": " + error));
  }

  compiled.rematPlan = remat;
  compiled.wavefront = schedule.wavefront;
  for (auto [kind, suffix] :
       {std::pair<const char *, const char *>{"infer", ""},
        {"train", "_grad"},
        {"fwd", "_fwd"},
        {"bwd", "_bwd"}}) {
    auto func = module.lookupSymbol<func::FuncOp>(name + suffix);
    if (!func)
      fail("internal: no @" + name + suffix + " after compiling", 1);
    EntryPlan plan = readEntryPlan(func, /*train=*/suffix[0] != 0);
    if (plan.remat)
      compiled.rematPlan = *plan.remat;
    if (plan.sequentialLayers)
      compiled.wavefront = false;
    compiled.entries[kind] = describeEntry(func, plan);
  }
}

/// The target's code, as an LLVM module.
static std::unique_ptr<llvm::Module>
compileToLLVM(MLIRContext &context, const mlir::rnn::PipelineOptions &options,
              Compilation &compiled, llvm::LLVMContext &llvmContext) {
  const std::string &name = compiled.name;
  {
    std::string error;
    PassManager pm(&context);
    mlir::rnn::buildTargetStage(pm, options);
    if (failed(runPipeline(pm, *compiled.module, error)))
      fail("cannot lower @" + name + " to LLVM" +
               (error.empty() ? "" : ": " + error),
           1);
  }

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*compiled.module, llvmContext, "rnnc_model");
  if (!llvmModule)
    fail("cannot translate @" + name + " to LLVM IR", 1);
  return llvmModule;
}

/// The states of `cellName`, the dialect's names (`h` first), or none for
/// a model of mixed cells.
static llvm::json::Array cellStates(ModuleOp module, StringRef cellName) {
  llvm::json::Array states;
  if (auto cell = mlir::rnn::lookupCell(module.getContext(), cellName))
    for (StringRef state : cell.getStateNames())
      states.push_back(state);
  return states;
}

/// The library and its manifest in the output directory, each whole or
/// not at all.
static void writeLibrary(llvm::Module &llvmModule,
                         const mlir::rnn::PipelineOptions &options,
                         Compilation &compiled) {
  const ModelShape &shape = compiled.shape;
  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    fail("cannot create " + outputDir + ": " + ec.message());
  // The scratch directory's name must be absolute: LLVM makes a relative
  // one relative to the system's temporary directory.
  llvm::SmallString<128> prefix(outputDir.getValue() + "/.rnn-compile");
  llvm::SmallString<128> scratch;
  if (std::error_code ec = llvm::sys::fs::make_absolute(prefix))
    fail("cannot write in " + outputDir + ": " + ec.message());
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory(prefix, scratch))
    fail("cannot write in " + outputDir + ": " + ec.message());
  scratchDirectory = scratch.str().str();
  struct RemoveScratch {
    ~RemoveScratch() {
      llvm::sys::fs::remove_directories(scratchDirectory);
      scratchDirectory.clear();
    }
  } removeScratch;
  // What the library exports besides its entry points.
  llvm::json::Object functions;
  if (target == "cuda") {
    functions["last_error"] = "rnnc_last_error";
    functions["set_device"] = "rnnc_set_device";
    functions["set_graph_replay"] = "rnnc_set_graph_replay";
  }
  llvm::json::Object manifest{
      {"abi_version", 1},
      {"library", "librnnc_model.so"},
      {"model", compiled.name},
      {"cell", compiled.cellName},
      {"states", cellStates(*compiled.module, compiled.cellName)},
      {"target", target},
      {"remat", remat},
      {"remat_plan", compiled.rematPlan},
      {"gemm_rows", options.getGemmRows()},
      {"wavefront", compiled.wavefront},
      {"functions", std::move(functions)},
      {"shape", llvm::json::Object{{"T", shape.seqLen},
                                   {"B", shape.batch},
                                   {"I", shape.inputSize},
                                   {"H", shape.hiddenSize},
                                   {"L", shape.layers}}},
      {"entries", std::move(compiled.entries)}};
  if (target == "cuda")
    manifest["cuda"] =
        llvm::json::Object{{"chip", chip.getValue()},
                           {"ptx_features", options.features.getValue()}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  std::string object = (scratch + "/model.o").str();
  emitObject(llvmModule, object);
  std::string library = (scratch + "/librnnc_model.so").str();
  // The built-in linker resets every command-line option to its default:
  // what follows the link reads none.
  std::string directory = outputDir;
  link(object, library, scratch);
  std::string finalLibrary = directory + "/librnnc_model.so";
  if (std::error_code ec = llvm::sys::fs::rename(library, finalLibrary))
    fail("cannot write " + finalLibrary + ": " + ec.message());
  writeAtomically(directory + "/manifest.json", text);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  parseCommandLine(argc, argv);
  DialectRegistry registry;
  mlir::rnn::registerAllDialects(registry);
  // The pipelines by name: rnn-rematerialize runs its predict-pipeline.
  mlir::rnn::registerPipelines();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  checkFlags(context);
  mlir::rnn::PipelineOptions options;
  selectPipelineOptions(options);
  Compilation compiled;
  loadModel(context, compiled);
  compileEntryPoints(context, options, compiled);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      compileToLLVM(context, options, compiled, llvmContext);
  writeLibrary(*llvmModule, options, compiled);
  return 0;
}
