//===- NpzTest.cpp - Tests for the .npz reader and writer -----------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// The fixtures under Inputs/ are produced by Inputs/make_fixtures.py; the
// expected values below recompute what that script stores.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/Npz.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace llvm;
using namespace rnn::npz;

#ifndef RNN_TEST_INPUTS
#error "RNN_TEST_INPUTS must point at unittests/Support/Inputs"
#endif

namespace {

std::string inputPath(StringRef name) {
  SmallString<256> path(RNN_TEST_INPUTS);
  sys::path::append(path, name);
  return std::string(path);
}

std::string readFileBytes(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    ADD_FAILURE() << "cannot read " << path.str();
    return "";
  }
  return (*buffer)->getBuffer().str();
}

/// Returns the error message of a failed read, or "<success>".
std::string readError(StringRef path) {
  Expected<ArrayMap> arrays = readNpz(path);
  if (arrays)
    return "<success>";
  return toString(arrays.takeError());
}

/// Expects \p message to be one line mentioning \p path and \p problem.
void expectErrorMessage(const std::string &message, StringRef path,
                        StringRef problem) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(StringRef(message).starts_with((path + ": ").str())) << message;
  EXPECT_NE(message.find(problem.str()), std::string::npos)
      << "message '" << message << "' lacks '" << problem.str() << "'";
}

/// A fresh directory, removed with its contents after the test.
class NpzFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::error_code ec = sys::fs::createUniqueDirectory("rnn-npz-test", dir);
    ASSERT_FALSE(ec) << ec.message();
  }
  void TearDown() override { sys::fs::remove_directories(dir); }

  std::string pathTo(StringRef name) const {
    SmallString<256> path(dir);
    sys::path::append(path, name);
    return std::string(path);
  }

  /// Returns the names of the entries of the test directory.
  std::vector<std::string> listDir() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      names.push_back(sys::path::filename(it->path()).str());
    EXPECT_FALSE(ec) << ec.message();
    return names;
  }

  void writeFile(StringRef name, StringRef contents) {
    std::error_code ec;
    raw_fd_ostream os(pathTo(name), ec);
    ASSERT_FALSE(ec) << ec.message();
    os << contents;
  }

  SmallString<128> dir;
};

void expectSameArray(const Array &actual, const Array &expected) {
  EXPECT_EQ(actual.name, expected.name);
  EXPECT_EQ(actual.dtype, expected.dtype)
      << dtypeName(actual.dtype).str() << " vs "
      << dtypeName(expected.dtype).str();
  EXPECT_EQ(actual.shape, expected.shape);
  EXPECT_EQ(actual.data, expected.data) << "array " << expected.name;
}

//===----------------------------------------------------------------------===//
// Array basics
//===----------------------------------------------------------------------===//

TEST(NpzArrayTest, DTypeNamesAndSizes) {
  EXPECT_EQ(dtypeName(DType::F32), "float32");
  EXPECT_EQ(dtypeName(DType::F64), "float64");
  EXPECT_EQ(dtypeName(DType::Bool), "bool");
  EXPECT_EQ(dtypeName(DType::U8), "uint8");
  EXPECT_EQ(dtypeName(DType::I32), "int32");
  EXPECT_EQ(dtypeName(DType::I64), "int64");
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_EQ(dtypeSize(DType::U16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
}

TEST(NpzArrayTest, ShapesAndFactories) {
  Array a = Array::f32("a", {2, 3});
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.numElements(), 6);
  EXPECT_EQ(a.elementSize(), 4u);
  EXPECT_EQ(a.data.size(), 24u);
  EXPECT_EQ(a.shapeString(), "[2, 3]");
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(a.as<float>()[i], 0.0f);

  Array scalar = Array::f64("s", {});
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.data.size(), 8u);
  EXPECT_EQ(scalar.shapeString(), "[]");

  Array empty = Array::zeros("e", DType::I64, {0, 4});
  EXPECT_EQ(empty.numElements(), 0);
  EXPECT_TRUE(empty.data.empty());
  EXPECT_EQ(empty.shapeString(), "[0, 4]");

  Array v = Array::fromValues<int64_t>("v", {3}, {7, -8, 9});
  EXPECT_EQ(v.dtype, DType::I64);
  EXPECT_EQ(v.shapeString(), "[3]");
  EXPECT_EQ(v.as<int64_t>()[1], -8);
}

