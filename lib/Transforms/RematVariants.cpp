//===- RematVariants.cpp - a budget's plans for every T and B -------------===//
//
// Under `budget:BYTES` a training function compiled for every T and B is
// compiled once per plan of variantPlans() (rnn-rematerialize), each
// variant with its peak in closed form (rnn-plan-memory), and each call
// chooses the variant its shape lets the budget choose
// (rnn-dispatch-remat). This file holds what those passes and the tools
// share: the variants' names, their attributes, and the choice at a shape
// (the selector rnn-dispatch-remat builds makes it in the IR with the same
// formula, RematCost.h).
//
//===----------------------------------------------------------------------===//

#include "RematCost.h"

#include "rnn/Analysis/SizeExpr.h"
#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::rnn;

SmallVector<RematPlan> mlir::rnn::variantPlans() {
  SmallVector<RematPlan> plans = {{RematPlan::Kind::None, 0},
                                  {RematPlan::Kind::Gates, 0}};
  for (int64_t k = 1; k <= kMaxVariantChunk; k *= 2)
    plans.push_back({RematPlan::Kind::Chunk, k});
  return plans;
}

std::string mlir::rnn::rematVariantName(StringRef name, int64_t index) {
  StringRef base = name;
  StringRef suffix = base.consume_back("_grad") ? "_grad" : "";
  return (base + "__remat" + Twine(index) + suffix).str();
}

void mlir::rnn::trainingVariantsOf(ModuleOp module, StringRef of,
                                   SmallVectorImpl<func::FuncOp> &variants) {
  for (int64_t index = 0;; ++index) {
    auto func = module.lookupSymbol<func::FuncOp>(rematVariantName(of, index));
    if (!func)
      return;
    variants.push_back(func);
  }
}

std::string mlir::rnn::rematDispatchName(StringRef name, int64_t index) {
  std::string infix = ("__remat" + Twine(index)).str();
  size_t at = name.rfind(infix);
  if (at == StringRef::npos)
    return "";
  return (name.take_front(at) + name.drop_front(at + infix.size())).str();
}

std::optional<RematVariant> mlir::rnn::readRematVariant(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  DictionaryAttr attrs = RNNDialect::RematVariantAttrHelper(ctx).getAttr(func);
  StringAttr remat = RNNDialect::RematAttrHelper(ctx).getAttr(func);
  IntegerAttr budget = RNNDialect::RematBudgetAttrHelper(ctx).getAttr(func);
  if (!attrs || !remat || !budget)
    return std::nullopt;
  auto of = attrs.getAs<StringAttr>("of");
  auto index = attrs.getAs<IntegerAttr>("index");
  auto layers = attrs.getAs<ArrayAttr>("layers");
  if (!of || !index || !layers)
    return std::nullopt;
  std::string message;
  FailureOr<RematPolicy> policy = parseRematPolicy(remat.getValue(), message);
  if (failed(policy) || policy->budget)
    return std::nullopt;
  RematVariant variant{
      of.getValue().str(), index.getInt(), policy->plan, budget.getInt(), {}};
  for (Attribute layer : layers) {
    auto figures = dyn_cast<DenseF64ArrayAttr>(layer);
    if (!figures || figures.size() != 5)
      return std::nullopt;
    variant.layers.push_back(
        {figures[0], figures[1], figures[2], figures[3], figures[4]});
  }
  return variant;
}

std::optional<RematPeak> mlir::rnn::readRematPeak(func::FuncOp func) {
  DictionaryAttr attrs =
      RNNDialect::SymbolicPeakAttrHelper(func.getContext()).getAttr(func);
  if (!attrs)
    return std::nullopt;
  std::optional<SizeMax> peak = SizeMax::fromAttr(attrs.get("peak"));
  if (!peak)
    return std::nullopt;
  RematPeak result{*peak, {}};
  // GEMM blocks and chunks of at least one step; K and N only in a peak
  // of a chunk.
  if (auto rows = attrs.getAs<IntegerAttr>("rows")) {
    if (rows.getInt() < 1)
      return std::nullopt;
    result.symbols.rows = rows.getInt();
  }
  if (auto chunk = attrs.getAs<IntegerAttr>("chunk")) {
    if (chunk.getInt() < 1)
      return std::nullopt;
    result.symbols.chunk = chunk.getInt();
  }
  if (!result.symbols.chunk)
    for (const SizeExpr &candidate : result.peak.getCandidates())
      for (const SizeExpr::Term &term : candidate.getTerms())
        if (term.k || term.n)
          return std::nullopt;
  return result;
}

FailureOr<RematChoice>
mlir::rnn::chooseRematVariant(ArrayRef<func::FuncOp> variants, int64_t seqLen,
                              int64_t batch) {
  RematChoice choice;
  std::optional<int64_t> smallest;
  double bestCost = 0;
  int64_t bestPeak = 0;
  for (auto [index, func] : llvm::enumerate(variants)) {
    std::optional<RematVariant> variant = readRematVariant(func);
    std::optional<RematPeak> peak = readRematPeak(func);
    if (!variant || !peak)
      return failure();
    CallShape call = peak->symbols.at(seqLen, batch);
    // A peak beyond 63 bits fits no budget.
    int64_t bytes =
        peak->peak.evaluate(call).value_or(std::numeric_limits<int64_t>::max());
    if (!smallest || bytes < *smallest) {
      smallest = bytes;
      choice.smallest = index;
    }
    if (bytes > variant->budget)
      continue;
    double cost = 0;
    if (variant->plan.kind != RematPlan::Kind::None)
      for (const RematLayer &layer : variant->layers)
        cost = addReplayCost<double>(cost, layer, seqLen, batch, call.P,
                                     variant->plan, RematCostModel());
    if (!choice.chosen || cost < bestCost ||
        (cost == bestCost && bytes < bestPeak)) {
      choice.chosen = index;
      bestCost = cost;
      bestPeak = bytes;
    }
  }
  choice.smallestPeak = smallest.value_or(0);
  return choice;
}
