//===- Model.cpp - the tools' models and their signatures -----------------===//
//
// Implements Model.h.
//
//===----------------------------------------------------------------------===//

#include "rnn/Driver/Model.h"

#include "rnn/Dialect/RNNOps.h"
#include "rnn/Dialect/RNNRoles.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SourceMgr.h"

#include "llvm/ADT/SetVector.h"

#include <map>
#include <set>

using namespace mlir;
using namespace ::rnn::driver;

namespace rnn {
namespace driver {

int64_t NamedTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

LogicalResult checkCellName(MLIRContext &context, StringRef name,
                            std::string &error) {
  if (mlir::rnn::lookupCell(&context, name))
    return success();
  error = "unknown cell '" + name.str() + "' (the cells are " +
          mlir::rnn::listCells(&context, "", ", ") + ")";
  return failure();
}

LogicalResult checkTarget(const ModelShape &shape, mlir::rnn::Target target,
                          std::string &error) {
  // cuBLAS is called in f32 only (the pipeline would stop at the first f64
  // GEMM with a message about its internals).
  if (target == mlir::rnn::Target::CUDA && shape.f64) {
    error = "--target=cuda computes in f32 only; the model is f64";
    return failure();
  }
  return success();
}

LogicalResult checkPresetOptions(MLIRContext &context, const ModelShape &shape,
                                 std::string &error) {
  if (shape.layers > kMaxLayers) {
    error = llvm::formatv("--layers must be at most {0}, got {1}: the "
                          "compiled program grows with the layer count",
                          kMaxLayers, shape.layers)
                .str();
    return failure();
  }
  if (!(shape.dropout >= 0.0 && shape.dropout < 1.0)) {
    error = llvm::formatv("--dropout must be in [0, 1), got {0}", shape.dropout)
                .str();
    return failure();
  }
  if (shape.dropout > 0.0 && shape.layers < 2) {
    error = "--dropout applies between layers: it needs --layers >= 2";
    return failure();
  }
  if (shape.storage.empty())
    return success();
  // The storage type is a type's name: bf16, or the element type.
  Type element = shape.f64 ? Type(Float64Type::get(&context))
                           : Type(Float32Type::get(&context));
  Type storage;
  {
    ScopedDiagnosticHandler silent(&context, [](Diagnostic &) {
      return success();
    });
    size_t read = 0;
    storage = mlir::parseType(shape.storage, &context, &read);
    if (read != shape.storage.size())
      storage = Type();
  }
  if (storage &&
      (storage == element || (storage.isBF16() && element.isF32())))
    return success();
  std::string elementName;
  llvm::raw_string_ostream(elementName) << element;
  error = "--storage must be bf16 (with --dtype=f32) or " + elementName +
          " (the element type), got '" + shape.storage + "'";
  return failure();
}

LogicalResult checkShapeSizes(MLIRContext &context, const ModelShape &shape,
                              std::string &error) {
  int64_t gates = mlir::rnn::lookupCell(&context, shape.cell).getNumGates();
  int64_t widest = std::max(shape.inputSize, shape.hiddenSize);
  int64_t elementBytes = shape.f64 ? 8 : 4;
  // [T, B, G*H] saved gates, [G*H, max(I, H)] weights, [T, B, I] x.
  std::initializer_list<int64_t> largest[] = {
      {shape.seqLen, shape.batch, gates, shape.hiddenSize, elementBytes},
      {gates, shape.hiddenSize, widest, elementBytes},
      {shape.seqLen, shape.batch, shape.inputSize, elementBytes},
      {shape.layers, shape.batch, shape.hiddenSize, elementBytes}};
  for (auto dims : largest) {
    int64_t bytes = 1;
    for (int64_t d : dims)
      if (llvm::MulOverflow(bytes, d, bytes)) {
        error = llvm::formatv("the shape T={0} B={1} I={2} H={3} L={4} is too "
                              "large: its tensors' sizes in bytes overflow 64 "
                              "bits",
                              shape.seqLen, shape.batch, shape.inputSize,
                              shape.hiddenSize, shape.layers)
                    .str();
        return failure();
      }
  }
  return success();
}

OwningOpRef<ModuleOp> buildPresetModel(MLIRContext &context,
                                       const ModelShape &s) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  auto cell = mlir::rnn::lookupCell(&context, s.cell);
  int64_t gates = cell.getNumGates();
  ArrayRef<StringRef> states = cell.getStateNames();
  Type real = s.f64 ? Type(b.getF64Type()) : Type(b.getF32Type());
  auto tensor = [&](ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  };