TEST(NpzArrayTest, GetAsDouble) {
  Array b = Array::fromValues<bool>("b", {3}, {true, false, true});
  EXPECT_EQ(b.getAsDouble(0), 1.0);
  EXPECT_EQ(b.getAsDouble(1), 0.0);
  Array u = Array::fromValues<uint8_t>("u", {2}, {200, 7});
  EXPECT_EQ(u.getAsDouble(0), 200.0);
  Array i = Array::fromValues<int32_t>("i", {2}, {-5, 5});
  EXPECT_EQ(i.getAsDouble(0), -5.0);
  Array f = Array::fromValues<float>("f", {1}, {0.1f});
  EXPECT_EQ(f.getAsDouble(0), static_cast<double>(0.1f));
}

TEST(NpzArrayTest, FormatIndex) {
  EXPECT_EQ(formatIndex({2, 3, 4}, 0), "[0, 0, 0]");
  EXPECT_EQ(formatIndex({2, 3, 4}, 23), "[1, 2, 3]");
  EXPECT_EQ(formatIndex({2, 3, 4}, 13), "[1, 0, 1]");
  EXPECT_EQ(formatIndex({}, 0), "[]");
  EXPECT_EQ(formatIndex({5}, 4), "[4]");
}

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

std::vector<Array> makeRoundTripArrays() {
  std::vector<Array> arrays;
  arrays.push_back(Array::fromValues<float>(
      "f32", {2, 3}, {1.5f, -2.0f, 0.0f, 3.25f, -0.0f, 1e-30f}));
  arrays.push_back(Array::fromValues<double>(
      "f64", {4},
      {1.0 / 3, -1e300, std::numeric_limits<double>::infinity(),
       std::nan("")}));
  arrays.push_back(
      Array::fromValues<bool>("flags", {5}, {true, false, false, true, true}));
  arrays.push_back(Array::fromValues<uint8_t>("bytes", {3, 1}, {0, 128, 255}));
  arrays.push_back(Array::fromValues<int64_t>(
      "i64", {2}, {std::numeric_limits<int64_t>::min(), int64_t(1) << 40}));
  arrays.push_back(Array::fromValues<int32_t>("i32", {1, 1, 2}, {-7, 7}));
  arrays.push_back(Array::fromValues<float>("scalar", {}, {42.5f}));
  arrays.push_back(Array::zeros("empty", DType::F64, {0, 3}));
  arrays.push_back(Array::zeros("empty1d", DType::Bool, {0}));
  // Long first dimension: exercises the header growth padding.
  arrays.push_back(Array::zeros("long", DType::U8, {1234567}));
  return arrays;
}

TEST_F(NpzFileTest, RoundTrip) {
  std::vector<Array> arrays = makeRoundTripArrays();
  std::vector<const Array *> pointers;
  for (const Array &array : arrays)
    pointers.push_back(&array);
  std::string path = pathTo("round.npz");
  ASSERT_FALSE(errorToBool(writeNpz(path, pointers)));

  Expected<ArrayMap> read = readNpz(path);
  ASSERT_TRUE(static_cast<bool>(read)) << toString(read.takeError());
  ASSERT_EQ(read->size(), arrays.size());
  for (const Array &array : arrays) {
    auto it = read->find(array.name);
    ASSERT_NE(it, read->end()) << array.name;
    EXPECT_EQ(it->first, it->second.name);
    expectSameArray(it->second, array);
  }
  const Array &scalar = read->at("scalar");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.as<float>()[0], 42.5f);
  EXPECT_EQ(read->at("empty").shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(std::isnan(read->at("f64").as<double>()[3]));
  EXPECT_EQ(read->at("i64").as<int64_t>()[0],
            std::numeric_limits<int64_t>::min());
  // Only the output file is left: no temporary.
  EXPECT_EQ(listDir(), std::vector<std::string>{"round.npz"});
}

TEST_F(NpzFileTest, RoundTripArrayMapAndOverwrite) {
  std::string path = pathTo("map.npz");
  ArrayMap first;
  first["x"] = Array::fromValues<double>("x", {2}, {1.0, 2.0});
  ASSERT_FALSE(errorToBool(writeNpz(path, first)));

  ArrayMap second;
  second["y"] = Array::fromValues<uint8_t>("y", {2, 2}, {1, 2, 3, 4});
  second["z"] = Array::f32("z", {});
  ASSERT_FALSE(errorToBool(writeNpz(path, second)));

  Expected<ArrayMap> read = readNpz(path);
  ASSERT_TRUE(static_cast<bool>(read)) << toString(read.takeError());
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ(read->count("x"), 0u);
  expectSameArray(read->at("y"), second["y"]);
  expectSameArray(read->at("z"), second["z"]);
}

