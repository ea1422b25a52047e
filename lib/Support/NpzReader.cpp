//===- NpzReader.cpp - reading NumPy .npz archives ------------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// The reader of rnn/Support/Npz.h (see Npz.cpp for the format).
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
// Reading
//===----------------------------------------------------------------------===//

namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
/// Deflate cannot compress by more than about 1032:1; a larger claimed ratio
/// means a corrupt directory, and trusting it would mean a huge allocation.
constexpr uint64_t kMaxDeflateRatio = 1032;

/// libzip's message for \p error.
std::string zipMessage(zip_error_t *error) { return zip_error_strerror(error); }

/// Sequential reader over the uncompressed bytes of one open zip member;
/// libzip inflates a deflated member and checks its CRC-32 at its end.
class MemberReader {
public:
  explicit MemberReader(zip_file_t *file) : file(file) {}

  /// Reads exactly \p length bytes into \p dest. Returns false if the
  /// member ends early or cannot be read (see error()).
  bool read(char *dest, uint64_t length) {
    while (length > 0) {
      zip_int64_t read = zip_fread(file, dest, length);
      if (read <= 0)
        return false;
      dest += read;
      length -= static_cast<uint64_t>(read);
    }
    return true;
  }

  /// Returns true if the member holds no more bytes and its CRC-32 and
  /// sizes check out.
  bool atEnd() {
    char extra;
    return zip_fread(file, &extra, 1) == 0;
  }

  /// What went wrong with the last read, in libzip's words.
  std::string error() { return zipMessage(zip_file_get_error(file)); }
  bool crcMismatch() {
    return zip_error_code_zip(zip_file_get_error(file)) == ZIP_ER_CRC;
  }

private:
  zip_file_t *file;
};

/// A value in a .npy header dict.
struct HeaderValue {
  enum Kind { String, Bool, Tuple, Other } kind = Other;
  std::string str;
  bool boolean = false;
  std::vector<int64_t> ints;
  /// The source text of the value, for error messages.
  StringRef text;
};

/// Parser for the Python dict literal in a .npy header. It understands
/// exactly what numpy writes: string keys, and string, boolean and
/// integer-tuple values; other values are skipped and reported as Other.
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : text(text) {}

  /// Parses the whole dict into \p entries. On failure returns false and
  /// sets \p problem.
  bool parse(std::map<std::string, HeaderValue> &entries,
             std::string &problem) {
    skipSpace();
    if (!consume('{'))
      return fail(problem, "expected '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return fail(problem, "expected a string key");
      skipSpace();
      if (!consume(':'))
        return fail(problem, "expected ':'");
      skipSpace();
      HeaderValue value;
      if (!parseValue(value))
        return fail(problem, "bad value for key '" + shorten(key) + "'");
      entries[key] = std::move(value);
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return fail(problem, "expected ',' or '}'");
    }
    skipSpace();
    if (pos != text.size())
      return fail(problem, "trailing characters after '}'");
    return true;
  }

