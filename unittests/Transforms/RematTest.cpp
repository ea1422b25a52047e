//===- RematTest.cpp - remat policies and their cost model ----------------===//
//
// Unit tests of the pieces of rnn-rematerialize that the budget policy is
// built from: parsing policies, applying a plan, and the cost model that
// ranks plans (FLOPs recomputed, per chunk overhead). Expected costs are
// computed here from the layer shapes, not taken from the code under test.
//
//===----------------------------------------------------------------------===//

#include "rnn/InitAll.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
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

  /// The training function of kLSTM, as rnn-autodiff leaves it.
  OwningOpRef<ModuleOp> trainingModule() {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kLSTM, &context);
    EXPECT_TRUE(module);
    PassManager pm(&context);
    pm.addPass(createRNNAutodiffPass());
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
  for (const char *bad : {"chunk:0", "chunk:-3", "chunk:", "chunk:4x",
                          "budget:", "budget:0", "budget:1e6", "all",
                          "gates:2", ""}) {
    std::string message;
    EXPECT_TRUE(failed(parseRematPolicy(bad, message))) << bad;
    EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos)
        << "message does not quote the policy: " << message;
  }
}

TEST_F(RematTest, CostIsTheReplayedForwardPlusTraffic) {
  OwningOpRef<ModuleOp> module = trainingModule();
  const double T = 6, B = 2, I = 3, H = 4, G = 16;
  // Both GEMMs of every step and ~10 operations per gate element.
  double replay = T * B * (2 * G * (I + H) + 10 * G);
  // W_ih packed (read and written, 4-byte floats) for each chunk's
  // projection, in forward and replay.
  double packing = 2 * 2 * 4 * G * I;
  // A chunk of K steps of gates and cells, in bytes.
  double stepScratch = 4 * B * (G + H);
  RematCostModel roomy; // every chunk fits the cache
  RematCostModel tiny;
  tiny.cacheBytes = 2 * stepScratch;
  tiny.flopsPerByte = 3;
  auto costOf = [&](RematPlan plan, const RematCostModel &model) {
    return rematCost(*module, plan, model);
  };
  EXPECT_EQ(costOf({RematPlan::Kind::None, 0}, roomy), 0);
  EXPECT_DOUBLE_EQ(costOf({RematPlan::Kind::Gates, 0}, roomy),
                   replay + 8 * packing);
  EXPECT_DOUBLE_EQ(costOf(chunk(1), roomy), replay + 8 * 6 * packing);
  EXPECT_DOUBLE_EQ(costOf(chunk(4), roomy), replay + 8 * 2 * packing);
  EXPECT_DOUBLE_EQ(costOf(chunk(6), roomy), replay + 8 * packing);
  // K beyond T costs what K = T does.
  EXPECT_DOUBLE_EQ(costOf(chunk(100), roomy), costOf(chunk(6), roomy));
  // With a cache of two steps, chunks of 4 (two of them: 4 and 2 steps,
  // both counted as 4) spill 2 steps each, written and read back.
  EXPECT_DOUBLE_EQ(costOf(chunk(2), tiny), replay + 3 * 3 * packing);
  EXPECT_DOUBLE_EQ(costOf(chunk(4), tiny),
                   replay + 3 * (2 * packing + 2 * 2 * 2 * stepScratch));
}

TEST_F(RematTest, ShortChunksPayPackingLongChunksPaySpills) {
  OwningOpRef<ModuleOp> module = trainingModule();
  RematCostModel model;
  model.cacheBytes = 4 * (2 * (16 + 4)) * 3; // three steps of scratch
  double k1 = rematCost(*module, chunk(1), model);
  double k3 = rematCost(*module, chunk(3), model);
  double k6 = rematCost(*module, chunk(6), model);
  EXPECT_LT(k3, k1);
  EXPECT_LT(k3, k6);
  EXPECT_GT(k3, rematCost(*module, {RematPlan::Kind::None, 0}, model));
}

TEST_F(RematTest, AppliedPlanIsRecordedAndVerifies) {
  for (RematPlan plan : {RematPlan{RematPlan::Kind::Gates, 0}, chunk(4),
                         chunk(100)}) {
    OwningOpRef<ModuleOp> module = trainingModule();
    applyRematPlan(*module, plan);
    ASSERT_TRUE(succeeded(verify(*module))) << plan.str();
    auto grad = module->lookupSymbol<func::FuncOp>("f_grad");
    ASSERT_TRUE(grad);
    auto recorded = grad->getAttrOfType<StringAttr>("rnn.remat");
    ASSERT_TRUE(recorded) << plan.str();
    EXPECT_EQ(recorded.getValue(), plan.str());
  }
}

} // namespace