TEST_F(NpzFileTest, EmptyArchive) {
  std::string path = pathTo("none.npz");
  ASSERT_FALSE(errorToBool(writeNpz(path, ArrayMap())));
  Expected<ArrayMap> read = readNpz(path);
  ASSERT_TRUE(static_cast<bool>(read)) << toString(read.takeError());
  EXPECT_TRUE(read->empty());
}

/// More members than a zip end record counts (65535) make the writer use
/// zip64 records, which the reader follows.
TEST_F(NpzFileTest, ManyMembersRoundTripThroughZip64) {
  constexpr int kMembers = 70000;
  std::vector<Array> arrays;
  arrays.reserve(kMembers);
  for (int i = 0; i < kMembers; ++i)
    arrays.push_back(
        Array::fromValues<int32_t>("a" + std::to_string(i), {1}, {i}));
  std::vector<const Array *> pointers;
  for (const Array &array : arrays)
    pointers.push_back(&array);
  std::string path = pathTo("many.npz");
  ASSERT_FALSE(errorToBool(writeNpz(path, pointers)));
  std::string bytes = readFileBytes(path);
  // The zip64 end of central directory record's signature.
  EXPECT_NE(bytes.find(std::string("PK\x06\x06", 4)), std::string::npos);

  Expected<ArrayMap> read = readNpz(path);
  ASSERT_TRUE(static_cast<bool>(read)) << toString(read.takeError());
  ASSERT_EQ(read->size(), size_t(kMembers));
  for (int i : {0, 65534, 65535, kMembers - 1})
    EXPECT_EQ(read->at("a" + std::to_string(i)).as<int32_t>()[0], i);
}

