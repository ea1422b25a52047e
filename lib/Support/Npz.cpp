//===- Npz.cpp - NumPy .npz archive reading and writing -------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements the .npz reader and writer declared in rnn/Support/Npz.h.
//
// An .npz file is a zip archive whose members are .npy files. The reader
// walks the zip central directory (including zip64 records), inflates
// deflated members with zlib, and parses the .npy header, which is a Python
// dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Every offset and length taken from the file is bounds-checked before use.
//
// The writer emits stored (uncompressed) members with .npy 1.0 headers laid
// out exactly like numpy's, so the output is byte-compatible with numpy.load.
//
// Element bytes are kept in file (little-endian) order, so Array::as<T> is
// only meaningful on little-endian hosts.
//
// Why not libzip: the tools that read and write npz files (rnn-run) are
// relinked statically for the GPU bundle and the wheel
// (tools/package/link-static.sh), and Debian 12 ships libzip (1.7.3) only
// as a shared library (no libzip.a in libzip-dev) that pulls in libssl3 and
// libbz2, which a static relink cannot take and a bundle would have to
// carry. What an .npz needs of zip is small: the central directory (zip64
// included) and zlib's inflate to read, stored members to write.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/Npz.h"

#include "llvm/ADT/STLExtras.h"
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

#include <zlib.h>

using namespace llvm;
using namespace rnn;
using namespace rnn::npz;

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

/// Returns the numpy type string ("<f4", "|b1", ...) of \p dtype.
static std::string dtypeDescr(DType dtype) {
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

static std::string formatList(ArrayRef<int64_t> values) {
  std::string result = "[";
  for (size_t i = 0, e = values.size(); i != e; ++i) {
    if (i)
      result += ", ";
    result += std::to_string(values[i]);
  }
  result += "]";
  return result;
}

std::string Array::shapeString() const { return formatList(shape); }

std::string npz::formatIndex(ArrayRef<int64_t> shape, int64_t flatIndex) {
  SmallVector<int64_t> index(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] <= 0)
      continue;
    index[i] = flatIndex % shape[i];
    flatIndex /= shape[i];
  }
  return formatList(index);
}

/// Returns the number of bytes that an array of \p shape and \p dtype
/// occupies, or std::nullopt if a dimension is negative or the size overflows.
static std::optional<uint64_t> checkedByteSize(ArrayRef<int64_t> shape,
                                               DType dtype) {
  int64_t n = static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t dim : shape) {
    if (dim < 0 || MulOverflow(n, dim, n))
      return std::nullopt;
  }
  return static_cast<uint64_t>(n);
}

