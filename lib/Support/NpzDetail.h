//===- NpzDetail.h - what the npz reader and writer share -------*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Support: Npz.cpp (arrays, errors, comparison) defines
// these, NpzReader.cpp and NpzWriter.cpp use them.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_LIB_SUPPORT_NPZDETAIL_H
#define RNN_LIB_SUPPORT_NPZDETAIL_H

#include "rnn/Support/Npz.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace rnn {
namespace npz {
namespace detail {

/// Returns the numpy type string ("<f4", "|b1", ...) of \p dtype.
std::string dtypeDescr(DType dtype);

/// Returns the number of bytes that an array of \p shape and \p dtype
/// occupies, or std::nullopt if a dimension is negative or the size overflows.
std::optional<uint64_t> checkedByteSize(llvm::ArrayRef<int64_t> shape,
                                        DType dtype);

/// Returns an error "<path>: <message>". Control characters in the message
/// (which may quote names read from a corrupt file) are escaped so that it
/// stays on one line.
llvm::Error makeError(llvm::StringRef path, const llvm::Twine &message);

/// Shortens a string taken from the file, such as a member name, for use in
/// an error message.
std::string shorten(llvm::StringRef text);

} // namespace detail
} // namespace npz
} // namespace rnn

#endif // RNN_LIB_SUPPORT_NPZDETAIL_H