/// The .npy members we write must be byte-identical to what numpy.savez
/// writes for the same array (same header text, padding and alignment).
TEST_F(NpzFileTest, MemberBytesMatchNumpy) {
  std::string path = pathTo("a.npz");
  Array a = Array::fromValues<float>("a", {2, 3},
                                     {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f});
  ASSERT_FALSE(errorToBool(writeNpz(path, {&a})));
  std::string ours = readFileBytes(path);
  // Local header (30 bytes) + "a.npy" + member; the size is at offset 18.
  ASSERT_GT(ours.size(), 35u);
  EXPECT_EQ(ours.substr(30, 5), "a.npy");
  uint32_t memberSize = support::endian::read32le(ours.data() + 18);
  ASSERT_LE(35u + memberSize, ours.size());
  std::string member = ours.substr(35, memberSize);
  EXPECT_EQ(member.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ((memberSize - a.data.size()) % 64, 0u) << "header not aligned";

  std::string numpy = readFileBytes(inputPath("savez.npz"));
  EXPECT_NE(numpy.find(member), std::string::npos)
      << "our .npy member does not occur in numpy's savez output";
}

//===----------------------------------------------------------------------===//
// Fixtures written by numpy
//===----------------------------------------------------------------------===//

template <typename T>
void expectValues(const ArrayMap &arrays, StringRef name, DType dtype,
                  std::vector<int64_t> shape, T (*valueAt)(int64_t)) {
  SCOPED_TRACE(name.str());
  auto it = arrays.find(name.str());
  ASSERT_NE(it, arrays.end());
  const Array &array = it->second;
  EXPECT_EQ(array.name, name);
  ASSERT_EQ(array.dtype, dtype) << dtypeName(array.dtype).str();
  ASSERT_EQ(array.shape, shape);
  ASSERT_EQ(array.data.size(), array.numElements() * sizeof(T));
  for (int64_t i = 0, e = array.numElements(); i != e; ++i)
    EXPECT_EQ(array.as<T>()[i], valueAt(i)) << "at flat index " << i;
}

class NpzFixtureTest : public ::testing::TestWithParam<const char *> {};

TEST_P(NpzFixtureTest, ValuesMatchGenerator) {
  std::string path = inputPath(GetParam());
  Expected<ArrayMap> read = readNpz(path);
  ASSERT_TRUE(static_cast<bool>(read)) << toString(read.takeError());
  const ArrayMap &arrays = *read;
  EXPECT_EQ(arrays.size(), 9u);

  expectValues<float>(arrays, "a", DType::F32, {2, 3}, [](int64_t i) {
    return 0.5f * static_cast<float>(i) - 1.0f;
  });
  expectValues<double>(arrays, "b", DType::F64, {2, 3, 4},
                       [](int64_t i) { return static_cast<double>(i) / 7.0; });
  expectValues<bool>(arrays, "c", DType::Bool, {5},
                     [](int64_t i) { return i % 2 == 0; });
  expectValues<uint8_t>(arrays, "d", DType::U8, {10},
                        [](int64_t i) { return static_cast<uint8_t>(3 * i); });
  expectValues<int32_t>(arrays, "e", DType::I32, {3, 2},
                        [](int64_t i) { return static_cast<int32_t>(i - 2); });
  expectValues<int64_t>(arrays, "f", DType::I64, {6}, [](int64_t i) {
    return i == 5 ? int64_t(1) << 40 : i - 3;
  });
  expectValues<float>(arrays, "g", DType::F32, {},
                      [](int64_t) { return 3.25f; });
  expectValues<float>(arrays, "h", DType::F32, {0, 4},
                      [](int64_t) { return 0.0f; });
  expectValues<double>(arrays, "big", DType::F64, {200, 5}, [](int64_t i) {
    return static_cast<double>(i % 17) / 4.0;
  });
}

INSTANTIATE_TEST_SUITE_P(Numpy, NpzFixtureTest,
                         ::testing::Values("savez.npz",
                                           "savez_compressed.npz"));

TEST(NpzReadTest, NpyVersions2And3) {
  Expected<ArrayMap> read = readNpz(inputPath("npy_versions.npz"));
  ASSERT_TRUE(static_cast<bool>(read)) << toString(read.takeError());
  expectValues<double>(*read, "v2", DType::F64, {4},
                       [](int64_t i) { return static_cast<double>(i) + 0.5; });
  expectValues<double>(*read, "v3", DType::F64, {4}, [](int64_t i) {
    return 2.0 * (static_cast<double>(i) + 0.5);
  });
}

TEST(NpzReadTest, HandWrittenHeader) {
  // '=i4', double quotes, Python 2 "2L" dimensions, keys out of order.
  Expected<ArrayMap> read = readNpz(inputPath("hand_header.npz"));
  ASSERT_TRUE(static_cast<bool>(read)) << toString(read.takeError());
  expectValues<int32_t>(*read, "m", DType::I32, {2, 2},
                        [](int64_t i) { return static_cast<int32_t>(i); });
}

TEST(NpzReadTest, Zip64Records) {
  Expected<ArrayMap> read = readNpz(inputPath("zip64.npz"));
  ASSERT_TRUE(static_cast<bool>(read)) << toString(read.takeError());
  expectValues<int64_t>(*read, "z", DType::I64, {5},
                        [](int64_t i) { return 11 * i; });
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(NpzErrorTest, MissingFile) {
  std::string path = inputPath("does-not-exist.npz");
  expectErrorMessage(readError(path), path, "No such file or directory");
}

TEST(NpzErrorTest, NotAZipFile) {
  std::string path = inputPath("notzip.npz");
  expectErrorMessage(readError(path), path, "not a zip file");
}

TEST(NpzErrorTest, TruncatedFile) {
  std::string path = inputPath("truncated.npz");
  expectErrorMessage(readError(path), path, "truncated");
}

TEST(NpzErrorTest, FortranOrder) {
  std::string path = inputPath("fortran.npz");
  expectErrorMessage(readError(path), path,
                     "array 'x': fortran-ordered arrays are not supported");
}

TEST(NpzErrorTest, BigEndian) {
  std::string path = inputPath("bigendian.npz");
  expectErrorMessage(readError(path), path,
                     "array 'x': unsupported dtype '>f8'");
}

TEST(NpzErrorTest, UnsupportedDType) {
  std::string path = inputPath("float16.npz");
  expectErrorMessage(readError(path), path,
                     "array 'x': unsupported dtype '<f2'");
}

TEST(NpzErrorTest, DataSizeMismatch) {
  std::string path = inputPath("size_mismatch.npz");
  expectErrorMessage(readError(path), path, "array 's': data size mismatch");
}

TEST(NpzErrorTest, Directory) {
  std::string path = RNN_TEST_INPUTS;
  EXPECT_NE(readError(path), "<success>");
}

/// Every proper prefix of a valid archive must be rejected cleanly.
TEST(NpzErrorTest, EveryTruncationFails) {
  for (const char *name : {"savez.npz", "savez_compressed.npz", "zip64.npz"}) {
    std::string bytes = readFileBytes(inputPath(name));
    ASSERT_FALSE(bytes.empty());
    for (size_t length = 0; length < bytes.size(); ++length) {
      Expected<ArrayMap> read =
          readNpzFromBuffer(StringRef(bytes).take_front(length), "cut.npz");
      ASSERT_FALSE(static_cast<bool>(read))
          << name << " truncated to " << length << " bytes was accepted";
      std::string message = toString(read.takeError());
      ASSERT_TRUE(StringRef(message).starts_with("cut.npz: ")) << message;
      ASSERT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

/// Damaging any single byte either is detected or leaves the decoded arrays
/// unchanged (e.g. a timestamp byte); it never yields wrong data or crashes.
TEST(NpzErrorTest, EveryByteCorruptionIsDetectedOrHarmless) {
  for (const char *name : {"savez.npz", "savez_compressed.npz"}) {
    std::string bytes = readFileBytes(inputPath(name));
    Expected<ArrayMap> original = readNpzFromBuffer(bytes, name);
    ASSERT_TRUE(static_cast<bool>(original)) << toString(original.takeError());
    size_t detected = 0;
    for (size_t pos = 0; pos < bytes.size(); ++pos) {
      for (unsigned char mask : {0x01, 0x80, 0xFF}) {
        std::string damaged = bytes;
        damaged[pos] = static_cast<char>(damaged[pos] ^ mask);
        Expected<ArrayMap> read = readNpzFromBuffer(damaged, "bad.npz");
        if (!read) {
          consumeError(read.takeError());
          ++detected;
          continue;
        }
        ASSERT_EQ(read->size(), original->size())
            << name << ": byte " << pos << " ^ " << int(mask);
        for (const auto &kv : *original) {
          auto it = read->find(kv.first);
          ASSERT_NE(it, read->end())
              << name << ": byte " << pos << " ^ " << int(mask);
          ASSERT_EQ(it->second.dtype, kv.second.dtype);
          ASSERT_EQ(it->second.shape, kv.second.shape);
          ASSERT_EQ(it->second.data, kv.second.data)
              << name << ": byte " << pos << " ^ " << int(mask)
              << " silently changed array " << kv.first;
        }
      }
    }
    // Most bytes are data or structure; timestamps, attributes and the
    // like are not checked.
    EXPECT_GT(detected, bytes.size() * 3 / 2) << name;
  }
}

TEST_F(NpzFileTest, WriteIntoMissingDirectoryFails) {
  Array a = Array::f32("a", {2});
  std::string path = pathTo("no/such/dir/out.npz");
  Error err = writeNpz(path, {&a});
  ASSERT_TRUE(static_cast<bool>(err));
  expectErrorMessage(toString(std::move(err)), path, "");
  EXPECT_FALSE(sys::fs::exists(pathTo("no")));
  EXPECT_TRUE(listDir().empty());
}

TEST_F(NpzFileTest, InvalidArraysAreRejectedWithoutTouchingTheFile) {
  std::string path = pathTo("keep.npz");
  Array good = Array::fromValues<float>("good", {1}, {1.0f});
  ASSERT_FALSE(errorToBool(writeNpz(path, {&good})));
  std::string before = readFileBytes(path);

  Array badSize = Array::f32("bad", {2, 2});
  badSize.data.pop_back();
  Error err = writeNpz(path, {&good, &badSize});
  ASSERT_TRUE(static_cast<bool>(err));
  expectErrorMessage(toString(std::move(err)), path,
                     "array 'bad': data size mismatch");

  Array negative = Array::f32("neg", {});
  negative.shape = {-1};
  err = writeNpz(path, {&negative});
  ASSERT_TRUE(static_cast<bool>(err));
  expectErrorMessage(toString(std::move(err)), path, "invalid shape");

  Array duplicate = Array::f32("good", {3});
  err = writeNpz(path, {&good, &duplicate});
  ASSERT_TRUE(static_cast<bool>(err));
  expectErrorMessage(toString(std::move(err)), path, "duplicate");

  Array unnamed = Array::f32("", {3});
  err = writeNpz(path, {&unnamed});
  ASSERT_TRUE(static_cast<bool>(err));
  expectErrorMessage(toString(std::move(err)), path, "empty name");

  EXPECT_EQ(readFileBytes(path), before);
  EXPECT_EQ(listDir(), std::vector<std::string>{"keep.npz"});
}

TEST_F(NpzFileTest, WriteOverDirectoryFailsAndCleansUp) {
  // Renaming onto a non-empty directory fails after the data was written.
  std::string path = pathTo("target");
  ASSERT_FALSE(sys::fs::create_directory(path));
  writeFile("target/inner", "x");
  Array a = Array::f32("a", {2});
  Error err = writeNpz(path, {&a});
  ASSERT_TRUE(static_cast<bool>(err));
  expectErrorMessage(toString(std::move(err)), path, "");
  EXPECT_EQ(listDir(), std::vector<std::string>{"target"});
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

TEST(NpzCompareTest, IdenticalArraysPass) {
  Array a = Array::fromValues<float>("a", {2, 2}, {1, 2, 3, 4});
  CompareResult result = compareArrays(a, a, 0.0);
  EXPECT_TRUE(result.passed);
  EXPECT_FALSE(result.shapeMismatch);
  EXPECT_EQ(result.maxAbsError, 0.0);
  EXPECT_EQ(result.maxScaledError, 0.0);
}

TEST(NpzCompareTest, Float32AgainstFloat64) {
  Array out = Array::fromValues<float>("x", {3}, {0.1f, 0.2f, 100.3f});
  Array ref = Array::fromValues<double>("x", {3}, {0.1, 0.2, 100.3});
  CompareResult loose = compareArrays(out, ref, 1e-6);
  EXPECT_TRUE(loose.passed);
  EXPECT_GT(loose.maxAbsError, 0.0);
  EXPECT_LT(loose.maxScaledError, 1e-7);
  CompareResult strict = compareArrays(out, ref, 1e-12);
  EXPECT_FALSE(strict.passed);
}

TEST(NpzCompareTest, ToleranceBoundaryAndWorstIndex) {
  // Errors scaled by (1 + |ref|): 0.5/1 = 0.5, 3/(1+9) = 0.3, 1/(1+1) = 0.5.
  Array ref = Array::fromValues<double>("x", {2, 3}, {0, 9, 1, 0, 0, 0});
  Array out = Array::fromValues<double>("x", {2, 3}, {0, 12, 0, 0, 0.5, 0});
  CompareResult result = compareArrays(out, ref, 0.4);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.maxAbsError, 3.0);
  EXPECT_EQ(result.maxScaledError, 0.5);
  EXPECT_EQ(result.worstIndex, 2); // First element with the largest error.
  EXPECT_EQ(formatIndex(ref.shape, result.worstIndex), "[0, 2]");
  EXPECT_TRUE(compareArrays(out, ref, 0.5).passed);
}

TEST(NpzCompareTest, ShapeMismatch) {
  Array out = Array::f32("x", {2, 3});
  Array ref = Array::f32("x", {3, 2});
  CompareResult result = compareArrays(out, ref, 1.0);
  EXPECT_FALSE(result.passed);
  EXPECT_TRUE(result.shapeMismatch);
  Array scalar = Array::f32("x", {});
  Array one = Array::f32("x", {1});
  EXPECT_TRUE(compareArrays(scalar, one, 1.0).shapeMismatch);
}

TEST(NpzCompareTest, BoolAgainstNumbers) {
  Array out = Array::fromValues<bool>("b", {3}, {true, false, true});
  Array ref = Array::fromValues<uint8_t>("b", {3}, {1, 0, 1});
  EXPECT_TRUE(compareArrays(out, ref, 0.0).passed);
  Array wrong = Array::fromValues<double>("b", {3}, {1, 1, 1});
  CompareResult result = compareArrays(out, wrong, 1e-4);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.worstIndex, 1);
}

TEST(NpzCompareTest, NaNAndInfinity) {
  double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  Array ref = Array::fromValues<double>("x", {3}, {nan, inf, -inf});
  EXPECT_TRUE(compareArrays(ref, ref, 0.0).passed);
  Array finite = Array::fromValues<double>("x", {3}, {nan, 1e300, -inf});
  CompareResult result = compareArrays(finite, ref, 1e10);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.worstIndex, 1);
  EXPECT_TRUE(std::isinf(result.maxScaledError));
  Array notNan = Array::fromValues<double>("x", {3}, {0, inf, -inf});
  EXPECT_FALSE(compareArrays(notNan, ref, 1e10).passed);
  EXPECT_FALSE(compareArrays(ref, notNan, 1e10).passed);
}

TEST(NpzCompareTest, EmptyArraysPass) {
  Array a = Array::f32("x", {0, 5});
  Array b = Array::f64("x", {0, 5});
  CompareResult result = compareArrays(a, b, 0.0);
  EXPECT_TRUE(result.passed);
  EXPECT_EQ(result.worstIndex, -1);
}

} // namespace