  SmallVector<Type> argTypes, resultTypes;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  auto named = [&](StringRef name, int64_t layer) {
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr(mlir::rnn::RNNDialect::NameAttrHelper::getNameStr(),
                       b.getStringAttr(name))};
    if (layer >= 0)
      attrs.push_back(
          b.getNamedAttr(mlir::rnn::RNNDialect::LayerAttrHelper::getNameStr(),
                         b.getI64IntegerAttr(layer)));
    return b.getDictionaryAttr(attrs);
  };
  auto addArg = [&](StringRef name, int64_t layer, Type type) {
    argTypes.push_back(type);
    argAttrs.push_back(named(name, layer));
  };
  auto addResult = [&](StringRef name, int64_t layer, Type type) {
    resultTypes.push_back(type);
    resultAttrs.push_back(named(name, layer));
  };

  // The IR's T and B: `?` in a program for every shape.
  int64_t T = s.dynamic ? ShapedType::kDynamic : s.seqLen;
  int64_t B = s.dynamic ? ShapedType::kDynamic : s.batch;
  Type state = tensor({B, s.hiddenSize}, real);
  bool resetStates = s.resetTo != ResetTo::Zero;
  Type resetType =
      s.resetTo == ResetTo::Step ? tensor({T, B, s.hiddenSize}, real) : state;
  addArg(mlir::rnn::kRoleX, -1, tensor({T, B, s.inputSize}, real));
  addArg(mlir::rnn::kRoleIsInit, -1, tensor({T, B}, b.getI1Type()));
  bool dropout = s.dropout > 0.0;
  if (dropout)
    addArg(mlir::rnn::kRoleRng, -1, tensor({2}, b.getI64Type()));
  for (int64_t l = 0; l < s.layers; ++l) {
    int64_t in = l == 0 ? s.inputSize : s.hiddenSize;
    for (StringRef name : states)
      addArg((Twine(name) + mlir::rnn::kInitialStateSuffix).str(), l, state);
    if (resetStates)
      for (StringRef name : states)
        addArg((Twine(name) + mlir::rnn::kResetStateSuffix).str(), l,
               resetType);
    auto perLayer = [&](StringRef role) {
      return mlir::rnn::perLayerName(role, l);
    };
    addArg(perLayer(mlir::rnn::kRoleWeightIh), -1,
           tensor({gates * s.hiddenSize, in}, real));
    addArg(perLayer(mlir::rnn::kRoleWeightHh), -1,
           tensor({gates * s.hiddenSize, s.hiddenSize}, real));
    addArg(perLayer(mlir::rnn::kRoleBiasIh), -1,
           tensor({gates * s.hiddenSize}, real));
    addArg(perLayer(mlir::rnn::kRoleBiasHh), -1,
           tensor({gates * s.hiddenSize}, real));
  }
  Type sequence = tensor({T, B, s.hiddenSize}, real);
  addResult(mlir::rnn::kRoleY, -1, sequence);
  for (int64_t l = 0; l < s.layers; ++l) {
    for (StringRef name : states)
      addResult((Twine(name) + mlir::rnn::kFinalStateSuffix).str(), l, state);
  }

  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, s.cell,
                                   b.getFunctionType(argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  Value x = entry->getArgument(0), isInit = entry->getArgument(1);
  Value rng = dropout ? entry->getArgument(2) : Value();
  unsigned next = dropout ? 3 : 2;
  SmallVector<Value> results = {Value()};
  for (int64_t l = 0; l < s.layers; ++l) {
    if (dropout && l > 0)
      x = mlir::rnn::DropoutOp::create(b, loc, x, rng, s.dropout, l - 1);
    // x, is_init, the states, the reset states, four weights; y and the
    // final states.
    unsigned numOperands = states.size() * (resetStates ? 2 : 1) + 4;
    OperationState layerState(loc, "rnn." + s.cell);
    // checkPresetOptions has the storage type parse; the element type is
    // the default.
    if (Type storage = s.storage.empty()
                           ? real
                           : mlir::parseType(s.storage, &context);
        storage != real)
      layerState.addAttribute("storage", TypeAttr::get(storage));
    layerState.addOperands({x, isInit});
    layerState.addOperands(entry->getArguments().slice(next, numOperands));
    next += numOperands;
    layerState.addTypes(sequence);
    layerState.addTypes(SmallVector<Type>(states.size(), state));
    Operation *layer = b.create(layerState);
    x = layer->getResult(0);
    llvm::append_range(results, layer->getResults().drop_front());
  }
  results[0] = x;
  func::ReturnOp::create(b, loc, results);
  return module;
}

static LogicalResult readNamed(DictionaryAttr attrs, Type type,
                               NamedTensor &tensor, std::string &error,
                               const std::string &what,
                               const ModelShape *callShape) {
  auto name = attrs ? attrs.getAs<StringAttr>(
                          mlir::rnn::RNNDialect::NameAttrHelper::getNameStr())
                    : StringAttr();
  if (!name) {
    error = what + " has no rnn.name attribute";
    return failure();
  }
  tensor.name = name.str();
  if (Attribute layerAttr =
          attrs.get(mlir::rnn::RNNDialect::LayerAttrHelper::getNameStr())) {
    auto layer = dyn_cast<IntegerAttr>(layerAttr);
    if (!layer || layer.getValue().isNegative() ||
        !layer.getValue().isSignedIntN(32)) {
      error = what + " ('" + tensor.name +
              "') has an rnn.layer that is not a layer index (0, 1, ...)";
      return failure();
    }
    tensor.layer = layer.getInt();
  }
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || (!callShape && !shaped.hasStaticShape())) {
    error =
        what + " ('" + tensor.name + "') must be a tensor with a static shape" +
        (shaped ? " (a dynamic T and B are a preset's, with --dynamic)" : "");
    return failure();
  }
  Type element = shaped.getElementType();
  if (element.isF32())
    tensor.dtype = npz::DType::F32;
  else if (element.isF64())
    tensor.dtype = npz::DType::F64;
  else if (element.isInteger(1))
    tensor.dtype = npz::DType::Bool;
  else if (element.isInteger(64))
    tensor.dtype = npz::DType::I64;
  else {
    error = what + " ('" + tensor.name + "') must be f32, f64, i1 or i64";
    return failure();
  }
  tensor.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
  // A dynamic size is the call's T or B: [T, B, X] and is_init [T, B]
  // start with T, a state [B, H] with B.
  bool startsWithT =
      tensor.shape.size() == 3 || tensor.name == mlir::rnn::kRoleIsInit;
  for (auto [i, size] : llvm::enumerate(tensor.shape)) {
    if (!ShapedType::isDynamic(size))
      continue;
    bool isT = startsWithT && i == 0;
    bool isB = startsWithT ? i == 1 : i == 0;
    if (!isT && !isB) {
      error = what + " ('" + tensor.name + "') of type " +
              llvm::formatv("{0}", type).str() +
              " has a dynamic size that is neither T nor B";
      return failure();
    }
    size = isT ? callShape->seqLen : callShape->batch;
  }
  return success();
}

