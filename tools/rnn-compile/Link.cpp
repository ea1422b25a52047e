//===- Link.cpp - a compiled model's object and shared library ------------===//
//
// Implements Link.h.
//
//===----------------------------------------------------------------------===//

#include "Link.h"

#include "rnn/Driver/Compile.h"

#include "lld/Common/Driver.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/AlwaysInliner.h"
#include "llvm/Transforms/IPO/GlobalDCE.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <dlfcn.h>
#include <link.h>

LLD_HAS_DRIVER(elf)

using namespace ::rnn::compile;

static llvm::Error refuse(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The target machine of this host that rnn-compile compiles for.
static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine() {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return refuse("cannot target this machine: " +
                  llvm::toString(builder.takeError()));
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return refuse("cannot target this machine: " +
                  llvm::toString(machine.takeError()));
  return std::move(*machine);
}

/// `module` optimized (O3) and compiled by `machine` into an object file's
/// bytes.
static llvm::Expected<llvm::SmallVector<char, 0>>
compileModule(llvm::Module &module, llvm::TargetMachine &machine) {
  auto optimize = mlir::makeOptimizingTransformer(
      /*optLevel=*/3, /*sizeLevel=*/0, &machine);
  if (llvm::Error error = optimize(&module))
    return refuse("cannot optimize the program: " +
                  llvm::toString(std::move(error)));
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return refuse("this machine's target cannot emit object files");
  pm.run(module);
  return std::move(object);
}

/// Inlines the functions inlineIntoEntryPoints marked into their entry
/// points and drops them, so that what is left, entry points and the
/// functions more than one of them call, can be compiled apart.
static void inlineMarked(llvm::Module &module) {
  llvm::PassBuilder builder;
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager pm;
  pm.addPass(llvm::AlwaysInlinerPass(/*InsertLifetimeIntrinsics=*/false));
  pm.addPass(llvm::GlobalDCEPass());
  pm.run(module, modules);
}

/// Calls `take` with each of `parts` modules that together define what
/// `module` does: each function in one of them, the largest first into
/// the part of the fewest instructions so far, and the global variables
/// in the first. Local symbols become hidden global ones, so that the
/// parts can refer to each other's. (Upstream's SplitModule assigns the
/// functions by a hash of their names or by count, not by size.)
static void splitModule(
    llvm::Module &module, unsigned parts,
    llvm::function_ref<void(std::unique_ptr<llvm::Module>)> take) {
  for (llvm::GlobalValue &value : module.global_values()) {
    if (value.hasLocalLinkage()) {
      value.setLinkage(llvm::GlobalValue::ExternalLinkage);
      value.setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
    if (!value.hasName())
      value.setName("__rnnc_unnamed");
  }
  llvm::SmallVector<std::pair<unsigned, llvm::Function *>> functions;
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      functions.push_back({function.getInstructionCount(), &function});
  llvm::stable_sort(functions, [](const auto &a, const auto &b) {
    return a.first > b.first;
  });
  llvm::DenseMap<const llvm::GlobalValue *, unsigned> partOf;
  std::vector<uint64_t> load(parts, 0);
  for (auto [size, function] : functions) {
    unsigned lightest = std::min_element(load.begin(), load.end()) -
                        load.begin();
    partOf[function] = lightest;
    load[lightest] += size;
  }
  for (unsigned i = 0; i < parts; ++i) {
    llvm::ValueToValueMapTy map;
    take(llvm::CloneModule(module, map, [&](const llvm::GlobalValue *value) {
      auto it = partOf.find(value);
      return it == partOf.end() ? i == 0 : it->second == i;
    }));
  }
}

llvm::Expected<unsigned> rnn::compile::compileThreads() {
  const char *text = getenv("RNNC_COMPILE_THREADS");
  if (!text || !*text)
    return llvm::heavyweight_hardware_concurrency().compute_thread_count();
  unsigned threads = 0;
  if (llvm::StringRef(text).getAsInteger(10, threads) || threads == 0)
    return refuse(llvm::Twine("RNNC_COMPILE_THREADS=") + text +
                  ": give a positive number of threads");
  return threads;
}

llvm::Expected<std::vector<llvm::SmallVector<char, 0>>>
rnn::compile::emitObjects(llvm::Module &module) {
  auto machine = createTargetMachine();
  if (!machine)
    return machine.takeError();
  module.setDataLayout((*machine)->createDataLayout());
  module.setTargetTriple((*machine)->getTargetTriple());
  driver::inlineIntoEntryPoints(module, "rnnc_");
  driver::skipLoopStrengthReduction();
  unsigned functions = llvm::count_if(
      module, [](const llvm::Function &f) { return !f.isDeclaration(); });
  llvm::Expected<unsigned> parts = compileThreads();
  if (!parts)
    return parts.takeError();
  *parts = std::max(1u, std::min(*parts, functions));
  std::vector<llvm::SmallVector<char, 0>> objects;
  if (*parts == 1) {
    auto object = compileModule(module, **machine);
    if (!object)
      return object.takeError();
    objects.push_back(std::move(*object));
    return std::move(objects);
  }
  // Each part travels to its thread as bitcode, read into an LLVMContext of
  // the thread's own (a context is not shared between threads).
  inlineMarked(module);
  std::vector<llvm::SmallVector<char, 0>> bitcode;
  splitModule(module, *parts, [&](std::unique_ptr<llvm::Module> part) {
    llvm::SmallVector<char, 0> &bytes = bitcode.emplace_back();
    llvm::raw_svector_ostream os(bytes);
    llvm::WriteBitcodeToFile(*part, os);
  });
  objects.resize(bitcode.size());
  std::vector<std::string> errors(bitcode.size());
  {
    llvm::DefaultThreadPool pool(
        llvm::heavyweight_hardware_concurrency(bitcode.size()));
    for (size_t i = 0; i < bitcode.size(); ++i)
      pool.async([&, i] {
        llvm::LLVMContext context;
        auto part = llvm::parseBitcodeFile(
            llvm::MemoryBufferRef(
                llvm::StringRef(bitcode[i].data(), bitcode[i].size()), "part"),
            context);
        llvm::Error error = part.takeError();
        if (!error) {
          auto partMachine = createTargetMachine();
          if (!partMachine) {
            error = partMachine.takeError();
          } else {
            auto object = compileModule(**part, **partMachine);
            if (object)
              objects[i] = std::move(*object);
            else
              error = object.takeError();
          }
        }
        if (error)
          errors[i] = llvm::toString(std::move(error));
      });
    pool.wait();
  }
  for (const std::string &error : errors)
    if (!error.empty())
      return refuse(error);
  return std::move(objects);
}

/// Writes `contents` to `path`, a file in writeLibrary's scratch directory
/// (removed with it, whole or not).
static llvm::Error writeFile(llvm::StringRef path, llvm::StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return refuse("cannot write " + path + ": " + ec.message());
  os << contents;
  os.close();
  if (os.has_error())
    return refuse("cannot write " + path + ": " + os.error().message());
  return llvm::Error::success();
}

/// The type of what `path` names, not following a symbolic link (a rename
/// replaces the link itself); file_not_found where nothing.
static llvm::sys::fs::file_type typeOf(const llvm::Twine &path) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status, /*follow=*/false))
    return llvm::sys::fs::file_type::file_not_found;
  return status.type();
}

