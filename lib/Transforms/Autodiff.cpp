//===- Autodiff.cpp - rnn-autodiff ----------------------------------------===//
//
// Reverse-mode differentiation of a function made of rnn model ops (see
// Passes.td). The function is a straight line of layers, so the adjoint is
// built by one walk in reverse: each forward kernel gets the matching
// backward kernel, fed with the saved outputs of the forward and with the
// accumulated cotangents of its results, and each dropout applies its mask
// (regenerated, not stored) to the cotangent of its result.
//
//===----------------------------------------------------------------------===//

#include "ForwardKernels.h"

#include "rnn/Dialect/RNNOps.h"
#include "rnn/Support/Diagnostics.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNAUTODIFFPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

/// `rnn.name` of a cotangent or gradient: "grad_" + the primal's name,
/// keeping the layer index.
static DictionaryAttr gradientAttrs(Builder &builder, DictionaryAttr primal) {
  if (!primal)
    return nullptr;
  constexpr StringLiteral kName = RNNDialect::NameAttrHelper::getNameStr();
  constexpr StringLiteral kLayer = RNNDialect::LayerAttrHelper::getNameStr();
  SmallVector<NamedAttribute> attrs;
  if (auto name = primal.getAs<StringAttr>(kName))
    attrs.push_back(builder.getNamedAttr(
        kName, builder.getStringAttr(kGradPrefix + name.getValue())));
  if (Attribute layer = primal.get(kLayer))
    attrs.push_back(builder.getNamedAttr(kLayer, layer));
  return builder.getDictionaryAttr(attrs);
}

static bool isFloatTensor(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  return tensorType && isa<FloatType>(tensorType.getElementType());
}

namespace {
/// Builds `@<name>_grad` for one model function.
class Differentiator {
public:
  Differentiator(func::FuncOp primal, int64_t gemmRows)
      : primal(primal), builder(primal), gemmRows(gemmRows) {}

  LogicalResult run();

private:
  /// Adds `gradient` to the cotangent accumulated for `value`.
  void accumulate(Value value, Value gradient);
  /// The accumulated cotangent of `value`, or zeros.
  Value cotangent(Value value);
  void emitBackward(Operation *kernel);

  func::FuncOp primal;
  OpBuilder builder;
  DenseMap<Value, Value> cotangents;
  int64_t gemmRows;
};
} // namespace

void Differentiator::accumulate(Value value, Value gradient) {
  auto [it, inserted] = cotangents.try_emplace(value, gradient);
  if (!inserted)
    it->second =
        arith::AddFOp::create(builder, value.getLoc(), it->second, gradient);
}

Value Differentiator::cotangent(Value value) {
  if (Value existing = cotangents.lookup(value))
    return existing;
  return createZeroTensor(builder, value.getLoc(), value);
}

void Differentiator::emitBackward(Operation *kernel) {
  auto fwd = cast<KernelOpInterface>(kernel);
  auto dps = cast<DestinationStyleOpInterface>(kernel);
  CellAttrInterface cell = fwd.getCell();
  bool resetStates = fwd.hasResetStates();
  // The backward's operands by role: the forward's inputs (x, is_init, the
  // initial and reset states, the weights), y and the saved values, the
  // cotangents of y and of the final states (grad_<output>), and a
  // destination per gradient of a forward input (grad_<input>).
  Location loc = kernel->getLoc();
  auto valueOf = [&](StringRef role) {
    OpOperand *operand = fwd.getOperandOf(role);
    return dps.isDpsInit(operand) ? Value(dps.getTiedOpResult(operand))
                                  : operand->get();
  };
  SmallVector<Value> operands, primals;
  SmallVector<Type> types;
  for (const std::string &role :
       kernelOperandRoles(cell, KernelPhase::Bwd, resetStates)) {
    StringRef name = role;
    if (!name.consume_front(kGradPrefix)) {
      operands.push_back(valueOf(name));
      continue;
    }
    OpOperand *primal = fwd.getOperandOf(name);
    if (dps.isDpsInit(primal)) {
      operands.push_back(cotangent(dps.getTiedOpResult(primal)));
      continue;
    }
    primals.push_back(primal->get());
    types.push_back(primal->get().getType());
    operands.push_back(createEmptyLike(builder, loc, primal->get()));
  }
  // The backward's GEMM blocks are the forward's.
  Operation *bwd = createKernel(
      builder, loc, cell, KernelPhase::Bwd, resetStates, types, operands,
      fwd.getGemmBlock(), std::nullopt, fwd.getStorageType());
  copyLayer(kernel, bwd);
  for (auto [value, gradient] : llvm::zip(primals, bwd->getResults()))
    accumulate(value, gradient);
}

