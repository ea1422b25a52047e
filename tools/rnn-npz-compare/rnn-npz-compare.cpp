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
// array of the same name in OUT.npz. The shapes must be equal.
//
// Float arrays (float32 or float64, which may differ between OUT and REF:
// rnn-run writes float32 where the references hold float64) are compared as
// doubles, and an element passes iff
//   |out - ref| <= rtol * (1 + |ref|),
// except that a NaN passes only against a NaN and an infinity only against an
// infinity of the same sign, whatever rtol.
//
// Every other array (bool and the integer types: the dropout rng state
// [seed, offset] is int64) is compared exactly in its own type, whatever
// rtol: going through double would make 2^62 + 1 equal 2^62. OUT and REF must
// then have the same dtype; a float against an integer, or int32 against
// int64, fails naming both.
//
// One line is printed per array (with --quiet, only for failing arrays).
//
// Exit status: 0 if every array passes, 1 if any array fails or is missing,
// 2 for bad usage (an empty or repeated name in --arrays among others), an
// unreadable file or a REF.npz of no arrays.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/Npz.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <set>

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

/// Whether \p dtype is compared within --rtol; bool and the integer types are
/// compared exactly.
static bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64;
}

/// Formats element \p index of \p array in its own type, so an int64 beyond
/// 2^53 prints in full and not rounded to a double.
static std::string formatElement(const Array &array, int64_t index) {
  const char *p =
      array.data.data() + static_cast<size_t>(index) * array.elementSize();
  // A bool byte other than 0 reads as true, as in Array::getAsDouble.
  if (array.dtype == DType::Bool)
    return *p ? "true" : "false";
  if (isFloat(array.dtype)) {
    std::string text;
    raw_string_ostream(text) << format("%.9g", array.getAsDouble(index));
    return text;
  }
  switch (array.dtype) {
#define RNN_NPZ_FORMAT_ELEMENT(e, type, name, kind, size)                      \
  case DType::e: {                                                             \
    type value;                                                                \
    std::memcpy(&value, p, sizeof(value));                                     \
    return std::to_string(+value);                                             \
  }
    RNN_NPZ_DTYPES(RNN_NPZ_FORMAT_ELEMENT)
#undef RNN_NPZ_FORMAT_ELEMENT
  }
  llvm_unreachable("unknown DType");
}

namespace {
/// The result of comparing two arrays of one non-float dtype exactly.
struct ExactResult {
  int64_t numDiffering = 0;
  /// Flat (C-order) index of the first differing element, or -1.
  int64_t firstDiffering = -1;
};
} // namespace

/// Compares \p out and \p ref, of equal shapes and one dtype, element by
/// element in that dtype (bools by truth, as NumPy's astype reads them).
static ExactResult compareExactly(const Array &out, const Array &ref) {
  ExactResult result;
  size_t size = ref.elementSize();
  for (int64_t i = 0, e = ref.numElements(); i != e; ++i) {
    const char *o = out.data.data() + static_cast<size_t>(i) * size;
    const char *r = ref.data.data() + static_cast<size_t>(i) * size;
    bool equal = ref.dtype == DType::Bool ? (*o != 0) == (*r != 0)
                                          : std::memcmp(o, r, size) == 0;
    if (equal)
      continue;
    if (result.numDiffering++ == 0)
      result.firstDiffering = i;
  }
  return result;
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
  // A name compared twice, or an empty one (`--arrays=`, `--arrays=a,,b`), is
  // a mistake in the command line, not an array that fails.
  if (arrayNames.getNumOccurrences()) {
    if (llvm::all_of(arrayNames,
                     [](const std::string &n) { return n.empty(); }))
      return usageError("--arrays lists no arrays");
    std::set<StringRef> seen;
    for (const std::string &name : arrayNames) {
      if (name.empty())
        return usageError("--arrays lists an empty name");
      if (!seen.insert(name).second)
        return usageError("--arrays lists '" + name + "' twice");
    }
  }
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
    if (outArray.dtype != refArray.dtype &&
        !(isFloat(outArray.dtype) && isFloat(refArray.dtype))) {
      allPassed = false;
      os << name << "  " << refArray.shapeString()
         << "  dtype mismatch: out is " << dtypeName(outArray.dtype)
         << ", ref is " << dtypeName(refArray.dtype) << "  FAIL\n";
      continue;
    }
    if (!isFloat(refArray.dtype) && outArray.shape == refArray.shape) {
      ExactResult result = compareExactly(outArray, refArray);
      bool passed = result.numDiffering == 0;
      allPassed &= passed;
      if (quiet && passed)
        continue;
      os << name << "  " << refArray.shapeString() << "  "
         << dtypeName(refArray.dtype) << " exact: " << result.numDiffering
         << " of " << refArray.numElements() << " differ";
      if (passed) {
        os << "  PASS\n";
        continue;
      }
      os << "  FAIL  first at "
         << formatIndex(refArray.shape, result.firstDiffering)
         << ": out=" << formatElement(outArray, result.firstDiffering)
         << " ref=" << formatElement(refArray, result.firstDiffering) << "\n";
      continue;
    }
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
       << ": out=" << formatElement(outArray, result.worstIndex)
       << " ref=" << formatElement(refArray, result.worstIndex) << "\n";
  }
  os.flush();
  return allPassed ? 0 : 1;
}
