//===- Npz.cpp - NumPy .npz arrays ----------------------------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements rnn/Support/Npz.h: the arrays and their comparison here, the
// reader in NpzReader.cpp, the writer in NpzWriter.cpp.
//
// An .npz file is a zip archive whose members are .npy files. libzip reads
// and writes the container (the central directory, zip64, deflate, CRC-32,
// the local headers checked against the directory, a temporary file renamed
// into place on close); this file parses and writes the .npy member, whose
// header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// and bounds every size taken from the file before it allocates.
//
// The writer emits stored (uncompressed) members with .npy 1.0 headers laid
// out exactly like numpy's, so the output is byte-compatible with numpy.load.
//
// Element bytes are kept in file (little-endian) order, so Array::as<T> is
// only meaningful on little-endian hosts.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/Npz.h"
#include "NpzDetail.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include <ctime>

#include <zip.h>

using namespace llvm;
using namespace rnn;
using namespace rnn::npz;
using namespace rnn::npz::detail;


//===----------------------------------------------------------------------===//
// DType and Array
//===----------------------------------------------------------------------===//

StringRef npz::dtypeName(DType dtype) {
  switch (dtype) {
#define RNN_NPZ_DTYPE_NAME(e, type, name, kind, size)                          \
  case DType::e:                                                               \
    return name;
    RNN_NPZ_DTYPES(RNN_NPZ_DTYPE_NAME)
#undef RNN_NPZ_DTYPE_NAME
  }
  llvm_unreachable("unknown DType");
}

size_t npz::dtypeSize(DType dtype) {
  switch (dtype) {
#define RNN_NPZ_DTYPE_SIZE(e, type, name, kind, size)                          \
  case DType::e:                                                               \
    static_assert(sizeof(type) == size, "element size");                       \
    return size;
    RNN_NPZ_DTYPES(RNN_NPZ_DTYPE_SIZE)
#undef RNN_NPZ_DTYPE_SIZE
  }
  llvm_unreachable("unknown DType");
}

std::string npz::detail::dtypeDescr(DType dtype) {
  switch (dtype) {
#define RNN_NPZ_DTYPE_DESCR(e, type, name, kind, size)                         \
  case DType::e:                                                               \
    return std::string(1, size == 1 ? '|' : '<') + kind + std::to_string(size);
    RNN_NPZ_DTYPES(RNN_NPZ_DTYPE_DESCR)
#undef RNN_NPZ_DTYPE_DESCR
  }
  llvm_unreachable("unknown DType");
}

int64_t Array::numElements() const {
  int64_t n = 1;
  for (int64_t dim : shape)
    n *= dim;
  return n;
}

template <typename T> static double loadAsDouble(const char *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return static_cast<double>(value);
}
/// A bool byte other than 0 reads as true (as NumPy's astype does).
template <> double loadAsDouble<bool>(const char *p) { return *p ? 1.0 : 0.0; }

double Array::getAsDouble(int64_t index) const {
  assert(index >= 0 && index < numElements() && "index out of range");
  size_t size = elementSize();
  assert(static_cast<size_t>(index + 1) * size <= data.size() &&
         "array data smaller than its shape");
  const char *p = data.data() + static_cast<size_t>(index) * size;
  switch (dtype) {
#define RNN_NPZ_DTYPE_LOAD(e, type, name, kind, size)                          \
  case DType::e:                                                               \
    return loadAsDouble<type>(p);
    RNN_NPZ_DTYPES(RNN_NPZ_DTYPE_LOAD)
#undef RNN_NPZ_DTYPE_LOAD
  }
  llvm_unreachable("unknown DType");
}

Array Array::zeros(std::string name, DType dtype, std::vector<int64_t> shape) {
  Array result;
  result.name = std::move(name);
  result.dtype = dtype;
  result.shape = std::move(shape);
  assert(llvm::all_of(result.shape, [](int64_t d) { return d >= 0; }) &&
         "negative dimension");
  result.data.assign(
      static_cast<size_t>(result.numElements()) * result.elementSize(), 0);
  return result;
}

std::string npz::formatShape(ArrayRef<int64_t> values) {
  std::string result = "[";
  for (size_t i = 0, e = values.size(); i != e; ++i) {
    if (i)
      result += ", ";
    result += std::to_string(values[i]);
  }
  result += "]";
  return result;
}

std::string Array::shapeString() const { return formatShape(shape); }

std::string npz::formatIndex(ArrayRef<int64_t> shape, int64_t flatIndex) {
  SmallVector<int64_t> index(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] <= 0)
      continue;
    index[i] = flatIndex % shape[i];
    flatIndex /= shape[i];
  }
  return formatShape(index);
}

std::optional<uint64_t> npz::detail::checkedByteSize(ArrayRef<int64_t> shape,
                                                     DType dtype) {
  int64_t n = static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t dim : shape) {
    if (dim < 0 || MulOverflow(n, dim, n))
      return std::nullopt;
  }
  return static_cast<uint64_t>(n);
}

Error npz::detail::makeError(StringRef path, const Twine &message) {
  std::string text;
  raw_string_ostream os(text);
  os << path << ": ";
  for (char c : message.str()) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      os << "\\x" << hexdigit(u >> 4) << hexdigit(u & 0xF);
    else
      os << c;
  }
  return createStringError(inconvertibleErrorCode(), text);
}

std::string npz::detail::shorten(StringRef text) {
  constexpr size_t kMaxLength = 80;
  if (text.size() <= kMaxLength)
    return text.str();
  return (text.take_front(kMaxLength) + "...").str();
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

CompareResult npz::compareArrays(const Array &out, const Array &ref,
                                 double rtol) {
  CompareResult result;
  if (out.shape != ref.shape) {
    result.shapeMismatch = true;
    return result;
  }
  result.passed = true;
  double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0, e = ref.numElements(); i != e; ++i) {
    double o = out.getAsDouble(i);
    double r = ref.getAsDouble(i);
    double absError, scaledError;
    bool ok;
    if (o == r || (std::isnan(o) && std::isnan(r))) {
      absError = scaledError = 0.0;
      ok = true;
    } else if (!std::isfinite(o) || !std::isfinite(r)) {
      absError = scaledError = inf;
      ok = false;
    } else {
      absError = std::fabs(o - r);
      double scale = 1.0 + std::fabs(r);
      scaledError = absError / scale;
      ok = absError <= rtol * scale;
    }
    if (!ok)
      result.passed = false;
    result.maxAbsError = std::max(result.maxAbsError, absError);
    if (result.worstIndex < 0 || scaledError > result.maxScaledError) {
      result.maxScaledError = scaledError;
      result.worstIndex = i;
    }
  }
  return result;
}