llvm::Error
rnn::compile::writeLibrary(llvm::StringRef directory,
                           llvm::ArrayRef<llvm::SmallVector<char, 0>> objects,
                           llvm::StringRef manifest, Linker &linker,
                           LinkJob job) {
  namespace fs = llvm::sys::fs;
  namespace path = llvm::sys::path;
  llvm::SmallString<128> library(directory), manifestFile(directory);
  path::append(library, "librnnc_model.so");
  path::append(manifestFile, "manifest.json");
  // What would make a rename fail, checked before anything is written: a
  // directory in a file's place; a directory that cannot be written fails
  // the scratch directory below.
  for (llvm::StringRef file : {library.str(), manifestFile.str()})
    if (typeOf(file) == fs::file_type::directory_file)
      return refuse("cannot write " + file + ": " +
                    std::make_error_code(std::errc::is_a_directory).message());
  // A directory made here goes again when the library is not written: a
  // refusal leaves nothing behind.
  bool made = !fs::exists(directory), written = false;
  if (std::error_code ec = fs::create_directories(directory))
    return refuse("cannot create " + directory + ": " + ec.message());
  llvm::scope_exit removeMade([&] {
    if (made && !written)
      fs::remove_directories(directory);
  });
  // The scratch directory's name must be absolute: LLVM makes a relative
  // one relative to the system's temporary directory.
  llvm::SmallString<128> prefix(directory);
  path::append(prefix, ".rnn-compile");
  llvm::SmallString<128> scratch;
  if (std::error_code ec = fs::make_absolute(prefix))
    return refuse("cannot write in " + directory + ": " + ec.message());
  if (std::error_code ec = fs::createUniqueDirectory(prefix, scratch))
    return refuse("cannot write in " + directory + ": " + ec.message());
  llvm::scope_exit removeScratch([&] { fs::remove_directories(scratch); });
  job.scratch = scratch.str().str();
  for (auto [i, object] : llvm::enumerate(objects)) {
    job.objects.push_back(job.scratch + "/model" + std::to_string(i) + ".o");
    if (llvm::Error error = writeFile(
            job.objects.back(), llvm::StringRef(object.data(), object.size())))
      return error;
  }
  job.library = job.scratch + "/librnnc_model.so";
  job.exports = job.scratch + "/exports.map";
  if (llvm::Error error =
          writeFile(job.exports, "{ global: rnnc_*; local: *; };\n"))
    return error;
  std::string newManifest = job.scratch + "/manifest.json";
  if (llvm::Error error = writeFile(newManifest, manifest))
    return error;
  if (llvm::Error error = linker.link(job))
    return error;

  // Both files are whole; two renames put them in place. The old manifest
  // leaves first, so that at no moment does the new library sit beside it,
  // and the old library is kept (a hard link) until the new manifest is in:
  // a rename that fails after the checks above (another process, the disk)
  // puts the old pair back.
  std::string oldManifest = job.scratch + "/old-manifest.json",
              oldLibrary = job.scratch + "/old-librnnc_model.so";
  bool hadManifest = typeOf(manifestFile) != fs::file_type::file_not_found,
       hadLibrary = typeOf(library) != fs::file_type::file_not_found;
  if (hadManifest)
    if (std::error_code ec = fs::rename(manifestFile, oldManifest))
      return refuse("cannot replace " + manifestFile + ": " + ec.message());
  bool keptLibrary = hadLibrary && !fs::create_hard_link(library, oldLibrary);
  if (std::error_code ec = fs::rename(job.library, library)) {
    if (hadManifest)
      (void)fs::rename(oldManifest, manifestFile);
    return refuse("cannot write " + library + ": " + ec.message());
  }
  if (std::error_code ec = fs::rename(newManifest, manifestFile)) {
    // The old library back, or none (its manifest then goes with it).
    if (keptLibrary)
      (void)fs::rename(oldLibrary, library);
    else
      (void)fs::remove(library);
    if (hadManifest && (keptLibrary || !hadLibrary))
      (void)fs::rename(oldManifest, manifestFile);
    return refuse("cannot write " + manifestFile + ": " + ec.message());
  }
  written = true;
  return llvm::Error::success();
}