LogicalResult Differentiator::run() {
  auto module = primal->getParentOfType<ModuleOp>();
  std::string name = (primal.getName() + "_grad").str();
  if (module.lookupSymbol(name))
    return rnn::emitOpErrorAt(primal)
           << "cannot generate its training function: "
           << "symbol @" << name << " already exists";
  if (!primal.getBody().hasOneBlock())
    return rnn::emitOpErrorAt(primal,
                              "rnn-autodiff expects a single-block body");
  for (Operation &op : primal.getBody().front())
    if (!isa<LayerOpInterface, DropoutOp, func::ReturnOp>(op))
      return op.emitOpError()
             << "cannot be differentiated by rnn-autodiff (only "
             << listCells(op.getContext(), "rnn.", ", ")
             << " and rnn.dropout are supported)";

  FunctionType primalType = primal.getFunctionType();
  SmallVector<Type> inputs(primalType.getInputs());
  llvm::append_range(inputs, primalType.getResults());
  SmallVector<Type> results(primalType.getResults());
  SmallVector<unsigned> floatArgs;
  for (auto [i, type] : llvm::enumerate(primalType.getInputs()))
    if (isFloatTensor(type)) {
      floatArgs.push_back(i);
      results.push_back(type);
    }

  builder.setInsertionPointAfter(primal);
  auto grad = func::FuncOp::create(builder, primal.getLoc(), name,
                                   builder.getFunctionType(inputs, results));
  grad.setVisibility(primal.getVisibility());
  unsigned numArgs = primalType.getNumInputs();
  unsigned numResults = primalType.getNumResults();
  for (unsigned i = 0; i < numArgs; ++i)
    if (DictionaryAttr attrs = primal.getArgAttrDict(i))
      grad.setArgAttrs(i, attrs);
  for (unsigned i = 0; i < numResults; ++i) {
    if (DictionaryAttr attrs = primal.getResultAttrDict(i)) {
      grad.setResultAttrs(i, attrs);
      grad.setArgAttrs(numArgs + i, gradientAttrs(builder, attrs));
    }
  }
  for (auto [i, arg] : llvm::enumerate(floatArgs))
    if (DictionaryAttr attrs = primal.getArgAttrDict(arg))
      grad.setResultAttrs(numResults + i, gradientAttrs(builder, attrs));

  Block *entry = grad.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  IRMapping mapping;
  mapping.map(primal.getArguments(), entry->getArguments().take_front(numArgs));

  // Forward: a kernel per layer, the masks of the dropouts.
  SmallVector<Operation *> steps;
  Operation *terminator = primal.getBody().front().getTerminator();
  for (Operation &op : primal.getBody().front().without_terminator()) {
    if (auto dropout = dyn_cast<DropoutOp>(op)) {
      mapping.map(dropout.getY(),
                  applyDropout(builder, dropout, mapping.lookup(dropout.getX()),
                               mapping.lookup(dropout.getRng())));
      steps.push_back(dropout);
      continue;
    }
    Operation *kernel = createForwardKernel(builder, &op, mapping, gemmRows);
    mapping.map(op.getResults(), forwardOutputs(kernel));
    steps.push_back(kernel);
  }
  BeginBackwardOp::create(builder, primal.getLoc());

  // Backward.
  SmallVector<Value> returned;
  for (auto [i, operand] : llvm::enumerate(terminator->getOperands())) {
    returned.push_back(mapping.lookupOrDefault(operand));
    accumulate(returned.back(), entry->getArgument(numArgs + i));
  }
  for (Operation *step : llvm::reverse(steps)) {
    auto dropout = dyn_cast<DropoutOp>(step);
    if (!dropout) {
      emitBackward(step);
      continue;
    }
    // The gradient of a dropout is its mask applied to the cotangent.
    accumulate(mapping.lookup(dropout.getX()),
               applyDropout(builder, dropout,
                            cotangent(mapping.lookup(dropout.getY())),
                            mapping.lookup(dropout.getRng())));
  }
  for (unsigned arg : floatArgs)
    returned.push_back(cotangent(entry->getArgument(arg)));
  func::ReturnOp::create(builder, terminator->getLoc(), returned);
  return success();
}

namespace {
struct RNNAutodiffPass
    : public rnn::impl::RNNAutodiffPassBase<RNNAutodiffPass> {
  using RNNAutodiffPassBase::RNNAutodiffPassBase;

  void runOnOperation() override {
    if (gemmRows < 1) {
      rnn::emitErrorAt(getOperation(), "rnn-autodiff: gemm-rows must be >= 1");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> models;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      bool hasModelOps = false;
      func.walk(
          [&](Operation *op) { hasModelOps |= isa<LayerOpInterface>(op); });
      if (hasModelOps)
        models.push_back(func);
    }
    for (func::FuncOp func : models)
      if (failed(Differentiator(func, gemmRows).run()))
        return signalPassFailure();
  }
};
} // namespace
