//===- RematTest.cpp - remat policies and their cost model ----------------===//
//
// Unit tests of the pieces of rnn-rematerialize that the budget policy is
// built from: parsing policies, applying a plan, and the cost model that
// ranks plans (FLOPs recomputed, memory traffic), and the chunk a kernel
// of dynamic shape runs per call. Expected costs are computed here from
// the layer shapes, not taken from the code under test.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/SizeExpr.h"
#include "rnn/Dialect/RNNAttrs.h"
#include "rnn/InitAll.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::rnn;

namespace {

// T = 6, B = 2, I = 3, H = 4 (4H = 16).
constexpr const char *kLSTM = R"mlir(
func.func @f(%x: tensor<6x2x3xf32>, %r: tensor<6x2xi1>, %h0: tensor<2x4xf32>,
    %c0: tensor<2x4xf32>, %wi: tensor<16x3xf32>, %wh: tensor<16x4xf32>,
    %bi: tensor<16xf32>, %bh: tensor<16xf32>)
    -> (tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y, %h, %c = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh)
      : (tensor<6x2x3xf32>, tensor<6x2xi1>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<16x3xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y, %h, %c : tensor<6x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
)mlir";

class RematTest : public ::testing::Test {
protected:
  RematTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The training function of `source` (kLSTM), as rnn-autodiff leaves it,
  /// with GEMM blocks of `gemmRows` / B steps.
  OwningOpRef<ModuleOp> trainingModule(int64_t gemmRows = 2,
                                       const std::string &source = kLSTM) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    PassManager pm(&context);
    RNNAutodiffPassOptions options;
    options.gemmRows = gemmRows;
    pm.addPass(createRNNAutodiffPass(options));
    EXPECT_TRUE(succeeded(pm.run(*module)));
    return module;
  }

  static RematPlan chunk(int64_t k) { return {RematPlan::Kind::Chunk, k}; }

  MLIRContext context;
};

TEST_F(RematTest, ParsesEveryPolicy) {
  std::string message;
  FailureOr<RematPolicy> none = parseRematPolicy("none", message);
  ASSERT_TRUE(succeeded(none));
  EXPECT_EQ(none->plan.kind, RematPlan::Kind::None);
  EXPECT_FALSE(none->budget);

  FailureOr<RematPolicy> gates = parseRematPolicy("gates", message);
  ASSERT_TRUE(succeeded(gates));
  EXPECT_EQ(gates->plan.kind, RematPlan::Kind::Gates);

  FailureOr<RematPolicy> chunked = parseRematPolicy("chunk:12", message);
  ASSERT_TRUE(succeeded(chunked));
  EXPECT_EQ(chunked->plan.kind, RematPlan::Kind::Chunk);
  EXPECT_EQ(chunked->plan.chunk, 12);
  EXPECT_EQ(chunked->plan.str(), "chunk:12");

  FailureOr<RematPolicy> budget = parseRematPolicy("budget:4096", message);
  ASSERT_TRUE(succeeded(budget));
  ASSERT_TRUE(budget->budget);
  EXPECT_EQ(*budget->budget, 4096);
}

TEST_F(RematTest, RejectsMalformedPolicies) {
  for (const char *bad :
       {"chunk:0", "chunk:-3", "chunk:", "chunk:4x", "budget:", "budget:0",
        "budget:1e6", "all", "gates:2", ""}) {
    std::string message;
    EXPECT_TRUE(failed(parseRematPolicy(bad, message))) << bad;
    EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos)
        << "message does not quote the policy: " << message;
  }
}