/// Names the array of each tensor (see readSignature). Two tensors of a
/// name without distinct rnn.layer indices would be one array twice.
static LogicalResult assignArrays(func::FuncOp func, StringRef what,
                                  std::vector<NamedTensor> &tensors,
                                  std::string &error) {
  std::map<std::string, std::vector<NamedTensor *>> byName;
  for (NamedTensor &t : tensors)
    byName[t.name].push_back(&t);
  for (auto &[name, group] : byName) {
    std::string named =
        what.str() + " '" + name + "' of @" + func.getName().str();
    std::set<int64_t> layers;
    bool sameShape = true;
    for (NamedTensor *t : group) {
      if (t->layer < 0) {
        if (group.size() == 1)
          continue;
        error = named + " is given more than once without distinct "
                        "rnn.layer indices";
        return failure();
      }
      if (!layers.insert(t->layer).second) {
        error =
            named + " is given twice for rnn.layer " + std::to_string(t->layer);
        return failure();
      }
      sameShape &= t->shape == group.front()->shape;
    }
    // Layers 0..L-1 (the set is ordered) of one shape stack.
    bool stack = !layers.empty() && sameShape &&
                 *layers.rbegin() == static_cast<int64_t>(layers.size()) - 1;
    for (NamedTensor *t : group) {
      t->array = t->layer >= 0 && !stack
                     ? mlir::rnn::perLayerName(name, t->layer)
                     : name;
      t->stacked = t->layer >= 0 && stack ? layers.size() : 0;
    }
  }
  // A per-layer array name may not be another tensor's name.
  for (auto &[name, group] : byName)
    for (NamedTensor *t : group)
      if (t->array != name && byName.count(t->array)) {
        error = what.str() + " '" + name + "' of @" + func.getName().str() +
                " for rnn.layer " + std::to_string(t->layer) +
                " is exchanged as array '" + t->array +
                "', which is also the name of another " + what.str();
        return failure();
      }
  return success();
}

