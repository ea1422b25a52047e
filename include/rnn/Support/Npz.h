//===- Npz.h - NumPy .npz archive reading and writing -----------*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// This file declares a small, dependency-light reader and writer for NumPy's
// .npz archives (zip files of .npy members), as produced by numpy.savez and
// numpy.savez_compressed, plus the elementwise comparison used by
// rnn-npz-compare.
//
// Only little-endian, C-ordered arrays of plain numeric dtypes are supported.
// Malformed input never crashes the reader; every problem is reported as an
// llvm::Error whose message is a single line naming the file and the problem.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_SUPPORT_NPZ_H
#define RNN_SUPPORT_NPZ_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace rnn {
namespace npz {

/// The element types supported in .npy members, one table: X(enumerator,
/// C++ type, NumPy name, kind and size of the NumPy type string).
#define RNN_NPZ_DTYPES(X)                                                      \
  X(F32, float, "float32", 'f', 4)                                             \
  X(F64, double, "float64", 'f', 8)                                            \
  X(Bool, bool, "bool", 'b', 1)                                                \
  X(I8, int8_t, "int8", 'i', 1)                                                \
  X(U8, uint8_t, "uint8", 'u', 1)                                              \
  X(I16, int16_t, "int16", 'i', 2)                                             \
  X(U16, uint16_t, "uint16", 'u', 2)                                           \
  X(I32, int32_t, "int32", 'i', 4)                                             \
  X(U32, uint32_t, "uint32", 'u', 4)                                           \
  X(I64, int64_t, "int64", 'i', 8)                                             \
  X(U64, uint64_t, "uint64", 'u', 8)

/// Element types supported in .npy members.
enum class DType {
#define RNN_NPZ_DTYPE_ENUM(e, type, name, kind, size) e,
  RNN_NPZ_DTYPES(RNN_NPZ_DTYPE_ENUM)
#undef RNN_NPZ_DTYPE_ENUM
};

/// Returns the NumPy name of \p dtype ("float32", "bool", "int64", ...).
llvm::StringRef dtypeName(DType dtype);

/// Returns the size in bytes of one element of \p dtype.
size_t dtypeSize(DType dtype);

/// Maps a C++ element type to its DType: the types Array::as accepts.
template <typename T> struct DTypeOf;
#define RNN_NPZ_DTYPE_OF(e, type, name, kind, size)                            \
  template <> struct DTypeOf<type> {                                           \
    static constexpr DType value = DType::e;                                   \
  };
RNN_NPZ_DTYPES(RNN_NPZ_DTYPE_OF)
#undef RNN_NPZ_DTYPE_OF

/// One n-dimensional array. The element bytes are stored little-endian in C
/// (row-major) order. A rank-0 array (empty shape) holds exactly one element;
/// an array with a zero dimension holds none.
struct Array {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Raw element bytes; size() == numElements() * elementSize() for a valid
  /// array. Storage from operator new is suitably aligned for every DType.
  std::vector<char> data;

  /// Returns the product of the dimensions (1 for a rank-0 array).
  int64_t numElements() const;
  /// Returns the size in bytes of one element.
  size_t elementSize() const { return dtypeSize(dtype); }

  /// Returns the elements reinterpreted as \p T, which must match dtype.
  template <typename T> T *as() {
    assert(DTypeOf<T>::value == dtype && "Array::as<T> with wrong type");
    return reinterpret_cast<T *>(data.data());
  }
  template <typename T> const T *as() const {
    assert(DTypeOf<T>::value == dtype && "Array::as<T> with wrong type");
    return reinterpret_cast<const T *>(data.data());
  }

  /// Returns element \p index (in flattened C order) converted to double.
  /// Booleans read as 0 or 1.
  double getAsDouble(int64_t index) const;