TEST_F(RematTest, CostIsTheReplayedForwardPlusTraffic) {
  // Blocks of one step (gemm-rows = B = 2).
  OwningOpRef<ModuleOp> module = trainingModule();
  const double T = 6, B = 2, I = 3, H = 4, G = 16;
  // Both GEMMs of every step and ~10 operations per gate element.
  double replay = T * B * (2 * G * (I + H) + 10 * G);
  // W_ih packed (read and written, 4-byte floats) by the projection GEMM
  // of each of the T / P = 6 blocks the replay issues, whatever the chunk.
  double packing = 6 * 2 * 4 * G * I;
  // A chunk of K steps of gates and cells, in bytes.
  double stepScratch = 4 * B * (G + H);
  RematCostModel roomy; // every chunk fits the cache
  RematCostModel tiny;
  tiny.cacheBytes = 2 * stepScratch;
  tiny.flopsPerByte = 3;
  auto costOf = [&](RematPlan plan, const RematCostModel &model) {
    return rematCost(*module, plan, model);
  };
  double fpb = roomy.flopsPerByte;
  EXPECT_EQ(costOf({RematPlan::Kind::None, 0}, roomy), 0);
  EXPECT_DOUBLE_EQ(costOf({RematPlan::Kind::Gates, 0}, roomy),
                   replay + fpb * packing);
  EXPECT_DOUBLE_EQ(costOf(chunk(1), roomy), replay + fpb * packing);
  EXPECT_DOUBLE_EQ(costOf(chunk(4), roomy), replay + fpb * packing);
  EXPECT_DOUBLE_EQ(costOf(chunk(6), roomy), replay + fpb * packing);
  // K beyond T costs what K = T does.
  EXPECT_DOUBLE_EQ(costOf(chunk(100), roomy), costOf(chunk(6), roomy));
  // With a cache of two steps, chunks of 4 (two of them: 4 and 2 steps,
  // both counted as 4) spill 2 steps each, written and read back.
  EXPECT_DOUBLE_EQ(costOf(chunk(2), tiny), replay + 3 * packing);
  EXPECT_DOUBLE_EQ(costOf(chunk(4), tiny),
                   replay + 3 * (packing + 2 * 2 * 2 * stepScratch));
}

