//===- NpzWriter.cpp - writing NumPy .npz archives ------------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// The writer of rnn/Support/Npz.h (see Npz.cpp for the format).
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
// Writing
//===----------------------------------------------------------------------===//

namespace {

/// libzip's message for \p error.
std::string zipMessage(zip_error_t *error) { return zip_error_strerror(error); }

/// Returns the .npy 1.0 (or, if the header is too long, 2.0) header for
/// \p array, laid out byte for byte as numpy.save writes it.
std::string makeNpyHeader(const Array &array) {
  std::string dict = "{'descr': '" + dtypeDescr(array.dtype) +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0, e = array.shape.size(); i != e; ++i) {
    if (i)
      dict += ", ";
    dict += std::to_string(array.shape[i]);
  }
  if (array.shape.size() == 1)
    dict += ",";
  dict += "), }";
  // numpy leaves room to grow the first axis in place.
  constexpr size_t kGrowthAxisMaxDigits = 21;
  if (!array.shape.empty()) {
    size_t digits = std::to_string(array.shape.front()).size();
    if (digits < kGrowthAxisMaxDigits)
      dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }

  constexpr size_t kArrayAlign = 64;
  constexpr size_t kMagicLength = 8;
  size_t lengthFieldSize = 2;
  size_t unpaddedLength = dict.size() + 1; // Plus the final '\n'.
  size_t padding =
      kArrayAlign -
      (kMagicLength + lengthFieldSize + unpaddedLength) % kArrayAlign;
  if (unpaddedLength + padding > 0xFFFF) {
    lengthFieldSize = 4;
    padding = kArrayAlign -
              (kMagicLength + lengthFieldSize + unpaddedLength) % kArrayAlign;
  }
  uint32_t headerLength = static_cast<uint32_t>(unpaddedLength + padding);

  std::string result = "\x93NUMPY";
  result += static_cast<char>(lengthFieldSize == 2 ? 1 : 2);
  result += '\0';
  char lengthBytes[4];
  support::endian::write32le(lengthBytes, headerLength);
  result.append(lengthBytes, lengthFieldSize);
  result += dict;
  result.append(padding, ' ');
  result += '\n';
  assert(result.size() % kArrayAlign == 0 && "misaligned .npy header");
  return result;
}

/// A member to be written: its name in the archive and its contents.
struct PendingMember {
  std::string fileName;
  std::string npyHeader;
  const Array *array;
};

/// The bytes of a zip archive without members: its end of central
/// directory record alone.
constexpr char kEmptyZip[22] = {'P', 'K', 5, 6};

/// Writes \p bytes to a temporary file renamed over \p path.
Error writeFileAtomically(StringRef path, StringRef bytes) {
  auto error = [&](const Twine &message) { return makeError(path, message); };
  Expected<sys::fs::TempFile> temp =
      sys::fs::TempFile::create(path + ".tmp-%%%%%%%%");
  if (!temp)
    return error("cannot create temporary file: " + toString(temp.takeError()));
  std::error_code writeError;
  {
    raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    os << bytes;
    os.flush();
    if (os.has_error()) {
      writeError = os.error();
      os.clear_error();
    }
  }
  if (writeError) {
    consumeError(temp->discard());
    return error("write failed: " + writeError.message());
  }
  if (Error err = temp->keep(path))
    return error("cannot rename temporary file into place: " +
                 toString(std::move(err)));
  return Error::success();
}