/// The arrays a run exchanges name one thing each: the inputs (arguments),
/// the outputs (results) and the gradients (kGradPrefix and an argument's
/// name), which are outputs too, and the cotangents (kGradPrefix and a
/// result's name), which the training function takes. An argument named as
/// a result, or either named as the other's gradient, would make one name
/// two arrays.
static LogicalResult checkExchangedNames(func::FuncOp func,
                                         const Signature &signature,
                                         std::string &error) {
  std::set<std::string> args, results;
  for (const NamedTensor &t : signature.args)
    args.insert(t.array);
  for (const NamedTensor &t : signature.results)
    results.insert(t.array);
  auto clash = [&](const std::string &name, const char *what,
                   const std::string &other) {
    error =
        what + (" '" + name + "' of @") + func.getName().str() + " " + other;
    return failure();
  };
  for (const std::string &name : args) {
    if (results.count(name))
      return clash(name, "argument", "is also the name of a result");
    if (results.count(mlir::rnn::kGradPrefix.str() + name))
      return clash(mlir::rnn::kGradPrefix.str() + name, "result",
                   "is the name of the gradient of argument '" + name + "'");
    for (const std::string &result : results)
      if (name == mlir::rnn::kGradPrefix.str() + result)
        return clash(name, "argument",
                     "is the name of the cotangent of result '" + result + "'");
  }
  return success();
}

LogicalResult readSignature(func::FuncOp func, Signature &signature,
                            std::string &error, const ModelShape *shape) {
  FunctionType type = func.getFunctionType();
  signature = Signature();
  auto read = [&](StringRef what, unsigned i, DictionaryAttr attrs, Type t,
                  std::vector<NamedTensor> &into) {
    NamedTensor tensor;
    std::string where =
        (what + " #" + Twine(i) + " of @" + func.getName()).str();
    if (failed(readNamed(attrs, t, tensor, error, where, shape)))
      return failure();
    into.push_back(std::move(tensor));
    return success();
  };
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (failed(read("argument", i, func.getArgAttrDict(i), type.getInput(i),
                    signature.args)))
      return failure();
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    if (failed(read("result", i, func.getResultAttrDict(i), type.getResult(i),
                    signature.results)))
      return failure();
  for (auto [what, tensors] : {std::pair<StringRef, std::vector<NamedTensor> *>{
                                   "argument", &signature.args},
                               {"result", &signature.results}})
    if (failed(assignArrays(func, what, *tensors, error)))
      return failure();
  return success();
}

bool isModelFunction(func::FuncOp func) {
  bool hasModelOps = false;
  func.walk([&](mlir::rnn::LayerOpInterface) { hasModelOps = true; });
  return hasModelOps;
}

func::FuncOp findModelFunction(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (isModelFunction(func))
      return func;
  return nullptr;
}

OwningOpRef<ModuleOp> parseModelFile(MLIRContext &context,
                                     const std::string &path,
                                     std::string &error) {
  namespace fs = llvm::sys::fs;
  fs::file_status status;
  if (std::error_code ec = fs::status(path, status)) {
    error = "MODEL.mlir '" + path + "': " + ec.message();
    return nullptr;
  }
  if (fs::is_directory(status)) {
    error = "MODEL.mlir '" + path + "' is a directory";
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  OwningOpRef<ModuleOp> module;
  {
    llvm::raw_string_ostream os(diagnostics);
    SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
    module = parseSourceFile<ModuleOp>(path, sourceMgr, ParserConfig(&context));
  }
  if (!module) {
    llvm::StringRef first = llvm::StringRef(diagnostics).split('\n').first;
    error = first.empty() ? "cannot read " + path : first.str();
  }
  return module;
}

void removeDropouts(func::FuncOp model) {
  llvm::SetVector<Value> rngs;
  model.walk([&](mlir::rnn::DropoutOp dropout) {
    rngs.insert(dropout.getRng());
    dropout.getY().replaceAllUsesWith(dropout.getX());
    dropout.erase();
  });
  llvm::BitVector unused(model.getNumArguments());
  for (Value rng : rngs)
    if (auto arg = dyn_cast<BlockArgument>(rng); arg && arg.use_empty())
      unused.set(arg.getArgNumber());
  (void)model.eraseArguments(unused);
}

/// Whether `model` has at most kMaxLayers layers; else `error` says so.
static bool checkLayerCount(func::FuncOp model, std::string &error) {
  int64_t count = 0;
  model.walk([&](mlir::rnn::LayerOpInterface) { ++count; });
  if (count <= kMaxLayers)
    return true;
  error = llvm::formatv("@{0} has {1} layers, more than the {2} rnnc "
                        "compiles (the compiled program grows with the layer "
                        "count)",
                        model.getName(), count, kMaxLayers)
              .str();
  return false;
}

func::FuncOp selectModelFunction(ModuleOp module, const std::string &entry,
                                 const std::string &modelFile,
                                 std::string &error) {
  std::string layers =
      mlir::rnn::listCells(module.getContext(), "rnn.", " or ") + " ops";
  if (!entry.empty()) {
    auto model = module.lookupSymbol<func::FuncOp>(entry);
    if (!model || !isModelFunction(model)) {
      error = "--entry=" + entry + ": " + modelFile + " has no function @" +
              entry + " with " + layers;
      return nullptr;
    }
    return checkLayerCount(model, error) ? model : nullptr;
  }
  func::FuncOp model = findModelFunction(module);
  if (!model) {
    error = "the model has no function with " + layers;
    return nullptr;
  }
  // One model function is compiled; another one would be ignored.
  for (auto other : module.getOps<func::FuncOp>())
    if (other != model && isModelFunction(other)) {
      error = "the model file has more than one function with " + layers +
              " (@" + model.getName().str() + ", @" + other.getName().str() +
              "); pick one with --entry=NAME";
      return nullptr;
    }
  return checkLayerCount(model, error) ? model : nullptr;
}

LogicalResult runPipeline(PassManager &pm, ModuleOp module,
                          std::string &error) {
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && error.empty())
      error = llvm::StringRef(d.str()).split('\n').first.str();
    return success();
  });
  return pm.run(module);
}

