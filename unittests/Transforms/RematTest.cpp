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

TEST_F(RematTest, CostIsTheReplayedForwardPlusPackingPerChunk) {
  OwningOpRef<ModuleOp> module = trainingModule();
  const double T = 6, B = 2, I = 3, H = 4, G = 16;
  // Both GEMMs of every step and ~10 operations per gate element.
  double replay = T * B * (2 * G * (I + H) + 10 * G);
  // W_ih packed for each chunk's projection, in forward and replay.
  double packing = 2 * 2 * G * I;
  EXPECT_EQ(rematCost(*module, {RematPlan::Kind::None, 0}), 0);
  EXPECT_DOUBLE_EQ(rematCost(*module, {RematPlan::Kind::Gates, 0}), replay);
  EXPECT_DOUBLE_EQ(rematCost(*module, chunk(1)), replay + 6 * packing);
  EXPECT_DOUBLE_EQ(rematCost(*module, chunk(4)), replay + 2 * packing);
  EXPECT_DOUBLE_EQ(rematCost(*module, chunk(6)), replay + 1 * packing);
  // K beyond T costs what K = T does.
  EXPECT_DOUBLE_EQ(rematCost(*module, chunk(100)), replay + 1 * packing);
}

TEST_F(RematTest, LongerChunksCostLessAndNothingCostsLessThanSaving) {
  OwningOpRef<ModuleOp> module = trainingModule();
  double previous = rematCost(*module, chunk(1));
  for (int64_t k = 2; k <= 6; ++k) {
    double cost = rematCost(*module, chunk(k));
    EXPECT_LE(cost, previous) << "chunk:" << k;
    EXPECT_GT(cost, rematCost(*module, {RematPlan::Kind::Gates, 0}));
    previous = cost;
  }
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