/// Writes \p members to \p path as a zip archive of stored members with a
/// fixed timestamp (the output is deterministic). libzip writes a
/// temporary file next to \p path and renames it into place on close.
Error writeZip(StringRef path, ArrayRef<PendingMember> members) {
  auto error = [&](const Twine &message) { return makeError(path, message); };
  // libzip removes an archive left without members rather than write one.
  if (members.empty())
    return writeFileAtomically(path, StringRef(kEmptyZip, sizeof(kEmptyZip)));
  int openError = 0;
  zip_t *archive =
      zip_open(path.str().c_str(), ZIP_CREATE | ZIP_TRUNCATE, &openError);
  if (!archive) {
    zip_error_t zipError;
    zip_error_init_with_code(&zipError, openError);
    std::string message = zipMessage(&zipError);
    zip_error_fini(&zipError);
    return error("cannot write: " + message);
  }
  auto fail = [&](const Twine &what) {
    std::string message = zipMessage(zip_get_error(archive));
    zip_discard(archive);
    return error(what + ": " + message);
  };
  // 1980-01-01, the epoch of the format's MS-DOS dates, in local time as
  // libzip converts it.
  std::tm epoch = {};
  epoch.tm_year = 80;
  epoch.tm_mday = 1;
  epoch.tm_isdst = -1;
  time_t mtime = std::mktime(&epoch);
  for (const PendingMember &member : members) {
    zip_buffer_fragment_t fragments[] = {
        {reinterpret_cast<zip_uint8_t *>(
             const_cast<char *>(member.npyHeader.data())),
         member.npyHeader.size()},
        {reinterpret_cast<zip_uint8_t *>(
             const_cast<char *>(member.array->data.data())),
         member.array->data.size()}};
    zip_source_t *source =
        zip_source_buffer_fragment(archive, fragments, 2, /*freep=*/0);
    zip_int64_t index = source ? zip_file_add(archive, member.fileName.c_str(),
                                              source, ZIP_FL_ENC_UTF_8)
                               : -1;
    if (index < 0) {
      if (source)
        zip_source_free(source);
      return fail("cannot add array '" + shorten(member.array->name) + "'");
    }
    if (zip_set_file_compression(archive, index, ZIP_CM_STORE, 0) != 0 ||
        zip_file_set_mtime(archive, index, mtime, 0) != 0 ||
        zip_file_set_external_attributes(archive, index, 0, ZIP_OPSYS_UNIX,
                                         0644u << 16) != 0)
      return fail("cannot describe array '" + shorten(member.array->name) +
                  "'");
  }
  if (zip_close(archive) != 0)
    return fail("write failed");
  return Error::success();
}

/// Validates the arrays and writes them atomically to \p path.
Error writeArchive(StringRef path,
                   ArrayRef<std::pair<StringRef, const Array *>> arrays) {
  auto error = [&](const Twine &message) { return makeError(path, message); };

  std::vector<PendingMember> members;
  members.reserve(arrays.size());
  StringSet<> seen;
  for (const auto &[name, array] : arrays) {
    if (name.empty())
      return error("cannot write an array with an empty name");
    if (!seen.insert(name).second)
      return error("duplicate array name '" + shorten(name) + "'");
    std::optional<uint64_t> byteSize =
        checkedByteSize(array->shape, array->dtype);
    if (!byteSize)
      return error("array '" + shorten(name) + "': invalid shape " +
                   array->shapeString());
    if (*byteSize != array->data.size())
      return error("array '" + shorten(name) + "': data size mismatch: shape " +
                   array->shapeString() + " of " + dtypeName(array->dtype) +
                   " needs " + Twine(*byteSize) + " bytes, array has " +
                   Twine(array->data.size()));
    PendingMember member;
    member.fileName = (name + ".npy").str();
    if (member.fileName.size() > 0xFFFF)
      return error("array '" + shorten(name) + "': name too long");
    member.npyHeader = makeNpyHeader(*array);
    member.array = array;
    members.push_back(std::move(member));
  }
  return writeZip(path, members);
}

} // namespace

Error npz::writeNpz(StringRef path, ArrayRef<const Array *> arrays) {
  std::vector<std::pair<StringRef, const Array *>> named;
  named.reserve(arrays.size());
  for (const Array *array : arrays)
    named.emplace_back(array->name, array);
  return writeArchive(path, named);
}

Error npz::writeNpz(StringRef path, const ArrayMap &arrays) {
  std::vector<std::pair<StringRef, const Array *>> named;
  named.reserve(arrays.size());
  for (const auto &kv : arrays)
    named.emplace_back(kv.first, &kv.second);
  return writeArchive(path, named);
}
