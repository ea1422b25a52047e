//===- DispatchRemat.cpp - rnn-dispatch-remat -----------------------------===//
//
// Under `budget:BYTES` a training function for every T and B is compiled
// once per plan (rnn-rematerialize's variants, RematVariants.cpp); this
// pass gives back the function each variant stands in for: it chooses a
// variant per call and calls it (see Passes.td). The choice is a function
// of (T, B), `@<f>.remat_select`, the cost model of RematCost.h built as
// f64 arithmetic and each variant's peak from its closed form: the choice
// chooseRematVariant makes on the host, so that tools know the plan a
// call runs. Upstream's function-level dispatch (a `scf.index_switch` of
// calls) is all it takes; no upstream pass multiversions a function by a
// cost evaluated at run time.
//
//===----------------------------------------------------------------------===//

#include "RematCost.h"

#include "rnn/Analysis/SizeExpr.h"
#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Support/Diagnostics.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>
#include <map>

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNDISPATCHREMATPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

namespace {
/// An f64 value in the IR, for RematCost.h's formula: each operation
/// builds its arith (or math) op at the builder's position.
struct IRNum {
  OpBuilder *b;
  Location loc;
  Value value;

  IRNum constant(double x) const {
    return {b, loc,
            arith::ConstantFloatOp::create(*b, loc, b->getF64Type(),
                                           llvm::APFloat(x))};
  }
};

template <typename OpTy> IRNum apply(IRNum x, IRNum y) {
  return {x.b, x.loc, OpTy::create(*x.b, x.loc, x.value, y.value)};
}
IRNum operator+(IRNum x, IRNum y) { return apply<arith::AddFOp>(x, y); }
IRNum operator-(IRNum x, double y) {
  return apply<arith::SubFOp>(x, x.constant(y));
}
IRNum operator*(IRNum x, IRNum y) { return apply<arith::MulFOp>(x, y); }
IRNum operator*(IRNum x, double y) {
  return apply<arith::MulFOp>(x, x.constant(y));
}
IRNum operator*(double x, IRNum y) {
  return apply<arith::MulFOp>(y.constant(x), y);
}
IRNum operator/(IRNum x, IRNum y) { return apply<arith::DivFOp>(x, y); }
IRNum operator/(double x, IRNum y) {
  return apply<arith::DivFOp>(y.constant(x), y);
}
IRNum ceilOf(IRNum x) {
  return {x.b, x.loc, math::CeilOp::create(*x.b, x.loc, x.value)};
}
IRNum minOf(IRNum x, IRNum y) { return apply<arith::MinimumFOp>(x, y); }
IRNum maxOf(double x, IRNum y) {
  return apply<arith::MaximumFOp>(y.constant(x), y);
}
} // namespace

