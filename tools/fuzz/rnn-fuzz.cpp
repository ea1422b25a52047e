//===- rnn-fuzz.cpp - libFuzzer target over the rnn parser and pipelines --===//
//
// Each input is MLIR text. It is parsed and verified with every dialect the
// rnn pipelines use; an input the verifier accepts then goes through
// pipelines of kPipelines (cpu and cuda, train and infer, several remat
// policies, the C-ABI library build, and the memory passes on their own),
// each on a fresh copy: kPerInput of them chosen by a hash of the input (so
// that an input always takes the same ones, and a minute of fuzzing is not
// spent compiling each seed for every target), or all of them with
// RNN_FUZZ_ALL_PIPELINES=1. An input may be rejected with an error that
// names a rule of the user's IR. A finding is a crash, a sanitizer report
// (the fuzzing build has UBSan), an out-of-memory, a timeout, or an error
// that speaks of the compiler's internals (isInternal: the IR a pass
// produced failed to verify or to legalize, an LLVM/GPU op's error, an
// upstream precondition message, an empty message, a pipeline that fails
// without a message): the target prints it and aborts, so that libFuzzer
// keeps the input.
//
// tools/fuzz/fuzz-mlir.py is the same oracle around rnn-opt with fixed
// text mutations; this target lets libFuzzer's coverage feedback steer the
// mutations through the project's code (see tools/fuzz/run-libfuzzer.sh).
//
//===----------------------------------------------------------------------===//

#include "rnn/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdlib>
#include <iterator>
#include <numeric>

namespace mlir {
namespace rnn {
/// Test-only passes (test/lib).
void registerTestPasses();
} // namespace rnn
} // namespace mlir

using namespace mlir;

/// The pipelines every verified input goes through, as rnn-opt's
/// --pass-pipeline takes them within builtin.module(...).
static const char *const kPipelines[] = {
    "rnn-train-pipeline",
    "rnn-train-pipeline{remat=gates}",
    "rnn-train-pipeline{remat=chunk:2}",
    "rnn-train-pipeline{remat=budget:4096}",
    "rnn-infer-pipeline",
    "rnn-train-pipeline{target=cuda}",
    "rnn-train-pipeline{target=cuda remat=chunk:3}",
    "rnn-infer-pipeline{target=cuda}",
    "rnn-train-pipeline{out-params=1 split=1 arena=1 c-abi=1}",
    "rnn-train-pipeline{target=cuda out-params=1 split=1 arena=1 c-abi=1}",
    "rnn-plan-memory",
    "rnn-split-training",
    "rnn-emit-c-abi",
    "func.func(rnn-early-free)",
    "func.func(rnn-dse)",
    "rnn-place-in-arena",
    "rnn-autodiff",
    "convert-rnn-to-loops",
};

/// Pipelines per input (see the file comment), kStride apart in kPipelines
/// (whose neighbours are alike).
static constexpr size_t kPerInput = 3, kStride = 5;
static_assert(std::gcd(std::size(kPipelines), kStride) == 1,
              "kStride must reach every pipeline");

/// Error messages that speak of the compiler rather than of the input (the
/// input verified, so a pass made the IR they are about).
static bool isInternal(llvm::StringRef message) {
  static const llvm::Regex patterns[] = {
      llvm::Regex("failed to legalize"),
      llvm::Regex("failed to verify"),
      llvm::Regex("^'(llvm|gpu|nvvm)\\."),
      llvm::Regex("out-of-bounds"),
      llvm::Regex("^[[:space:]]*$"),
      llvm::Regex("memory free side-effect"),
      llvm::Regex("unknown memory side effects|Only structured control-flow "
                  "loops|operations with attached regions need to|"
                  "NoTerminator trait|Terminators (must implement|with more "
                  "than one successor)"),
      llvm::Regex("'func\\.call' op (incorrect number of (operands|results) "
                  "for callee|(operand|result) type mismatch|'[^']+' does "
                  "not reference a valid)"),
  };
  for (const llvm::Regex &pattern : patterns)
    if (pattern.match(message))
      return true;
  return false;
}

[[noreturn]] static void finding(llvm::StringRef pipeline,
                                 llvm::StringRef message) {
  llvm::errs() << "rnn-fuzz: internal error from " << pipeline << ": "
               << message << "\n";
  llvm::errs().flush();
  std::abort();
}

static DialectRegistry &registry() {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry;
    rnn::registerAllDialects(*r);
    return r;
  }();
  return *registry;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  rnn::registerAllPasses();
  rnn::registerTestPasses();
  (void)registry();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics are collected, not printed: a rejected input is the normal
  // case.
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      errors.push_back(d.str());
    return success();
  });
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  if (!module)
    return 0;

  static const bool all = std::getenv("RNN_FUZZ_ALL_PIPELINES") != nullptr;
  size_t numPipelines = std::size(kPipelines);
  size_t first = llvm::xxh3_64bits(text) % numPipelines;
  for (size_t i = 0; i < (all ? numPipelines : kPerInput); ++i) {
    const char *pipeline = kPipelines[(first + i * kStride) % numPipelines];
    errors.clear();
    OwningOpRef<ModuleOp> copy = module->clone();
    PassManager pm(&context);
    std::string parseError;
    llvm::raw_string_ostream os(parseError);
    if (failed(parsePassPipeline(pipeline, pm, os))) {
      llvm::errs() << "rnn-fuzz: bad pipeline " << pipeline << ": "
                   << parseError << "\n";
      std::abort();
    }
    if (succeeded(pm.run(*copy)))
      continue;
    if (errors.empty())
      finding(pipeline, "the pipeline failed without an error message");
    for (const std::string &error : errors)
      if (isInternal(llvm::StringRef(error).split('\n').first))
        finding(pipeline, error);
  }
  return 0;
}
