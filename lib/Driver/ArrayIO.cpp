//===- ArrayIO.cpp - a compiled function's arrays as npz ------------------===//
//
// Implements ArrayIO.h.
//
//===----------------------------------------------------------------------===//

#include "rnn/Driver/ArrayIO.h"

#include "rnn/Dialect/RNNRoles.h"

#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

using namespace mlir;
using mlir::rnn::kGradPrefix;

namespace rnn {
namespace driver {

static llvm::Error refuse(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::vector<int64_t> arrayShape(const NamedTensor &t) {
  std::vector<int64_t> shape = t.shape;
  if (t.stacked)
    shape.insert(shape.begin(), t.stacked);
  return shape;
}

bool isInitialState(const NamedTensor &arg) {
  return arg.layer >= 0 &&
         llvm::StringRef(arg.name).ends_with(mlir::rnn::kInitialStateSuffix);
}

/// Whether the step reads `arg`: inference reads no cotangent.
static bool isRead(const NamedTensor &arg, bool train) {
  return train || !llvm::StringRef(arg.name).starts_with(kGradPrefix);
}

std::string missingArraysMessage(llvm::StringRef source,
                                 llvm::ArrayRef<std::string> names) {
  std::string message = (source + ": missing array").str();
  if (names.size() > 1)
    message += "s";
  for (auto [i, name] : llvm::enumerate(names))
    message += (i ? ", '" : " '") + name + "'";
  return message;
}

llvm::Error checkInputArrays(const npz::ArrayMap &inputs,
                             const Signature &signature, bool train,
                             llvm::StringRef source, bool resetHint) {
  llvm::StringSet<> known;
  std::vector<std::string> missing;
  for (const NamedTensor &arg : signature.args) {
    // A stacked array is one argument per layer: it is named once.
    if (!known.insert(arg.array).second)
      continue;
    if (isRead(arg, train) && !inputs.count(arg.array) &&
        !isInitialState(arg))
      missing.push_back(arg.array);
  }
  if (!missing.empty())
    return refuse(missingArraysMessage(source, missing));
  for (const NamedTensor &result : signature.results)
    known.insert((kGradPrefix + result.array).str());
  for (const auto &[name, array] : inputs) {
    if (known.contains(name))
      continue;
    std::string names;
    for (const NamedTensor &arg : signature.args)
      if (isRead(arg, train) &&
          names.find("'" + arg.array + "'") == std::string::npos)
        names += (names.empty() ? "'" : ", '") + arg.array + "'";
    bool resetState =
        resetHint && llvm::StringRef(name).ends_with(
                         mlir::rnn::kResetStateSuffix);
    return refuse(source + ": array '" + name +
                  "' is not an input of the model (inputs: " + names + ")" +
                  (resetState ? "; a reset state needs --reset-to=step or "
                                "column"
                              : ""));
  }
  return llvm::Error::success();
}

llvm::Error readArgument(const NamedTensor &arg, const npz::Array &array,
                         llvm::StringRef source, bool presetHint,
                         std::vector<char> &bytes) {
  std::vector<int64_t> want = arrayShape(arg);
  if (array.shape != want)
    return refuse(source + ": array '" + arg.array + "' has shape " +
                  array.shapeString() + ", expected " +
                  npz::formatShape(want));
  int64_t n = arg.numElements();
  int64_t offset = arg.stacked ? arg.layer * n : 0;
  if (arg.dtype == npz::DType::Bool) {
    if (array.dtype != npz::DType::Bool && array.dtype != npz::DType::U8)
      return refuse(source + ": array '" + arg.array + "' has dtype " +
                    npz::dtypeName(array.dtype) + ", expected bool or uint8");
    bytes.resize(n);
    for (int64_t i = 0; i < n; ++i)
      bytes[i] = array.data[offset + i] != 0;
    return llvm::Error::success();
  }
  npz::DType element = arg.dtype;
  bool sameBits = element == npz::DType::I64 && array.dtype == npz::DType::U64;
  if (array.dtype != element && !sameBits) {
    std::string hint =
        arg.isFloat()
            ? std::string(" (the model's element type") +
                  (presetHint ? "; --dtype=f32|f64 sets a preset's" : "") + ")"
            : std::string(" or uint64");
    return refuse(source + ": array '" + arg.array + "' has dtype " +
                  npz::dtypeName(array.dtype) + ", expected " +
                  npz::dtypeName(element) + hint);
  }
  int64_t size = arg.elementBytes();
  bytes.assign(array.data.begin() + offset * size,
               array.data.begin() + (offset + n) * size);
  return llvm::Error::success();
}

/// The stream of `arg`'s values: it depends on the seed, the name and the
/// layer.
static std::mt19937_64 streamOf(const NamedTensor &arg, uint64_t seed) {
  uint64_t h = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (char c : arg.name)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  h ^= static_cast<uint64_t>(arg.layer + 1) * 0xBF58476D1CE4E5B9ull;
  return std::mt19937_64(h);
}

llvm::Error generateArgument(const NamedTensor &arg, const Generator &gen,
                             std::vector<char> &bytes) {
  std::mt19937_64 stream = streamOf(arg, gen.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int64_t n = arg.numElements();
  if (arg.dtype == npz::DType::I64) {
    if (arg.name != mlir::rnn::kRoleRng || n != 2)
      return refuse("cannot generate the i64 argument '" + arg.name +
                    "' (only a dropout's rng, [seed, offset]); give it in "
                    "--inputs");
    int64_t words[2] = {static_cast<int64_t>(gen.seed), 0};
    bytes.assign(reinterpret_cast<char *>(words),
                 reinterpret_cast<char *>(words) + sizeof(words));
    return llvm::Error::success();
  }
  if (arg.dtype == npz::DType::Bool) {
    bytes.resize(n);
    for (int64_t i = 0; i < n; ++i)
      bytes[i] = unit(stream) < gen.resetProb ? 1 : 0;
    return llvm::Error::success();
  }
  double bound = 1.0;
  if (mlir::rnn::bufferRole(arg.name) == mlir::rnn::BufferRole::Parameter)
    bound = 1.0 / std::sqrt(static_cast<double>(gen.hiddenSize));
  else if (isInitialState(arg))
    bound = 0.5;
  bytes.resize(n * arg.elementBytes());
  for (int64_t i = 0; i < n; ++i) {
    double value = (2.0 * unit(stream) - 1.0) * bound;
    if (arg.dtype == npz::DType::F64)
      reinterpret_cast<double *>(bytes.data())[i] = value;
    else
      reinterpret_cast<float *>(bytes.data())[i] = static_cast<float>(value);
  }
  return llvm::Error::success();
}

std::vector<npz::Array>
gatherResults(const Signature &signature,
              const std::vector<std::vector<char>> &values) {
  std::vector<npz::Array> arrays;
  std::map<std::string, size_t> index;
  for (auto [i, r] : llvm::enumerate(signature.results)) {
    auto [it, inserted] = index.try_emplace(r.array, arrays.size());
    if (inserted)
      arrays.push_back(npz::Array::zeros(r.array, r.dtype, arrayShape(r)));
    int64_t offset = r.stacked ? r.layer * r.bytes() : 0;
    std::copy(values[i].begin(), values[i].end(),
              arrays[it->second].data.begin() + offset);
  }
  return arrays;
}

} // namespace driver
} // namespace rnn