/// Creates after `after` `func.func private @name(%T: index, %B: index) ->
/// index`: the index of the variant in `variants` (fused training
/// functions, by index) a call at (T, B) runs, or -1 if none fits, as
/// chooseRematVariant chooses.
static FailureOr<func::FuncOp> buildSelector(OpBuilder &b, Operation *after,
                                             StringRef name,
                                             ArrayRef<func::FuncOp> variants) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(after);
  Location loc = after->getLoc();
  Type index = b.getIndexType(), i64 = b.getI64Type(), f64 = b.getF64Type();
  auto selector = func::FuncOp::create(
      b, loc, name, b.getFunctionType({index, index}, {index}));
  selector.setPrivate();
  Block *body = selector.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value t = body->getArgument(0), batch = body->getArgument(1);
  auto i64Constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, value);
  };
  auto toF64 = [&](Value value) -> IRNum {
    return {&b, loc, arith::UIToFPOp::create(b, loc, f64, value)};
  };
  auto cmpf = [&](arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, predicate, x, y).getResult();
  };
  auto cmpi = [&](arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, predicate, x, y).getResult();
  };
  Value best = arith::ConstantIndexOp::create(b, loc, -1);
  Value found = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  Value bestCost = IRNum{&b, loc, {}}.constant(0).value;
  Value bestPeak = i64Constant(0);
  for (auto [i, variantFunc] : llvm::enumerate(variants)) {
    func::FuncOp func = variantFunc;
    std::optional<RematVariant> variant = readRematVariant(func);
    std::optional<RematPeak> peak = readRematPeak(func);
    if (!variant || !peak)
      return rnn::emitOpErrorAt(func, "is a remat variant without its figures "
                                      "(rnn.remat_variant, rnn.symbolic_peak)");
    std::array<Value, 5> symbols =
        buildCallSymbols(b, loc, t, batch, peak->symbols);
    Value overflow = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    Value bytes = peak->peak.buildChecked(b, loc, symbols, overflow);
    // A peak beyond 63 bits fits no budget.
    bytes = arith::SelectOp::create(
        b, loc, overflow, i64Constant(std::numeric_limits<int64_t>::max()),
        bytes);
    IRNum cost = IRNum{&b, loc, {}}.constant(0);
    if (variant->plan.kind != RematPlan::Kind::None)
      for (const RematLayer &layer : variant->layers)
        cost = addReplayCost<IRNum>(cost, layer, toF64(symbols[0]),
                                    toF64(symbols[1]), toF64(symbols[2]),
                                    variant->plan, RematCostModel());
    Value fits =
        cmpi(arith::CmpIPredicate::sle, bytes, i64Constant(variant->budget));
    // Cheaper, or as cheap and smaller.
    Value better = arith::OrIOp::create(
        b, loc, cmpf(arith::CmpFPredicate::OLT, cost.value, bestCost),
        arith::AndIOp::create(
            b, loc, cmpf(arith::CmpFPredicate::OEQ, cost.value, bestCost),
            cmpi(arith::CmpIPredicate::slt, bytes, bestPeak)));
    Value notFound = arith::XOrIOp::create(
        b, loc, found, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    Value take = arith::AndIOp::create(
        b, loc, fits, arith::OrIOp::create(b, loc, notFound, better));
    best = arith::SelectOp::create(
        b, loc, take, arith::ConstantIndexOp::create(b, loc, i), best);
    bestCost = arith::SelectOp::create(b, loc, take, cost.value, bestCost);
    bestPeak = arith::SelectOp::create(b, loc, take, bytes, bestPeak);
    found = arith::OrIOp::create(b, loc, found, take);
  }
  func::ReturnOp::create(b, loc, best);
  return selector;
}

/// Builds at `b` `scf.index_switch %selected` over `count` cases whose
/// bodies `buildCase(i)` builds (yielding its results, of `types`), the
/// default's by `buildDefault`; returns its results.
static ValueRange buildSwitch(OpBuilder &b, Location loc, TypeRange types,
                              Value selected, unsigned count,
                              function_ref<ValueRange(unsigned)> buildCase,
                              function_ref<ValueRange()> buildDefault) {
  auto cases = llvm::to_vector(llvm::seq<int64_t>(0, count));
  auto op = scf::IndexSwitchOp::create(b, loc, types, selected, cases, count);
  OpBuilder::InsertionGuard guard(b);
  for (unsigned i = 0; i < count; ++i) {
    b.setInsertionPointToStart(&op.getCaseRegions()[i].emplaceBlock());
    scf::YieldOp::create(b, loc, buildCase(i));
  }
  b.setInsertionPointToStart(&op.getDefaultRegion().emplaceBlock());
  scf::YieldOp::create(b, loc, buildDefault());
  return op.getResults();
}