namespace {
/// Links with a C++ compiler driver.
class DriverLinker : public Linker {
public:
  explicit DriverLinker(std::string driver) : driver(std::move(driver)) {}

  llvm::Error link(const LinkJob &job) override {
    auto program = llvm::sys::findProgramByName(driver);
    if (!program || !llvm::sys::fs::can_execute(*program))
      return refuse("no C++ compiler driver '" + driver +
                    "' to link the library (--linker)");
    std::string log = job.scratch + "/link.log";
    std::string versionScript = "-Wl,--version-script=" + job.exports;
    llvm::SmallVector<llvm::StringRef> args = {*program, "-shared", "-o",
                                               job.library};
    args.append(job.objects.begin(), job.objects.end());
    args.append(job.archives.begin(), job.archives.end());
    // Static C++ runtime: the library loads next to any libstdc++
    // (PyTorch's, an older system's).
    args.append({"-static-libstdc++", "-static-libgcc"});
    // The CPU's GEMMs; a cuda library calls cuBLAS, loaded at run time.
    if (job.blas)
      args.push_back("-lopenblas");
    args.append(
        {"-lpthread", "-ldl", "-lm", "-Wl,--no-undefined", versionScript});
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
    std::string message;
    int rc = llvm::sys::ExecuteAndWait(*program, args, std::nullopt, redirects,
                                       0, 0, &message);
    if (rc == 0)
      return llvm::Error::success();
    auto text = llvm::MemoryBuffer::getFile(log);
    std::string first =
        text ? (*text)->getBuffer().split('\n').first.str() : message;
    if (first.empty())
      first = driver + " exited " + std::to_string(rc);
    return refuse("linking the library failed: " + first);
  }

private:
  std::string driver;
};

/// The files of the link kit, in link order around the program: C runtime
/// objects first, then the static C++ and C runtimes, then the objects
/// that end the library.
constexpr const char *kKitFirst[] = {"crti.o", "crtbeginS.o", "shims.o"};
constexpr const char *kKitArchives[] = {"libstdc++.a", "libgcc.a",
                                        "libgcc_eh.a", "libc_nonshared.a"};
constexpr const char *kKitLast[] = {"crtendS.o", "crtn.o"};
/// The kit's BLAS: a library for the cpu target calls it.
constexpr const char *kKitBlas = "libopenblas.so.0";

/// The path of the glibc library `soname` this process has loaded (or can
/// load): the built-in linker links against the C library the process runs
/// on, so a library compiled here loads here.
std::optional<std::string> loadedLibrary(const char *soname) {
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

/// Links with LLD in this process; the link line is the driver's.
class LLDLinker : public Linker {
public:
  explicit LLDLinker(std::string kit) : kit(std::move(kit)) {}

  llvm::Error link(const LinkJob &job) override {
    // Every string the argument list points into.
    std::vector<std::string> strings;
    for (const char *name : kKitFirst)
      if (llvm::Error error = addFromKit(name, strings))
        return error;
    strings.insert(strings.end(), job.objects.begin(), job.objects.end());
    strings.insert(strings.end(), job.archives.begin(), job.archives.end());
    if (job.blas)
      if (llvm::Error error = addFromKit(kKitBlas, strings))
        return error;
    strings.push_back("--start-group");
    for (const char *name : kKitArchives)
      if (llvm::Error error = addFromKit(name, strings))
        return error;
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
        return refuse(llvm::Twine("cannot find this system's ") + soname +
                      " to link the library against");
    }
    strings.push_back("--end-group");
    for (const char *name : kKitLast)
      if (llvm::Error error = addFromKit(name, strings))
        return error;

    std::string versionScript = "--version-script=" + job.exports;
    std::vector<const char *> args = {
        "ld.lld",   "--build-id",    "--eh-frame-hdr",
        "-m",       "elf_x86_64",    "--hash-style=gnu",
        "--as-needed", "-shared",    "-z",
        "relro",    "-z",            "now",
        "--no-undefined", versionScript.c_str(), "-o",
        job.library.c_str()};
    for (const std::string &s : strings)
      args.push_back(s.c_str());

    std::string diagnostics;
    llvm::raw_string_ostream errs(diagnostics);
    lld::Result result =
        lld::lldMain(args, llvm::nulls(), errs, {{lld::Gnu, &lld::elf::link}});
    if (result.retCode == 0)
      return llvm::Error::success();
    llvm::StringRef first = llvm::StringRef(diagnostics).split('\n').first;
    first.consume_front("ld.lld: ");
    return refuse("linking the library failed: " +
                  (first.empty() ? "ld.lld exited with " +
                                       std::to_string(result.retCode)
                                 : first.str()));
  }

private:
  /// Appends the kit's file `name`; an error if the kit has none.
  llvm::Error addFromKit(llvm::StringRef name,
                         std::vector<std::string> &strings) const {
    llvm::SmallString<256> path(kit);
    llvm::sys::path::append(path, name);
    if (!llvm::sys::fs::exists(path))
      return refuse("the link kit " + kit + " has no " + name +
                    " (give --link-kit or $RNNC_LINK_KIT, or --linker=c++)");
    strings.push_back(path.str().str());
    return llvm::Error::success();
  }

  std::string kit;
};
} // namespace