/// Returns an error "<path>: <message>". Control characters in the message
/// (which may quote names read from a corrupt file) are escaped so that it
/// stays on one line.
static Error makeError(StringRef path, const Twine &message) {
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

/// Shortens a string taken from the file, such as a member name, for use in
/// an error message.
static std::string shorten(StringRef text) {
  constexpr size_t kMaxLength = 80;
  if (text.size() <= kMaxLength)
    return text.str();
  return (text.take_front(kMaxLength) + "...").str();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndOfCentralDirSig = 0x06054b50;
constexpr uint32_t kZip64EndOfCentralDirSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndOfCentralDirSize = 22;
constexpr size_t kZip64EndOfCentralDirSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflated = 8;
/// Deflate cannot compress by more than about 1032:1; a larger claimed ratio
/// means a corrupt directory, and trusting it would mean a huge allocation.
constexpr uint64_t kMaxDeflateRatio = 1032;

/// Returns true if [offset, offset + length) lies within [0, size).
bool inBounds(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

uint16_t read16(StringRef buf, uint64_t offset) {
  return support::endian::read16le(buf.data() + offset);
}
uint32_t read32(StringRef buf, uint64_t offset) {
  return support::endian::read32le(buf.data() + offset);
}
uint64_t read64(StringRef buf, uint64_t offset) {
  return support::endian::read64le(buf.data() + offset);
}

/// One member as described by the central directory.
struct ZipEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressedSize = 0;
  uint64_t uncompressedSize = 0;
  uint64_t localHeaderOffset = 0;
};

/// Sequential reader over the uncompressed bytes of one zip member, which is
/// either stored (read straight from the file) or deflated (inflated on the
/// fly). It keeps a running CRC-32 of everything read.
class MemberReader {
public:
  MemberReader(StringRef input, bool deflated)
      : input(input), deflated(deflated) {}
  MemberReader(const MemberReader &) = delete;
  MemberReader &operator=(const MemberReader &) = delete;
  ~MemberReader() {
    if (zlibInitialized)
      inflateEnd(&stream);
  }

  /// Prepares for reading; returns false if zlib cannot be initialized.
  bool init() {
    if (!deflated)
      return true;
    std::memset(&stream, 0, sizeof(stream));
    if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
      return false;
    zlibInitialized = true;
    return true;
  }

  /// Reads exactly \p length bytes into \p dest. Returns false if the member
  /// ends early or its compressed data is corrupt.
  bool read(char *dest, uint64_t length) {
    if (!(deflated ? inflateInto(dest, length) : copyInto(dest, length)))
      return false;
    updateCrc(dest, length);
    return true;
  }

  /// Returns true if the member holds no more bytes (and, for a deflated
  /// member, its compressed stream ends properly).
  bool atEnd() {
    if (!deflated)
      return position == input.size();
    if (streamEnded)
      return true;
    char extra;
    // Asking for one more byte must finish the stream without producing any.
    return !inflateInto(&extra, 1) && streamEnded && !producedExtra;
  }

  uint32_t crc() const { return static_cast<uint32_t>(crcValue); }

private:
  bool copyInto(char *dest, uint64_t length) {
    if (!inBounds(position, length, input.size()))
      return false;
    if (length)
      std::memcpy(dest, input.data() + position, length);
    position += length;
    return true;
  }

  bool inflateInto(char *dest, uint64_t length) {
    constexpr uint64_t kChunk = uint64_t(1) << 30;
    producedExtra = false;
    while (length > 0) {
      if (streamEnded)
        return false;
      if (stream.avail_in == 0 && position < input.size()) {
        uint64_t chunk = std::min<uint64_t>(input.size() - position, kChunk);
        stream.next_in = reinterpret_cast<Bytef *>(
            const_cast<char *>(input.data() + position));
        stream.avail_in = static_cast<uInt>(chunk);
        position += chunk;
      }
      uInt outChunk = static_cast<uInt>(std::min(length, kChunk));
      uInt inBefore = stream.avail_in;
      stream.next_out = reinterpret_cast<Bytef *>(dest);
      stream.avail_out = outChunk;
      int rc = inflate(&stream, Z_NO_FLUSH);
      uint64_t produced = outChunk - stream.avail_out;
      dest += produced;
      length -= produced;
      if (produced)
        producedExtra = true;
      if (rc == Z_STREAM_END) {
        streamEnded = true;
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR)
        return false;
      if (produced == 0 && stream.avail_in == inBefore &&
          position == input.size())
        return false; // Input exhausted without progress.
    }
    return true;
  }

  void updateCrc(const char *data, uint64_t length) {
    // crc32_z(crc, nullptr, 0) would return the initial value, not crc.
    if (length == 0)
      return;
    crcValue = crc32_z(crcValue, reinterpret_cast<const Bytef *>(data),
                       static_cast<z_size_t>(length));
  }

  StringRef input;
  bool deflated;
  uint64_t position = 0;
  z_stream stream;
  bool zlibInitialized = false;
  bool streamEnded = false;
  bool producedExtra = false;
  uLong crcValue = crc32(0, nullptr, 0);
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
    ArrayMap arrays;
    std::vector<ZipEntry> entries;
    if (Error err = readCentralDirectory(entries))
      return std::move(err);
    for (const ZipEntry &entry : entries) {
      // Directory entries carry no data.
      if (StringRef(entry.name).ends_with("/") && entry.uncompressedSize == 0)
        continue;
      StringRef name = entry.name;
      if (!name.consume_back(".npy"))
        return error("member '" + shorten(entry.name) + "' is not a .npy file");
      if (arrays.count(name.str()))
        return error("duplicate array '" + shorten(name) + "'");
      Array array;
      array.name = name.str();
      if (Error err = readMember(entry, array))
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

  Error readCentralDirectory(std::vector<ZipEntry> &entries) {
    std::optional<uint64_t> eocd = findEndOfCentralDirectory();
    if (!eocd) {
      if (buffer.size() >= 4 && read32(buffer, 0) == kLocalHeaderSig)
        return error("truncated (zip end of central directory not found)");
      return error("not a zip file");
    }

    uint64_t numEntries = read16(buffer, *eocd + 10);
    uint64_t cdSize = read32(buffer, *eocd + 12);
    uint64_t cdOffset = read32(buffer, *eocd + 16);
    uint16_t diskNumber = read16(buffer, *eocd + 4);
    uint16_t cdDisk = read16(buffer, *eocd + 6);
    uint64_t numEntriesOnDisk = read16(buffer, *eocd + 8);
    // The end of the directory: the zip64 record if present, else the EOCD.
    uint64_t cdLimit = *eocd;

    if (*eocd >= kZip64LocatorSize &&
        read32(buffer, *eocd - kZip64LocatorSize) == kZip64LocatorSig) {
      uint64_t locator = *eocd - kZip64LocatorSize;
      uint64_t recordOffset = read64(buffer, locator + 8);
      if (!inBounds(recordOffset, kZip64EndOfCentralDirSize, locator) ||
          read32(buffer, recordOffset) != kZip64EndOfCentralDirSig)
        return error("corrupt zip64 end of central directory");
      diskNumber = read32(buffer, recordOffset + 16) ? 1 : 0;
      cdDisk = read32(buffer, recordOffset + 20) ? 1 : 0;
      numEntriesOnDisk = read64(buffer, recordOffset + 24);
      numEntries = read64(buffer, recordOffset + 32);
      cdSize = read64(buffer, recordOffset + 40);
      cdOffset = read64(buffer, recordOffset + 48);
      cdLimit = recordOffset;
    } else if (numEntries == 0xFFFF || cdSize == 0xFFFFFFFF ||
               cdOffset == 0xFFFFFFFF) {
      return error("truncated or corrupt zip file (zip64 locator missing)");
    }

    if (diskNumber != 0 || cdDisk != 0 || numEntriesOnDisk != numEntries)
      return error("multi-disk zip archives are not supported");
    if (!inBounds(cdOffset, cdSize, cdLimit))
      return error("truncated or corrupt zip file (central directory out of "
                   "bounds)");
    // Each entry needs at least kCentralHeaderSize bytes, which bounds the
    // count before we reserve anything.
    if (numEntries > cdSize / kCentralHeaderSize)
      return error("corrupt zip central directory (bad entry count)");

    StringRef cd = buffer.substr(cdOffset, cdSize);
    uint64_t pos = 0;
    entries.reserve(numEntries);
    for (uint64_t i = 0; i != numEntries; ++i) {
      if (!inBounds(pos, kCentralHeaderSize, cd.size()) ||
          read32(cd, pos) != kCentralHeaderSig)
        return error("corrupt zip central directory");
      ZipEntry entry;
      entry.flags = read16(cd, pos + 8);
      entry.method = read16(cd, pos + 10);
      entry.crc = read32(cd, pos + 16);
      entry.compressedSize = read32(cd, pos + 20);
      entry.uncompressedSize = read32(cd, pos + 24);
      uint16_t nameLength = read16(cd, pos + 28);
      uint16_t extraLength = read16(cd, pos + 30);
      uint16_t commentLength = read16(cd, pos + 32);
      uint16_t startDisk = read16(cd, pos + 34);
      entry.localHeaderOffset = read32(cd, pos + 42);
      uint64_t variableSize =
          uint64_t(nameLength) + extraLength + commentLength;
      if (!inBounds(pos + kCentralHeaderSize, variableSize, cd.size()))
        return error("corrupt zip central directory");
      entry.name = cd.substr(pos + kCentralHeaderSize, nameLength).str();
      StringRef extra =
          cd.substr(pos + kCentralHeaderSize + nameLength, extraLength);
      if (Error err = applyZip64Extra(entry, extra, startDisk))
        return err;
      entries.push_back(std::move(entry));
      pos += kCentralHeaderSize + variableSize;
    }
    return Error::success();
  }

  /// Returns the offset of the end of central directory record, searching
  /// backwards over a possible archive comment.
  std::optional<uint64_t> findEndOfCentralDirectory() const {
    uint64_t size = buffer.size();
    if (size < kEndOfCentralDirSize)
      return std::nullopt;
    uint64_t last = size - kEndOfCentralDirSize;
    uint64_t first = last > 0xFFFF ? last - 0xFFFF : 0;
    for (uint64_t pos = last + 1; pos-- > first;) {
      if (read32(buffer, pos) == kEndOfCentralDirSig &&
          pos + kEndOfCentralDirSize + read16(buffer, pos + 20) <= size)
        return pos;
    }
    return std::nullopt;
  }

  /// Replaces the 32-bit fields of \p entry that are saturated (0xFFFFFFFF)
  /// with their values from the zip64 extended information extra field.
  Error applyZip64Extra(ZipEntry &entry, StringRef extra,
                        uint16_t startDisk) const {
    bool needUncompressed = entry.uncompressedSize == 0xFFFFFFFF;
    bool needCompressed = entry.compressedSize == 0xFFFFFFFF;
    bool needOffset = entry.localHeaderOffset == 0xFFFFFFFF;
    bool needDisk = startDisk == 0xFFFF;
    if (!needUncompressed && !needCompressed && !needOffset && !needDisk)
      return Error::success();
    uint64_t pos = 0;
    while (inBounds(pos, 4, extra.size())) {
      uint16_t id = read16(extra, pos);
      uint16_t length = read16(extra, pos + 2);
      if (!inBounds(pos + 4, length, extra.size()))
        break;
      if (id == 0x0001) {
        StringRef field = extra.substr(pos + 4, length);
        uint64_t fieldPos = 0;
        auto take = [&](uint64_t &value) {
          if (!inBounds(fieldPos, 8, field.size()))
            return false;
          value = read64(field, fieldPos);
          fieldPos += 8;
          return true;
        };
        uint64_t disk = 0;
        if ((needUncompressed && !take(entry.uncompressedSize)) ||
            (needCompressed && !take(entry.compressedSize)) ||
            (needOffset && !take(entry.localHeaderOffset)))
          break;
        if (needDisk) {
          if (!inBounds(fieldPos, 4, field.size()))
            break;
          disk = read32(field, fieldPos);
        }
        if (disk != 0)
          return error("multi-disk zip archives are not supported");
        return Error::success();
      }
      pos += 4 + length;
    }
    return error("member '" + shorten(entry.name) +
                 "': missing or corrupt zip64 extra field");
  }

  Error readMember(const ZipEntry &entry, Array &array) const {
    StringRef name = array.name;
    if (entry.flags & 0x1)
      return arrayError(name, "encrypted zip members are not supported");
    if (entry.method != kMethodStored && entry.method != kMethodDeflated)
      return arrayError(name, "unsupported zip compression method " +
                                  Twine(entry.method));

    uint64_t size = buffer.size();
    uint64_t local = entry.localHeaderOffset;
    if (!inBounds(local, kLocalHeaderSize, size))
      return arrayError(name, "truncated (local header out of bounds)");
    if (read32(buffer, local) != kLocalHeaderSig)
      return arrayError(name, "corrupt zip local header");
    uint16_t localNameLength = read16(buffer, local + 26);
    uint64_t dataOffset =
        local + kLocalHeaderSize + localNameLength + read16(buffer, local + 28);
    // As Python's zipfile does, insist that both copies of the name agree;
    // the names are not covered by the CRC.
    if (!inBounds(local + kLocalHeaderSize, localNameLength, size))
      return arrayError(name, "truncated (local header out of bounds)");
    if (buffer.substr(local + kLocalHeaderSize, localNameLength) != entry.name)
      return arrayError(name, "corrupt zip entry (local and central header "
                              "names differ)");
    if (!inBounds(dataOffset, entry.compressedSize, size))
      return arrayError(name, "truncated");
    StringRef raw = buffer.substr(dataOffset, entry.compressedSize);

    bool deflated = entry.method == kMethodDeflated;
    if (!deflated && entry.compressedSize != entry.uncompressedSize)
      return arrayError(name, "corrupt zip entry (stored sizes differ)");
    if (deflated &&
        entry.uncompressedSize / kMaxDeflateRatio > entry.compressedSize)
      return arrayError(name, "corrupt zip entry (implausible uncompressed "
                              "size)");

    MemberReader reader(raw, deflated);
    if (!reader.init())
      return arrayError(name, "cannot initialize zlib");
    if (Error err = parseNpy(reader, entry.uncompressedSize, deflated, array))
      return err;
    if (!reader.atEnd())
      return arrayError(name, "corrupt compressed data (trailing bytes)");
    if (reader.crc() != entry.crc)
      return arrayError(name, "CRC-32 mismatch (corrupt file)");
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
    return createStringError(
        std::make_error_code(std::errc::invalid_argument),
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

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

/// Minimum zip version for the features we use (2.0, as Python writes).
constexpr uint16_t kZipVersion = 20;
/// "Version made by": Unix, zip 2.0, so the external attributes are Unix
/// permission bits.
constexpr uint16_t kZipVersionMadeBy = (3 << 8) | kZipVersion;
/// MS-DOS date of 1980-01-01, the epoch of the format; a fixed timestamp
/// keeps the output deterministic.
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr uint16_t kDosTime = 0;
/// Sizes and offsets at or above this need zip64, which we do not write.
constexpr uint64_t kZip32Limit = 0xFFFFFFFF;

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
  uint64_t size;
  uint32_t crc;
  uint64_t localHeaderOffset;
};

void writeLE16(raw_ostream &os, uint16_t value) {
  char bytes[2];
  support::endian::write16le(bytes, value);
  os.write(bytes, 2);
}
void writeLE32(raw_ostream &os, uint32_t value) {
  char bytes[4];
  support::endian::write32le(bytes, value);
  os.write(bytes, 4);
}

uint32_t computeCrc(uint32_t crc, const char *data, uint64_t length) {
  // crc32_z(crc, nullptr, 0) would return the initial value, not crc.
  if (length == 0)
    return crc;
  return static_cast<uint32_t>(crc32_z(crc,
                                       reinterpret_cast<const Bytef *>(data),
                                       static_cast<z_size_t>(length)));
}

/// Writes a complete stored zip archive of \p members to \p os.
void writeZip(raw_ostream &os, std::vector<PendingMember> &members) {
  uint64_t offset = 0;
  for (PendingMember &member : members) {
    member.localHeaderOffset = offset;
    writeLE32(os, kLocalHeaderSig);
    writeLE16(os, kZipVersion);
    writeLE16(os, 0); // Flags.
    writeLE16(os, kMethodStored);
    writeLE16(os, kDosTime);
    writeLE16(os, kDosDate);
    writeLE32(os, member.crc);
    writeLE32(os, static_cast<uint32_t>(member.size));
    writeLE32(os, static_cast<uint32_t>(member.size));
    writeLE16(os, static_cast<uint16_t>(member.fileName.size()));
    writeLE16(os, 0); // Extra field length.
    os << member.fileName << member.npyHeader;
    os.write(member.array->data.data(), member.array->data.size());
    offset += kLocalHeaderSize + member.fileName.size() + member.size;
  }

  uint64_t cdOffset = offset;
  for (const PendingMember &member : members) {
    writeLE32(os, kCentralHeaderSig);
    writeLE16(os, kZipVersionMadeBy);
    writeLE16(os, kZipVersion);
    writeLE16(os, 0); // Flags.
    writeLE16(os, kMethodStored);
    writeLE16(os, kDosTime);
    writeLE16(os, kDosDate);
    writeLE32(os, member.crc);
    writeLE32(os, static_cast<uint32_t>(member.size));
    writeLE32(os, static_cast<uint32_t>(member.size));
    writeLE16(os, static_cast<uint16_t>(member.fileName.size()));
    writeLE16(os, 0);          // Extra field length.
    writeLE16(os, 0);          // Comment length.
    writeLE16(os, 0);          // Disk number start.
    writeLE16(os, 0);          // Internal attributes.
    writeLE32(os, 0644 << 16); // External attributes: rw-r--r--.
    writeLE32(os, static_cast<uint32_t>(member.localHeaderOffset));
    os << member.fileName;
    offset += kCentralHeaderSize + member.fileName.size();
  }

  writeLE32(os, kEndOfCentralDirSig);
  writeLE16(os, 0); // This disk.
  writeLE16(os, 0); // Disk with the central directory.
  writeLE16(os, static_cast<uint16_t>(members.size()));
  writeLE16(os, static_cast<uint16_t>(members.size()));
  writeLE32(os, static_cast<uint32_t>(offset - cdOffset));
  writeLE32(os, static_cast<uint32_t>(cdOffset));
  writeLE16(os, 0); // Comment length.
}

/// Validates the arrays and writes them atomically to \p path.
Error writeArchive(StringRef path,
                   ArrayRef<std::pair<StringRef, const Array *>> arrays) {
  auto error = [&](const Twine &message) { return makeError(path, message); };

  std::vector<PendingMember> members;
  members.reserve(arrays.size());
  StringSet<> seen;
  uint64_t totalSize = 0;
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
    member.size = member.npyHeader.size() + array->data.size();
    member.crc = computeCrc(
        computeCrc(0, member.npyHeader.data(), member.npyHeader.size()),
        array->data.data(), array->data.size());
    member.localHeaderOffset = 0;
    // Local header plus central directory entry plus data.
    totalSize += kLocalHeaderSize + kCentralHeaderSize +
                 2 * member.fileName.size() + member.size;
    members.push_back(std::move(member));
  }
  if (members.size() >= 0xFFFF || totalSize >= kZip32Limit)
    return error("archive too large (writing zip64 is not supported)");

  Expected<sys::fs::TempFile> temp =
      sys::fs::TempFile::create(path + ".tmp-%%%%%%%%");
  if (!temp)
    return error("cannot create temporary file: " + toString(temp.takeError()));

  std::error_code writeError;
  {
    raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    writeZip(os, members);
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