  /// Creates a zero-filled array. \p shape must not contain negative values.
  static Array zeros(std::string name, DType dtype, std::vector<int64_t> shape);
  /// Creates a zero-filled float32 array.
  static Array f32(std::string name, std::vector<int64_t> shape) {
    return zeros(std::move(name), DType::F32, std::move(shape));
  }
  /// Creates a zero-filled float64 array.
  static Array f64(std::string name, std::vector<int64_t> shape) {
    return zeros(std::move(name), DType::F64, std::move(shape));
  }
  /// Creates an array of type \p T holding a copy of \p values, whose length
  /// must equal the product of \p shape.
  template <typename T>
  static Array fromValues(std::string name, std::vector<int64_t> shape,
                          llvm::ArrayRef<T> values) {
    Array result = zeros(std::move(name), DTypeOf<T>::value, std::move(shape));
    assert(static_cast<int64_t>(values.size()) == result.numElements() &&
           "value count does not match shape");
    std::copy(values.begin(), values.end(), result.as<T>());
    return result;
  }

  /// Returns the shape formatted like "[2, 3]" ("[]" for rank 0).
  std::string shapeString() const;
};

/// Arrays of one archive, keyed by name (the member name without ".npy").
using ArrayMap = std::map<std::string, Array>;

/// Reads all arrays of the .npz archive at \p path. Members may be stored or
/// deflated, and zip64 records are understood. Each returned Array's name
/// equals its key.
llvm::Expected<ArrayMap> readNpz(llvm::StringRef path);

/// Like readNpz, but parses the archive bytes \p contents held in memory.
/// \p bufferName stands for the file name in error messages.
llvm::Expected<ArrayMap> readNpzFromBuffer(llvm::StringRef contents,
                                           llvm::StringRef bufferName);

/// Writes \p arrays to \p path as an uncompressed .npz archive readable by
/// numpy.load, one member "<name>.npy" per array, in the given order. The file
/// is written to a temporary file in the same directory and renamed into place
/// only on success, so \p path is never left partially written. Fails if a
/// name is empty or repeated or an array's data size does not match its shape.
llvm::Error writeNpz(llvm::StringRef path,
                     llvm::ArrayRef<const Array *> arrays);

/// Overload for braced lists, writeNpz(path, {&a, &b}), which would otherwise
/// be ambiguous with the ArrayMap overload.
inline llvm::Error writeNpz(llvm::StringRef path,
                            std::initializer_list<const Array *> arrays) {
  return writeNpz(path, llvm::ArrayRef<const Array *>(arrays));
}

/// Convenience overload writing every array of \p arrays, in key order. The
/// member names are taken from the keys.
llvm::Error writeNpz(llvm::StringRef path, const ArrayMap &arrays);

/// Result of comparing one array against its reference.
struct CompareResult {
  /// True iff the shapes match and every element satisfies
  /// |out - ref| <= rtol * (1 + |ref|).
  bool passed = false;
  /// Set (and passed false) when the shapes differ; no values were compared.
  bool shapeMismatch = false;
  /// Largest |out - ref| over all elements.
  double maxAbsError = 0.0;
  /// Largest |out - ref| / (1 + |ref|) over all elements.
  double maxScaledError = 0.0;
  /// Flat (C-order) index of the first element with the largest scaled
  /// error, or -1 if no element was compared.
  int64_t worstIndex = -1;
};

/// Compares \p out against \p ref elementwise as doubles, whatever their
/// dtypes. Two NaNs compare equal, as do two equal infinities; any other
/// NaN or infinity mismatch has an infinite error.
CompareResult compareArrays(const Array &out, const Array &ref, double rtol);

/// Formats flat index \p flatIndex as a multi-dimensional index into an array
/// of shape \p shape, e.g. "[1, 0, 2]".
std::string formatIndex(llvm::ArrayRef<int64_t> shape, int64_t flatIndex);

/// \p values as "[a, b, c]", as shapes appear in messages.
std::string formatShape(llvm::ArrayRef<int64_t> values);

} // namespace npz
} // namespace rnn

#endif // RNN_SUPPORT_NPZ_H