namespace {
struct RNNDispatchRematPass
    : public rnn::impl::RNNDispatchRematPassBase<RNNDispatchRematPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The variants of each function they stand in for.
    std::map<std::string, SmallVector<func::FuncOp>> byName;
    for (auto func : module.getOps<func::FuncOp>()) {
      std::optional<RematVariant> variant = readRematVariant(func);
      if (!variant) {
        if (RNNDialect::RematVariantAttrHelper(&getContext())
                .isAttrPresent(func)) {
          rnn::emitOpErrorAt(func, "has a malformed rnn.remat_variant");
          return signalPassFailure();
        }
        continue;
      }
      std::string name = rematDispatchName(func.getName(), variant->index);
      if (name.empty()) {
        rnn::emitOpErrorAt(func, "is remat variant ")
            << variant->index << " but its name has no `__remat"
            << variant->index << "`";
        return signalPassFailure();
      }
      byName[name].push_back(func);
    }
    // Each training function's selector, made on first use.
    std::map<std::string, func::FuncOp> selectors;
    for (auto &[name, funcs] : byName)
      if (failed(dispatch(module, name, funcs, selectors)))
        return signalPassFailure();
  }

  /// The selector of the variants of the training function `of`, made on
  /// first use.
  FailureOr<func::FuncOp>
  selectorOf(ModuleOp module, StringRef of, unsigned count,
             std::map<std::string, func::FuncOp> &made) {
    auto it = made.find(of.str());
    if (it != made.end())
      return it->second;
    SmallVector<func::FuncOp> fused;
    trainingVariantsOf(module, of, fused);
    if (fused.size() < count)
      return rnn::emitErrorAt(module, "rnn-dispatch-remat: remat variant ")
             << fused.size() << " of @" << of << " ("
             << rematVariantName(of, fused.size()) << ") is missing";
    std::string name = (of + ".remat_select").str();
    if (module.lookupSymbol(name))
      return rnn::emitErrorAt(module, "rnn-dispatch-remat: symbol @")
             << name << " already exists";
    OpBuilder b(module.getContext());
    FailureOr<func::FuncOp> selector =
        buildSelector(b, fused.back(), name, fused);
    if (succeeded(selector))
      made[of.str()] = *selector;
    return selector;
  }

  /// Creates `@name`, which calls the variant in `funcs` each call's (T, B)
  /// chooses, with a size function of the same choice for each argument a
  /// variant sizes (rnn.size). Its arguments are every variant's, each
  /// passed to the variants that take it: a variant's forward or backward
  /// takes what its plan reads (under `none` the backward reads no x).
  LogicalResult dispatch(ModuleOp module, StringRef name,
                         SmallVector<func::FuncOp> &funcs,
                         std::map<std::string, func::FuncOp> &selectors) {
    MLIRContext *ctx = module.getContext();
    llvm::sort(funcs, [](func::FuncOp x, func::FuncOp y) {
      return readRematVariant(x)->index < readRematVariant(y)->index;
    });
    std::optional<RematVariant> first = readRematVariant(funcs.front());
    for (auto [i, func] : llvm::enumerate(funcs)) {
      std::optional<RematVariant> variant = readRematVariant(func);
      if (variant->index != static_cast<int64_t>(i) || variant->of != first->of)
        return rnn::emitOpErrorAt(func, "is not remat variant ")
               << i << " of @" << first->of << " for @" << name;
      if (func.getResultTypes() != funcs.front().getResultTypes())
        return rnn::emitOpErrorAt(func,
                                  "has other results than remat variant 0");
    }
    if (module.lookupSymbol(name))
      return rnn::emitOpErrorAt(funcs.front(), "stands in for @")
             << name << ", which already exists";
    FailureOr<func::FuncOp> selector =
        selectorOf(module, first->of, funcs.size(), selectors);
    if (failed(selector))
      return failure();
    func::FuncOp fused =
        module.lookupSymbol<func::FuncOp>(rematVariantName(first->of, 0));

    // The arguments by name and layer, in the training function's order,
    // then the saved region, then the arena.
    using Key = std::pair<std::string, int64_t>;
    auto keyOf = [](func::FuncOp func, unsigned i) -> std::optional<Key> {
      auto argName = func.getArgAttrOfType<StringAttr>(
          i, RNNDialect::NameAttrHelper::getNameStr());
      auto layer = func.getArgAttrOfType<IntegerAttr>(
          i, RNNDialect::LayerAttrHelper::getNameStr());
      if (!argName)
        return std::nullopt;
      return Key{argName.getValue().str(), layer ? layer.getInt() : -1};
    };
    std::map<Key, int64_t> rank;
    for (unsigned i = 0; i < fused.getNumArguments(); ++i)
      if (std::optional<Key> key = keyOf(fused, i);
          key && key->first != "arena")
        rank.insert({*key, i});
    rank.insert({{"saved", -1}, fused.getNumArguments()});
    rank.insert({{"arena", -1}, fused.getNumArguments() + 1});
    SmallVector<Key> keys;
    std::map<Key, std::pair<Type, DictionaryAttr>> args;
    for (func::FuncOp func : funcs) {
      // Two arguments of one name would be passed one value.
      std::map<Key, unsigned> own;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        std::optional<Key> key = keyOf(func, i);
        if (!key)
          return rnn::emitOpErrorAt(func, "argument ")
                 << i << " has no name (rnn.name) to pass it by: name every "
                 << "argument and result of @" << first->of
                 << " (a cotangent is named after its result)";
        auto [mine, fresh] = own.insert({*key, i});
        if (!fresh)
          return rnn::emitOpErrorAt(func, "argument ")
                 << i << " has the name '" << key->first << "'"
                 << (key->second >= 0
                         ? " of layer " + std::to_string(key->second)
                         : std::string())
                 << " of argument " << mine->second
                 << ", and the budget's dispatcher passes arguments by name: "
                 << "give each argument of @" << first->of
                 << " a name of its own, none of the form grad_<result>";
        auto [it, added] = args.insert(
            {*key, {func.getArgumentTypes()[i], func.getArgAttrDict(i)}});
        if (added)
          keys.push_back(*key);
        else if (it->second.first != func.getArgumentTypes()[i])
          return rnn::emitOpErrorAt(func, "argument ")
                 << i << " has another type than another variant's "
                 << it->second.first;
      }
    }
    llvm::stable_sort(keys, [&](const Key &x, const Key &y) {
      auto rankOf = [&](const Key &key) {
        auto it = rank.find(key);
        return it == rank.end() ? std::numeric_limits<int64_t>::max()
                                : it->second;
      };
      return rankOf(x) < rankOf(y);
    });
    std::map<Key, unsigned> position;
    SmallVector<Type> types;
    for (auto [i, key] : llvm::enumerate(keys)) {
      position[key] = i;
      types.push_back(args[key].first);
    }

    func::FuncOp model = funcs.front();
    OpBuilder b(ctx);
    b.setInsertionPointAfter(funcs.back());
    Location loc = model.getLoc();
    auto dispatcher = func::FuncOp::create(
        b, loc, name, b.getFunctionType(types, model.getResultTypes()));
    RNNDialect::RematBudgetAttrHelper(ctx).setAttr(
        dispatcher, b.getI64IntegerAttr(first->budget));
    for (auto [i, key] : llvm::enumerate(keys))
      if (DictionaryAttr attrs = args[key].second)
        dispatcher.setArgAttrs(i, attrs);
    Block *body = dispatcher.addEntryBlock();
    b.setInsertionPointToStart(body);
    std::optional<ShapeValues> shape =
        buildShapeValues(b, dispatcher, SizeSymbols());
    if (!shape || !shape->T)
      return rnn::emitOpErrorAt(model,
                                "is a remat variant without T and B among "
                                "its arguments");
    Value selected =
        func::CallOp::create(b, loc, *selector, ValueRange{shape->T, shape->B})
            .getResult(0);
    // The C entry point's size function refuses such a shape first.
    cf::AssertOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, selected,
                              arith::ConstantIndexOp::create(b, loc, 0)),
        "rnnc: no remat plan fits the budget at this T and B");
    // Where variant i's arguments are among the dispatcher's.
    auto positionsOf = [&](func::FuncOp func) {
      SmallVector<unsigned> at;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        at.push_back(position[*keyOf(func, i)]);
      return at;
    };
    auto call = [&](unsigned i) {
      SmallVector<Value> operands;
      for (unsigned at : positionsOf(funcs[i]))
        operands.push_back(body->getArgument(at));
      return func::CallOp::create(b, loc, funcs[i], operands).getResults();
    };
    // The last variant is the default case.
    unsigned last = funcs.size() - 1;
    func::ReturnOp::create(b, loc,
                           buildSwitch(b, loc, model.getResultTypes(), selected,
                                       last, call, [&] { return call(last); }));

    // A size function of the choice for each sized argument.
    auto sizeAttr = RNNDialect::SizeAttrHelper::getNameStr();
    for (auto [arg, key] : llvm::enumerate(keys)) {
      if (!dispatcher.getArgAttr(arg, sizeAttr))
        continue;
      // Each variant's size function of the argument, if it takes it.
      SmallVector<func::FuncOp> sizeFunctions;
      for (func::FuncOp func : funcs) {
        func::FuncOp sizes;
        for (auto [i, at] : llvm::enumerate(positionsOf(func))) {
          if (at != arg)
            continue;
          auto symbol = func.getArgAttrOfType<FlatSymbolRefAttr>(i, sizeAttr);
          sizes = symbol ? module.lookupSymbol<func::FuncOp>(symbol) : nullptr;
          if (!sizes)
            return rnn::emitOpErrorAt(func, "argument ")
                   << i << " has no size function, as another variant's has";
          if (!isSizeFunction(sizes))
            return rnn::emitOpErrorAt(func, "argument ")
                   << i << " is sized by " << symbol
                   << ", which is not a function (index, index) -> i64";
        }
        sizeFunctions.push_back(sizes);
      }
      FailureOr<func::FuncOp> sizes = buildSizeDispatch(
          b, dispatcher, arg, key.first, sizeFunctions, *selector);
      if (failed(sizes))
        return failure();
      dispatcher.setArgAttr(arg, sizeAttr, FlatSymbolRefAttr::get(*sizes));
    }
    // Each variant stays a function of its own: inlined into the one call
    // of the dispatcher, every plan would make one function, which LLVM
    // takes time superlinear in to compile.
    for (func::FuncOp func : funcs) {
      func.setPrivate();
      func->setAttr("passthrough",
                    b.getArrayAttr({b.getStringAttr("noinline")}));
    }
    return success();
  }

  /// `@<dispatcher>.<argName>_bytes(%T, %B) -> i64`: the bytes of argument
  /// `arg` of the variant the call chooses (by its function in
  /// `sizeFunctions`; 0 where it does not take the argument), or -2 if
  /// none fits.
  FailureOr<func::FuncOp>
  buildSizeDispatch(OpBuilder &b, func::FuncOp dispatcher, unsigned arg,
                    StringRef argName, ArrayRef<func::FuncOp> sizeFunctions,
                    func::FuncOp selector) {
    std::string name = (dispatcher.getName() + "." + argName + "_bytes").str();
    auto module = dispatcher->getParentOfType<ModuleOp>();
    if (module.lookupSymbol(name))
      return rnn::emitOpErrorAt(dispatcher,
                                "cannot have its size function: symbol @")
             << name << " already exists";
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(dispatcher);
    Location loc = dispatcher.getLoc();
    Type index = b.getIndexType(), i64 = b.getI64Type();
    auto sizes = func::FuncOp::create(b, loc, name,
                                      b.getFunctionType({index, index}, {i64}));
    sizes.setPrivate();
    Block *body = sizes.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value selected =
        func::CallOp::create(b, loc, selector, body->getArguments())
            .getResult(0);
    auto constant = [&](int64_t value) {
      return ValueRange(
          arith::ConstantIntOp::create(b, loc, i64, value)->getResults());
    };
    ValueRange bytes = buildSwitch(
        b, loc, {i64}, selected, sizeFunctions.size(),
        [&](unsigned i) {
          if (!sizeFunctions[i])
            return constant(0);
          return ValueRange(func::CallOp::create(b, loc, sizeFunctions[i],
                                                 body->getArguments())
                                .getResults());
        },
        [&] { return constant(-2); });
    func::ReturnOp::create(b, loc, bytes);
    return sizes;
  }
};
} // namespace