private:
  static bool fail(std::string &problem, const Twine &message) {
    problem = message.str();
    return false;
  }

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  bool consume(char c) {
    if (peek() != c || atEnd())
      return false;
    ++pos;
    return true;
  }
  void skipSpace() {
    while (!atEnd() && isSpace(text[pos]))
      ++pos;
  }

  bool parseString(std::string &out) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return false;
    ++pos;
    out.clear();
    while (!atEnd() && text[pos] != quote) {
      if (text[pos] == '\\')
        return false; // numpy never writes escapes in the fields we need.
      out += text[pos++];
    }
    return consume(quote);
  }

  bool parseInt(int64_t &out) {
    size_t start = pos;
    while (!atEnd() && isDigit(text[pos]))
      ++pos;
    if (pos == start)
      return false;
    if (text.substr(start, pos - start).getAsInteger(10, out))
      return false; // Overflow.
    consume('L');   // Python 2 long suffix, as in old .npy files.
    return true;
  }

  bool parseTuple(std::vector<int64_t> &out) {
    if (!consume('('))
      return false;
    out.clear();
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      int64_t value;
      if (!parseInt(value))
        return false;
      out.push_back(value);
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      return consume(')');
    }
  }

  /// Skips a value of unsupported form (e.g. the list of a structured dtype)
  /// up to the next top-level ',' or '}'.
  bool skipOther() {
    int depth = 0;
    size_t start = pos;
    while (!atEnd()) {
      char c = text[pos];
      if (c == '\'' || c == '"') {
        std::string ignored;
        if (!parseString(ignored))
          return false;
        continue;
      }
      if (depth == 0 && (c == ',' || c == '}'))
        break;
      if (c == '(' || c == '[' || c == '{')
        ++depth;
      else if (c == ')' || c == ']' || c == '}')
        --depth;
      if (depth < 0)
        return false;
      ++pos;
    }
    return depth == 0 && pos != start && !atEnd();
  }

  bool parseValue(HeaderValue &value) {
    size_t start = pos;
    char c = peek();
    bool ok;
    if (c == '\'' || c == '"') {
      value.kind = HeaderValue::String;
      ok = parseString(value.str);
    } else if (text.substr(pos).starts_with("True") ||
               text.substr(pos).starts_with("False")) {
      value.kind = HeaderValue::Bool;
      value.boolean = c == 'T';
      pos += value.boolean ? 4 : 5;
      ok = true;
    } else if (c == '(') {
      value.kind = HeaderValue::Tuple;
      ok = parseTuple(value.ints);
    } else {
      value.kind = HeaderValue::Other;
      ok = skipOther();
    }
    value.text = text.substr(start, pos - start).rtrim();
    return ok;
  }

  StringRef text;
  size_t pos = 0;
};

/// Maps a numpy type string to a DType. Sets \p bigEndian when the string
/// is otherwise valid but describes big-endian multi-byte elements.
std::optional<DType> parseDescr(StringRef descr, bool &bigEndian) {
  bigEndian = false;
  char order = '=';
  if (!descr.empty() && StringRef("<>|=!").contains(descr.front())) {
    order = descr.front();
    descr = descr.drop_front();
  }
  if (descr.size() < 2)
    return std::nullopt;
  char kind = descr.front();
  unsigned size;
  if (descr.drop_front().getAsInteger(10, size))
    return std::nullopt;
  std::optional<DType> dtype;
#define RNN_NPZ_DTYPE_PARSE(e, type, name, dtypeKind, dtypeSize)               \
  if (kind == dtypeKind && size == dtypeSize)                                  \
    dtype = DType::e;
  RNN_NPZ_DTYPES(RNN_NPZ_DTYPE_PARSE)
#undef RNN_NPZ_DTYPE_PARSE
  if (!dtype)
    return std::nullopt;
  bool big =
      order == '>' || order == '!' || (order == '=' && sys::IsBigEndianHost);
  if (big && size > 1) {
    bigEndian = true;
    return std::nullopt;
  }
  return dtype;
}

/// Reads one .npz file held in memory.
class NpzReader {
public:
  NpzReader(StringRef path, StringRef buffer) : path(path), buffer(buffer) {}