int64_t gemmFlops(func::FuncOp func, bool train, const ModelShape &shape) {
  double total = 0;
  func.walk([&](mlir::rnn::LayerOpInterface layer) {
    auto orShape = [](int64_t size, int64_t given) {
      return ShapedType::isDynamic(size) ? given : size;
    };
    // 2 T B G H (I + H), in double, as a model's dimensions may be too
    // large for its flops to fit 64 bits (it is refused later).
    double fwd = 2.0 * orShape(layer.getSeqLen(), shape.seqLen) *
                 orShape(layer.getBatch(), shape.batch) *
                 layer.getCell().getNumGates() * layer.getHiddenSize() *
                 (layer.getInputSize() + layer.getHiddenSize());
    total += train ? 3 * fwd : fwd;
  });
  return total < 9.2e18 ? static_cast<int64_t>(total) : INT64_MAX;
}

LogicalResult loadModel(MLIRContext &context, const std::string &modelFile,
                        const std::string &entry, ModelShape &shape,
                        LoadedModel &model, std::string &error) {
  if (!modelFile.empty()) {
    model.module = parseModelFile(context, modelFile, error);
    if (!model.module)
      return failure();
  } else {
    for (int64_t value : {shape.seqLen, shape.batch, shape.inputSize,
                          shape.hiddenSize, shape.layers})
      if (value <= 0) {
        error = "--seq-len, --batch, --input-size, --hidden-size and "
                "--layers must be positive";
        return failure();
      }
    if (failed(checkShapeSizes(context, shape, error)) ||
        failed(checkPresetOptions(context, shape, error)))
      return failure();
    model.module = buildPresetModel(context, shape);
  }
  model.func = selectModelFunction(*model.module, entry, modelFile, error);
  if (!model.func)
    return failure();
  Signature signature;
  if (failed(readSignature(model.func, signature, error,
                           shape.dynamic && modelFile.empty() ? &shape
                                                              : nullptr)) ||
      failed(checkExchangedNames(model.func, signature, error)))
    return failure();
  model.cellName = describeModel(model.func, shape);
  return success();
}

std::string describeModel(func::FuncOp func, ModelShape &shape) {
  int64_t numLayers = 0;
  std::string cellName;
  func.walk([&](mlir::rnn::LayerOpInterface layer) {
    StringRef name = layer.getCell().getCellName();
    if (numLayers++ == 0) {
      cellName = name.str();
      // A dynamic T or B keeps the shape the program runs at.
      if (!ShapedType::isDynamic(layer.getSeqLen()))
        shape.seqLen = layer.getSeqLen();
      if (!ShapedType::isDynamic(layer.getBatch()))
        shape.batch = layer.getBatch();
      shape.inputSize = layer.getInputSize();
      shape.hiddenSize = layer.getHiddenSize();
      shape.cell = cellName;
      shape.f64 = getElementTypeOrSelf(layer.getInput().getType()).isF64();
    } else if (name != cellName) {
      cellName = "mixed";
    }
  });
  shape.layers = numLayers;
  return cellName;
}

} // namespace driver
} // namespace rnn