/// `text` with each `from` replaced by `to`.
std::string replaceAll(std::string text, const std::string &from,
                       const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

TEST_F(RematTest, TrafficCountsTheBytesOfEachType) {
  const double T = 6, B = 2, I = 3, H = 4, G = 16;
  double replay = T * B * (2 * G * (I + H) + 10 * G);
  RematCostModel model;
  model.cacheBytes = 0; // every chunk spills
  model.flopsPerByte = 1;
  // chunk:3: two chunks of 3 steps, each written and read back; W_ih
  // packed by 6 block GEMMs; bf16 gates take 2 bytes, f64 values 8.
  auto expected = [&](double elementBytes, double gateBytes) {
    double packing = 6 * 2 * elementBytes * G * I;
    double spill = 2 * 2 * 3 * B * (gateBytes * G + elementBytes * H);
    return replay + packing + spill;
  };
  std::string bf16 = replaceAll(kLSTM, "weights(%wi, %wh, %bi, %bh)",
                                "weights(%wi, %wh, %bi, %bh) {storage = bf16}");
  std::string f64 = replaceAll(kLSTM, "f32", "f64");
  ASSERT_NE(bf16, kLSTM);
  EXPECT_DOUBLE_EQ(rematCost(*trainingModule(2), chunk(3), model),
                   expected(4, 4));
  EXPECT_DOUBLE_EQ(rematCost(*trainingModule(2, bf16), chunk(3), model),
                   expected(4, 2));
  EXPECT_DOUBLE_EQ(rematCost(*trainingModule(2, f64), chunk(3), model),
                   expected(8, 8));
}

TEST_F(RematTest, ChunksAreWholeBlocks) {
  // Blocks of two steps (gemm-rows = 4): 3 projection GEMMs per replay,
  // and chunk:3 runs as chunk:4.
  OwningOpRef<ModuleOp> module = trainingModule(4);
  const double G = 16, I = 3;
  RematCostModel model;
  double none = rematCost(*module, {RematPlan::Kind::None, 0}, model);
  double k2 = rematCost(*module, chunk(2), model);
  EXPECT_DOUBLE_EQ(rematCost(*module, chunk(1), model), k2);
  EXPECT_DOUBLE_EQ(rematCost(*module, chunk(3), model),
                   rematCost(*module, chunk(4), model));
  OwningOpRef<ModuleOp> perStep = trainingModule(2);
  // Half the projection GEMMs of blocks of one step: half their packing.
  EXPECT_DOUBLE_EQ(rematCost(*perStep, chunk(2), model) - k2,
                   model.flopsPerByte * 3 * 2 * 4 * G * I);
  EXPECT_GT(k2, none);
  applyRematPlan(*module, chunk(3));
  ASSERT_TRUE(succeeded(verify(*module)));
  auto grad = module->lookupSymbol<func::FuncOp>("f_grad");
  ASSERT_TRUE(grad);
  EXPECT_EQ(grad->getAttrOfType<StringAttr>("rnn.remat").getValue(), "chunk:4");
}

TEST(DynamicChunkTest, EachCallRunsWholeBlocksUpToT) {
  // The chunk a call of a dynamic kernel runs (K) and its chunk count (N):
  // whole GEMM blocks unless all of T, at least the steps asked for (or
  // T), less than one block more, and N chunks of K cover T exactly once.
  for (int64_t chunk : {1, 3, 8, 64})
    for (int64_t batch : {1, 3, 64, 300})
      for (int64_t steps = 1; steps <= 70; ++steps) {
        CallShape call = SizeSymbols{256, chunk}.at(steps, batch);
        ASSERT_EQ(call.P, gemmBlockSteps(steps, batch, 256));
        EXPECT_TRUE(call.K == steps || call.K % call.P == 0)
            << steps << " " << batch << " " << chunk;
        EXPECT_GE(call.K, std::min(chunk, steps));
        EXPECT_LT(call.K, chunk + call.P);
        EXPECT_LE(call.K, steps);
        EXPECT_GE(call.N * call.K, steps);
        EXPECT_LT((call.N - 1) * call.K, steps);
      }
}

TEST(DynamicChunkTest, SizesReadKAndN) {
  SizeExpr size = SizeExpr::constant(420) * SizeExpr::symbolB() *
                      SizeExpr::symbolK() +
                  SizeExpr::constant(84) * SizeExpr::symbolB() *
                      SizeExpr::symbolN() +
                  SizeExpr::constant(84) * SizeExpr::symbolT() *
                      SizeExpr::symbolB();
  EXPECT_EQ(size.str(), "84*T*B + 420*B*K + 84*B*N");
  CallShape call{9, 5, 8, 8, 2};
  EXPECT_EQ(size.evaluate(call), 84 * 9 * 5 + 420 * 5 * 8 + 84 * 5 * 2);
  // isAtMost knows of K and N only that each is at least 1 (not K <= T).
  EXPECT_TRUE((SizeExpr::symbolB() * SizeExpr::symbolK())
                  .isAtMost(SizeExpr::symbolB() * SizeExpr::symbolK() +
                            SizeExpr::symbolN()));
  EXPECT_FALSE(SizeExpr::symbolK().isAtMost(SizeExpr::symbolT()));
}

TEST_F(RematTest, LongChunksPaySpills) {
  OwningOpRef<ModuleOp> module = trainingModule();
  RematCostModel model;
  model.cacheBytes = 4 * (2 * (16 + 4)) * 3; // three steps of scratch
  double k1 = rematCost(*module, chunk(1), model);
  double k3 = rematCost(*module, chunk(3), model);
  double k6 = rematCost(*module, chunk(6), model);
  EXPECT_DOUBLE_EQ(k3, k1);
  EXPECT_LT(k3, k6);
  EXPECT_GT(k3, rematCost(*module, {RematPlan::Kind::None, 0}, model));
}

TEST_F(RematTest, AppliedPlanIsRecordedAndVerifies) {
  // K beyond T is recorded as T, the plan applied.
  std::pair<RematPlan, const char *> cases[] = {
      {RematPlan{RematPlan::Kind::Gates, 0}, "gates"},
      {chunk(4), "chunk:4"},
      {chunk(100), "chunk:6"}};
  for (auto [plan, applied] : cases) {
    OwningOpRef<ModuleOp> module = trainingModule();
    applyRematPlan(*module, plan);
    ASSERT_TRUE(succeeded(verify(*module))) << plan.str();
    auto grad = module->lookupSymbol<func::FuncOp>("f_grad");
    ASSERT_TRUE(grad);
    auto recorded = grad->getAttrOfType<StringAttr>("rnn.remat");
    ASSERT_TRUE(recorded) << plan.str();
    EXPECT_EQ(recorded.getValue(), applied);
  }
}

} // namespace
