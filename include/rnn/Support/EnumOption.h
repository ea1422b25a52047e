//===- EnumOption.h - enumerated options refused in one line ---*- C++ -*-===//
//
// The parser of an enumerated option (`cl::opt<E, false, EnumParser<E>>`
// or `PassOptions::Option<E, EnumParser<E, ...>>` with `cl::values`):
// `--help` lists the values as for any `cl::values` option, and an unknown
// value is refused in one line of the project's wording, which a tool's
// parseCommandLine takes as its message:
//
//   --target must be cpu or cuda, got 'tpu'            (a tool's flag)
//   unsupported target 'rocm' (expected cpu or cuda)   (a pipeline option)
//
// where cl::parser<E> says "for the --target option: Cannot find option
// named 'tpu'!". A pass option prints its value with the enum's
// operator<<, which must name the value as its `cl::values` entry does.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_SUPPORT_ENUMOPTION_H
#define RNN_SUPPORT_ENUMOPTION_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir {
namespace rnn {

/// "a", "a or b", "a, b or c".
inline std::string listAlternatives(llvm::ArrayRef<llvm::StringRef> names) {
  std::string text;
  for (auto [i, name] : llvm::enumerate(names)) {
    if (i > 0)
      text += i + 1 == names.size() ? " or " : ", ";
    text += name.str();
  }
  return text;
}

/// How an EnumParser words a refusal: as a tool's flag or as an option of
/// a pass pipeline.
enum class EnumWording { Flag, PipelineOption };

template <typename E, EnumWording wording = EnumWording::Flag>
class EnumParser : public llvm::cl::parser<E> {
public:
  using llvm::cl::parser<E>::parser;

  /// The value named `arg`; true, with the refusal on stderr, if none is.
  bool parse(llvm::cl::Option &option, llvm::StringRef, llvm::StringRef arg,
             E &value) {
    llvm::SmallVector<llvm::StringRef> names;
    for (const auto &known : this->Values) {
      if (known.Name == arg) {
        value = known.V.getValue();
        return false;
      }
      names.push_back(known.Name);
    }
    std::string expected = listAlternatives(names);
    if (wording == EnumWording::Flag)
      llvm::errs() << "--" << option.ArgStr << " must be " << expected
                   << ", got '" << arg << "'\n";
    else
      llvm::errs() << "unsupported " << option.ArgStr << " '" << arg
                   << "' (expected " << expected << ")\n";
    return true;
  }
};

} // namespace rnn
} // namespace mlir

#endif // RNN_SUPPORT_ENUMOPTION_H
