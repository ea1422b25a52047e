//===- rnn-npz-compare.cpp - Compare two .npz files elementwise -----------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Usage: rnn-npz-compare OUT.npz REF.npz [--rtol=1e-4] [--arrays=a,b,c]
//                        [--quiet]
//
// Checks every array of REF.npz (or only those named by --arrays) against the
// array of the same name in OUT.npz. The shapes must be equal; values are
// compared as doubles whatever their dtypes, and an element passes iff
//   |out - ref| <= rtol * (1 + |ref|).
// One line is printed per array (with --quiet, only for failing arrays).
//
// Exit status: 0 if every array passes, 1 if any array fails or is missing,
// 2 for bad usage, an unreadable file or a REF.npz of no arrays.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/Npz.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace llvm;
using namespace rnn::npz;

static cl::OptionCategory compareCategory("rnn-npz-compare options");

static cl::opt<std::string> outPath(cl::Positional, cl::Required,
                                    cl::desc("<out.npz>"),
                                    cl::cat(compareCategory));
static cl::opt<std::string> refPath(cl::Positional, cl::Required,
                                    cl::desc("<ref.npz>"),
                                    cl::cat(compareCategory));
static cl::opt<double>
    rtol("rtol", cl::init(1e-4),
         cl::desc("Tolerance: pass iff |out - ref| <= rtol * (1 + |ref|)"),
         cl::cat(compareCategory));
static cl::list<std::string>
    arrayNames("arrays", cl::CommaSeparated,
               cl::desc("Compare only these arrays (comma-separated)"),
               cl::cat(compareCategory));
static cl::opt<bool> quiet("quiet", cl::desc("Print only the arrays that fail"),
                           cl::cat(compareCategory));

static constexpr const char *toolName = "rnn-npz-compare";

static int usageError(const Twine &message) {
  WithColor::error(errs(), toolName) << message << "\n";
  return 2;
}

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(compareCategory);
  std::string parseErrors;
  raw_string_ostream parseErrorStream(parseErrors);
  if (!cl::ParseCommandLineOptions(
          argc, argv, "Compare the arrays of two .npz files elementwise\n",
          &parseErrorStream)) {
    // Some parse errors go straight to errs(); the captured ones already
    // carry the tool name. Keep the first line only (drop "See --help" hints).
    StringRef message = StringRef(parseErrors).trim();
    if (!message.empty())
      errs() << message.split('\n').first.rtrim() << "\n";
    return 2;
  }
  if (!(rtol >= 0.0) || std::isinf(rtol))
    return usageError("--rtol must be a finite non-negative number");

  Expected<ArrayMap> out = readNpz(outPath);
  if (!out)
    return usageError(toString(out.takeError()));
  Expected<ArrayMap> ref = readNpz(refPath);
  if (!ref)
    return usageError(toString(ref.takeError()));

  // Nothing compared would pass whatever OUT.npz holds.
  if (ref->empty() && arrayNames.empty())
    return usageError(refPath.getValue() + " holds no arrays: nothing to "
                                           "compare");
  std::vector<std::string> names;
  if (arrayNames.empty()) {
    for (const auto &kv : *ref)
      names.push_back(kv.first);
  } else {
    names.assign(arrayNames.begin(), arrayNames.end());
  }

  raw_ostream &os = outs();
  bool allPassed = true;
  for (const std::string &name : names) {
    auto refIt = ref->find(name);
    if (refIt == ref->end()) {
      allPassed = false;
      os << name << "  missing in " << refPath << "  FAIL\n";
      continue;
    }
    auto outIt = out->find(name);
    if (outIt == out->end()) {
      allPassed = false;
      os << name << "  " << refIt->second.shapeString() << "  missing in "
         << outPath << "  FAIL\n";
      continue;
    }
    const Array &outArray = outIt->second;
    const Array &refArray = refIt->second;
    CompareResult result = compareArrays(outArray, refArray, rtol);
    allPassed &= result.passed;
    if (quiet && result.passed)
      continue;
    os << name << "  " << refArray.shapeString();
    if (result.shapeMismatch) {
      os << "  shape mismatch: out has " << outArray.shapeString()
         << "  FAIL\n";
      continue;
    }
    os << "  max_abs_err=" << format("%.3e", result.maxAbsError)
       << "  max_scaled_err=" << format("%.3e", result.maxScaledError);
    if (result.passed) {
      os << "  PASS\n";
      continue;
    }
    os << "  FAIL  worst at " << formatIndex(refArray.shape, result.worstIndex)
       << ": out=" << format("%.9g", outArray.getAsDouble(result.worstIndex))
       << " ref=" << format("%.9g", refArray.getAsDouble(result.worstIndex))
       << "\n";
  }
  os.flush();
  return allPassed ? 0 : 1;
}