  Expected<ArrayMap> read() {
    // libzip takes an empty file for an archive without members.
    if (buffer.empty())
      return error("not a zip file (empty)");
    zip_error_t openError;
    zip_error_init(&openError);
    zip_source_t *source = zip_source_buffer_create(
        buffer.data(), buffer.size(), /*freep=*/0, &openError);
    zip_t *archive =
        source ? zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS,
                                      &openError)
               : nullptr;
    if (!archive) {
      if (source)
        zip_source_free(source);
      std::string message = zipMessage(&openError);
      int code = zip_error_code_zip(&openError);
      zip_error_fini(&openError);
      if (code == ZIP_ER_NOZIP) {
        if (buffer.size() >= 4 &&
            support::endian::read32le(buffer.data()) == kLocalHeaderSig)
          return error("truncated (zip end of central directory not found)");
        return error("not a zip file");
      }
      return error("corrupt zip file (" + message + ")");
    }
    llvm::scope_exit close([&] { zip_discard(archive); });
    ArrayMap arrays;
    zip_int64_t count = zip_get_num_entries(archive, 0);
    for (zip_int64_t i = 0; i < count; ++i) {
      zip_stat_t stat;
      zip_stat_init(&stat);
      constexpr zip_uint64_t kNeeded =
          ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
          ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
      if (zip_stat_index(archive, i, ZIP_FL_ENC_RAW, &stat) != 0 ||
          (stat.valid & kNeeded) != kNeeded)
        return error("corrupt zip central directory (" +
                     zipMessage(zip_get_error(archive)) + ")");
      StringRef fileName = stat.name;
      // Directory entries carry no data.
      if (fileName.ends_with("/") && stat.size == 0)
        continue;
      StringRef name = fileName;
      if (!name.consume_back(".npy"))
        return error("member '" + shorten(fileName) + "' is not a .npy file");
      if (arrays.count(name.str()))
        return error("duplicate array '" + shorten(name) + "'");
      Array array;
      array.name = name.str();
      if (Error err = readMember(archive, i, stat, array))
        return std::move(err);
      std::string key = array.name;
      arrays.emplace(std::move(key), std::move(array));
    }
    return std::move(arrays);
  }

