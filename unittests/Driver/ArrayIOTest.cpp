//===- ArrayIOTest.cpp - Tests for a compiled function's npz arrays -------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// Signatures are written by hand here, as readSignature would give them;
// the expected values are computed in each test from the arrays it builds.
//
//===----------------------------------------------------------------------===//

#include "rnn/Driver/ArrayIO.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace rnn::driver;
namespace npz = rnn::npz;

namespace {

NamedTensor tensor(std::string name, std::vector<int64_t> shape,
                   npz::DType dtype = npz::DType::F32, int64_t layer = -1,
                   int64_t stacked = 0) {
  NamedTensor t;
  t.name = name;
  t.layer = layer;
  t.array = stacked || layer < 0 ? name : name + "_l" + std::to_string(layer);
  t.stacked = stacked;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

std::string message(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

std::vector<float> floats(const std::vector<char> &bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

TEST(ArrayIO, ReadsALayerSliceOfAStackedArray) {
  // h0 of layer 1 of 2, stacked as [2, 3, 2]: elements 6..11.
  NamedTensor h0 = tensor("h0", {3, 2}, npz::DType::F32, 1, 2);
  std::vector<float> values(12);
  for (int i = 0; i < 12; ++i)
    values[i] = 0.5f * i;
  npz::Array array = npz::Array::fromValues<float>("h0", {2, 3, 2}, values);
  std::vector<char> bytes;
  ASSERT_EQ(message(readArgument(h0, array, "in.npz", false, bytes)), "");
  EXPECT_EQ(floats(bytes),
            std::vector<float>(values.begin() + 6, values.end()));
}

TEST(ArrayIO, RefusesAShapeOrDtypeThatIsNotTheArgument) {
  NamedTensor x = tensor("x", {2, 3, 4});
  npz::Array wrongShape = npz::Array::f32("x", {2, 4, 3});
  std::vector<char> bytes;
  EXPECT_EQ(message(readArgument(x, wrongShape, "in.npz", false, bytes)),
            "in.npz: array 'x' has shape [2, 4, 3], expected [2, 3, 4]");
  npz::Array wrongType = npz::Array::f64("x", {2, 3, 4});
  EXPECT_EQ(message(readArgument(x, wrongType, "in.npz", true, bytes)),
            "in.npz: array 'x' has dtype float64, expected float32 (the "
            "model's element type; --dtype=f32|f64 sets a preset's)");
}

TEST(ArrayIO, ReadsAMaskFromUint8AsBool) {
  NamedTensor mask = tensor("is_init", {2, 2}, npz::DType::Bool);
  npz::Array array =
      npz::Array::fromValues<uint8_t>("is_init", {2, 2}, {0, 7, 1, 0});
  std::vector<char> bytes;
  ASSERT_EQ(message(readArgument(mask, array, "in.npz", false, bytes)), "");
  EXPECT_EQ(bytes, (std::vector<char>{0, 1, 1, 0}));
}

TEST(ArrayIO, GeneratesEachArrayFromItsNameNotItsPosition) {
  Generator gen{/*seed=*/7, /*resetProb=*/0.0, /*hiddenSize=*/16};
  NamedTensor x = tensor("x", {4, 5});
  NamedTensor y = tensor("y0", {4, 5});
  std::vector<char> a, b, c, other;
  ASSERT_EQ(message(generateArgument(x, gen, a)), "");
  ASSERT_EQ(message(generateArgument(y, gen, other)), "");
  ASSERT_EQ(message(generateArgument(x, gen, b)), "");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other);
  gen.seed = 8;
  ASSERT_EQ(message(generateArgument(x, gen, c)), "");
  EXPECT_NE(a, c);
}

TEST(ArrayIO, GeneratesWithinEachRolesBound) {
  // Parameters in 1/sqrt(H) = 0.25, initial states in 0.5, others in 1;
  // 1000 draws come within 10% of each bound.
  Generator gen{/*seed=*/3, /*resetProb=*/0.0, /*hiddenSize=*/16};
  struct {
    NamedTensor t;
    float bound;
  } cases[] = {{tensor("weight_ih_l0", {1000}), 0.25f},
               {tensor("h0", {1000}, npz::DType::F32, 0, 1), 0.5f},
               {tensor("x", {1000}), 1.0f}};
  for (auto &[t, bound] : cases) {
    std::vector<char> bytes;
    ASSERT_EQ(message(generateArgument(t, gen, bytes)), "");
    float largest = 0;
    for (float v : floats(bytes))
      largest = std::max(largest, std::fabs(v));
    EXPECT_LE(largest, bound) << t.name;
    EXPECT_GT(largest, 0.9f * bound) << t.name;
  }
}

TEST(ArrayIO, GeneratesMasksAndTheDropoutKey) {
  std::vector<char> bytes;
  NamedTensor mask = tensor("is_init", {10, 10}, npz::DType::Bool);
  Generator never{1, 0.0, 4}, always{1, 1.0, 4};
  ASSERT_EQ(message(generateArgument(mask, never, bytes)), "");
  EXPECT_EQ(std::count(bytes.begin(), bytes.end(), 1), 0);
  ASSERT_EQ(message(generateArgument(mask, always, bytes)), "");
  EXPECT_EQ(std::count(bytes.begin(), bytes.end(), 1), 100);

  NamedTensor rng = tensor("rng", {2}, npz::DType::I64);
  Generator seeded{42, 0.0, 4};
  ASSERT_EQ(message(generateArgument(rng, seeded, bytes)), "");
  int64_t words[2];
  std::memcpy(words, bytes.data(), sizeof(words));
  EXPECT_EQ(words[0], 42);
  EXPECT_EQ(words[1], 0);
  NamedTensor other = tensor("steps", {2}, npz::DType::I64);
  EXPECT_NE(message(generateArgument(other, seeded, bytes)).find("'steps'"),
            std::string::npos);
}

TEST(ArrayIO, ChecksTheInputFileAgainstTheSignature) {
  Signature signature;
  signature.args = {tensor("x", {2, 1, 3}),
                    tensor("h0", {1, 4}, npz::DType::F32, 0, 1),
                    tensor("grad_y", {2, 1, 4})};
  signature.results = {tensor("y", {2, 1, 4})};
  npz::ArrayMap inputs;
  inputs.emplace("x", npz::Array::f32("x", {2, 1, 3}));
  // The initial state may be left out; inference reads no cotangent.
  EXPECT_EQ(message(checkInputArrays(inputs, signature, false, "in.npz",
                                     false)),
            "");
  EXPECT_EQ(message(checkInputArrays(inputs, signature, true, "in.npz",
                                     false)),
            "in.npz: missing array 'grad_y'");
  inputs.emplace("h_reset", npz::Array::f32("h_reset", {1, 4}));
  EXPECT_EQ(message(checkInputArrays(inputs, signature, false, "in.npz",
                                     true)),
            "in.npz: array 'h_reset' is not an input of the model (inputs: "
            "'x', 'h0'); a reset state needs --reset-to=step or column");
}

TEST(ArrayIO, GathersLayersIntoOneStackedArray) {
  Signature signature;
  signature.results = {tensor("y", {2}),
                       tensor("h_n", {2}, npz::DType::F32, 0, 2),
                       tensor("h_n", {2}, npz::DType::F32, 1, 2)};
  auto bytesOf = [](std::vector<float> v) {
    std::vector<char> bytes(v.size() * sizeof(float));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return bytes;
  };
  std::vector<std::vector<char>> values = {
      bytesOf({1, 2}), bytesOf({3, 4}), bytesOf({5, 6})};
  std::vector<npz::Array> arrays = gatherResults(signature, values);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].name, "y");
  EXPECT_EQ(arrays[1].name, "h_n");
  EXPECT_EQ(arrays[1].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(floats(arrays[1].data), (std::vector<float>{3, 4, 5, 6}));
}

} // namespace