namespace cl = llvm::cl;

LinkFlags::LinkFlags(cl::OptionCategory &category)
    : runtimeLib("runtime-lib", cl::init(""),
                 cl::desc("The rnnc runtime archive to link (default: "
                          "$RNNC_RUNTIME_LIB, else the build's)"),
                 cl::cat(category)),
      cudaRuntimeLib(
          "cuda-runtime-lib", cl::init(""),
          cl::desc("The rnnc CUDA runtime archive to link (--target=cuda; "
                   "default: $RNNC_CUDA_RUNTIME_LIB, else the build's)"),
          cl::cat(category)),
      linker("linker", cl::init(""),
             cl::desc("C++ compiler driver that links the library instead "
                      "of the built-in linker (LLD, in process)"),
             cl::cat(category)),
      linkKit("link-kit", cl::init(""),
              cl::desc("Directory with what the built-in linker links "
                       "besides glibc (C runtime objects, static C++ "
                       "runtime, OpenBLAS) (default: $RNNC_LINK_KIT, else "
                       "the build's)"),
              cl::cat(category)) {}

/// The flag's value, else $`env`, else `built`.
static std::string flagOrEnv(const cl::opt<std::string> &flag,
                             const char *env, llvm::StringRef built) {
  if (!flag.empty())
    return flag;
  if (const char *value = std::getenv(env); value && *value)
    return value;
  return built.str();
}