private:
  Error error(const Twine &message) const { return makeError(path, message); }
  Error arrayError(StringRef name, const Twine &message) const {
    return error("array '" + shorten(name) + "': " + message);
  }

  /// Reads member \p index, described by \p stat, into \p array.
  Error readMember(zip_t *archive, zip_int64_t index, const zip_stat_t &stat,
                   Array &array) const {
    StringRef name = array.name;
    if (stat.encryption_method != ZIP_EM_NONE)
      return arrayError(name, "encrypted zip members are not supported");
    if (stat.comp_method != ZIP_CM_STORE && stat.comp_method != ZIP_CM_DEFLATE)
      return arrayError(name, "unsupported zip compression method " +
                                  Twine(stat.comp_method));
    bool deflated = stat.comp_method == ZIP_CM_DEFLATE;
    if (stat.comp_size > buffer.size())
      return arrayError(name, "truncated");
    if (!deflated && stat.comp_size != stat.size)
      return arrayError(name, "corrupt zip entry (stored sizes differ)");
    if (deflated && stat.size / kMaxDeflateRatio > stat.comp_size)
      return arrayError(name, "corrupt zip entry (implausible uncompressed "
                              "size)");
    zip_file_t *file = zip_fopen_index(archive, index, 0);
    if (!file)
      return arrayError(name, "corrupt zip entry (" +
                                  zipMessage(zip_get_error(archive)) + ")");
    llvm::scope_exit close([&] { zip_fclose(file); });
    MemberReader reader(file);
    if (Error err = parseNpy(reader, stat.size, deflated, array))
      return err;
    if (!reader.atEnd()) {
      if (reader.crcMismatch())
        return arrayError(name, "CRC-32 mismatch (corrupt file)");
      return arrayError(name,
                        "corrupt compressed data (" + reader.error() + ")");
    }
    return Error::success();
  }

  /// Parses one .npy member of \p memberSize bytes from \p reader.
  Error parseNpy(MemberReader &reader, uint64_t memberSize, bool deflated,
                 Array &array) const {
    StringRef name = array.name;
    uint64_t remaining = memberSize;
    auto readBytes = [&](char *dest, uint64_t length) {
      if (length > remaining || !reader.read(dest, length))
        return false;
      remaining -= length;
      return true;
    };

    char prefix[8];
    if (!readBytes(prefix, sizeof(prefix)))
      return arrayError(name, "truncated .npy header");
    if (std::memcmp(prefix, "\x93NUMPY", 6) != 0)
      return arrayError(name, "not a .npy file (bad magic string)");
    uint8_t major = prefix[6], minor = prefix[7];
    uint64_t headerLength;
    if (major == 1) {
      char lengthBytes[2];
      if (!readBytes(lengthBytes, 2))
        return arrayError(name, "truncated .npy header");
      headerLength = support::endian::read16le(lengthBytes);
    } else if (major == 2 || major == 3) {
      char lengthBytes[4];
      if (!readBytes(lengthBytes, 4))
        return arrayError(name, "truncated .npy header");
      headerLength = support::endian::read32le(lengthBytes);
    } else {
      return arrayError(name, "unsupported .npy format version " +
                                  Twine(major) + "." + Twine(minor));
    }
    if (headerLength > remaining)
      return arrayError(name, "truncated .npy header");
    std::string header(headerLength, '\0');
    if (!readBytes(header.data(), headerLength))
      return arrayError(name, "truncated .npy header");

    std::map<std::string, HeaderValue> dict;
    std::string problem;
    if (!HeaderParser(header).parse(dict, problem))
      return arrayError(name, "malformed .npy header (" + problem + ")");
    for (const auto &kv : dict) {
      if (kv.first != "descr" && kv.first != "fortran_order" &&
          kv.first != "shape")
        return arrayError(name, "malformed .npy header (unexpected key '" +
                                    shorten(kv.first) + "')");
    }
    auto descrIt = dict.find("descr");
    auto fortranIt = dict.find("fortran_order");
    auto shapeIt = dict.find("shape");
    if (descrIt == dict.end() || fortranIt == dict.end() ||
        shapeIt == dict.end())
      return arrayError(name, "malformed .npy header (missing key)");

    const HeaderValue &descr = descrIt->second;
    if (descr.kind != HeaderValue::String)
      return arrayError(name, "unsupported dtype " + shorten(descr.text));
    bool bigEndian;
    std::optional<DType> dtype = parseDescr(descr.str, bigEndian);
    if (!dtype)
      return arrayError(name, "unsupported dtype '" + shorten(descr.str) + "'" +
                                  (bigEndian ? " (big-endian)" : ""));
    array.dtype = *dtype;

    const HeaderValue &fortran = fortranIt->second;
    if (fortran.kind != HeaderValue::Bool)
      return arrayError(name, "malformed .npy header (bad fortran_order " +
                                  shorten(fortran.text) + ")");
    if (fortran.boolean)
      return arrayError(name, "fortran-ordered arrays are not supported");

    const HeaderValue &shape = shapeIt->second;
    if (shape.kind != HeaderValue::Tuple)
      return arrayError(name, "malformed .npy header (bad shape " +
                                  shorten(shape.text) + ")");
    array.shape = shape.ints;
    std::optional<uint64_t> byteSize = checkedByteSize(array.shape, *dtype);
    if (!byteSize)
      return arrayError(name, "shape " + shorten(shape.text) + " is too large");
    if (*byteSize != remaining)
      return arrayError(
          name, "data size mismatch: shape " + array.shapeString() + " of " +
                    dtypeName(*dtype) + " needs " + Twine(*byteSize) +
                    " bytes, member has " + Twine(remaining));
    array.data.resize(*byteSize);
    if (!readBytes(array.data.data(), *byteSize))
      return arrayError(name,
                        deflated ? "corrupt compressed data" : "truncated");
    return Error::success();
  }

  StringRef path;
  StringRef buffer;
};

} // namespace

Expected<ArrayMap> npz::readNpz(StringRef path) {
  // A device or pipe (/dev/zero, say) has no end to read up to.
  sys::fs::file_status status;
  if (!sys::fs::status(path, status) &&
      status.type() != sys::fs::file_type::regular_file)
    return createStringError(std::make_error_code(std::errc::invalid_argument),
                             (path + ": not a regular file").str());
  ErrorOr<std::unique_ptr<MemoryBuffer>> bufferOrErr =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!bufferOrErr)
    return createStringError(bufferOrErr.getError(),
                             path + ": " + bufferOrErr.getError().message());
  return NpzReader(path, (*bufferOrErr)->getBuffer()).read();
}

Expected<ArrayMap> npz::readNpzFromBuffer(StringRef contents,
                                          StringRef bufferName) {
  return NpzReader(bufferName, contents).read();
}