std::unique_ptr<Linker> LinkFlags::createLinker() const {
  if (!linker.empty())
    return std::make_unique<DriverLinker>(linker);
  return std::make_unique<LLDLinker>(
      flagOrEnv(linkKit, "RNNC_LINK_KIT", RNN_LINK_KIT));
}

std::string LinkFlags::archive(bool cuda) const {
  return cuda ? flagOrEnv(cudaRuntimeLib, "RNNC_CUDA_RUNTIME_LIB",
                          RNN_CUDA_RUNTIME_ARCHIVE)
              : flagOrEnv(runtimeLib, "RNNC_RUNTIME_LIB", RNN_RUNTIME_ARCHIVE);
}

llvm::Expected<std::vector<std::string>> LinkFlags::archives(bool cuda) const {
  std::vector<std::string> paths;
  auto add = [&](llvm::StringRef what, const cl::opt<std::string> &flag,
                 const char *env, bool ofCUDA) -> llvm::Error {
    std::string path = archive(ofCUDA);
    if (path.empty() || !llvm::sys::fs::exists(path))
      return refuse("no " + what + " archive" +
                    (path.empty() ? "" : " at " + path) + " (give --" +
                    flag.ArgStr + " or $" + env + ")");
    paths.push_back(path);
    return llvm::Error::success();
  };
  if (cuda)
    if (llvm::Error error = add("rnnc CUDA runtime", cudaRuntimeLib,
                                "RNNC_CUDA_RUNTIME_LIB", true))
      return std::move(error);
  if (llvm::Error error =
          add("rnnc runtime", runtimeLib, "RNNC_RUNTIME_LIB", false))
    return std::move(error);
  return paths;
}
