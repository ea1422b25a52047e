//===- Manifest.cpp - the manifest of a compiled library ------------------===//
//
// Implements Manifest.h.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "rnn/Analysis/SizeExpr.h"
#include "rnn/Dialect/RNNAttrs.h"
#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Dialect/RNNOps.h"
#include "rnn/Dialect/RNNRoles.h"
#include "rnn/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ::rnn::compile;
namespace driver = ::rnn::driver;
using mlir::rnn::RNNDialect;

/// The manifest's name of an argument's element type; empty for one it
/// has none for.
static llvm::StringRef dtypeName(Type element) {
  return element.isInteger(1)    ? "bool"
         : element.isInteger(8)  ? "uint8"
         : element.isF32()       ? "float32"
         : element.isF64()       ? "float64"
         : element.isInteger(64) ? "int64"
                                 : "";
}

llvm::Error Manifest::describeModel(func::FuncOp model) {
  llvm::Error error = llvm::Error::success();
  model.walk([&](Operation *op) {
    if (auto layer = dyn_cast<mlir::rnn::LayerOpInterface>(op)) {
      Type type = layer.getStorageType();
      llvm::StringRef name = type.isBF16() ? "bfloat16" : dtypeName(type);
      if (name.empty() && !error) {
        std::string text;
        llvm::raw_string_ostream(text) << type;
        error = llvm::createStringError("a layer of @" + model.getName().str() +
                                        " stores " + text +
                                        ", which the manifest cannot name");
      }
      storage.push_back(name);
    } else if (auto drop = dyn_cast<mlir::rnn::DropoutOp>(op)) {
      dropout.push_back(
          llvm::json::Object{{"p", drop.getP().convertToDouble()},
                             {"layer", static_cast<int64_t>(drop.getLayer())}});
    }
  });
  return error;
}

llvm::Error Manifest::addEntry(llvm::StringRef kind, func::FuncOp func,
                               const driver::EntryPlan &plan) {
  if (plan.remat)
    rematPlan = *plan.remat;
  else if (plan.rematBudget && shape.dynamic)
    rematPlan = "per call";
  if (plan.sequentialLayers)
    wavefront = false;
  llvm::json::Array args;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto memref = cast<MemRefType>(type);
    llvm::json::Object arg;
    auto name =
        func.getArgAttrOfType<StringAttr>(i, RNNDialect::NameAttrHelper::getNameStr());
    std::string argName =
        name ? name.getValue().str() : "arg" + std::to_string(i);
    arg["name"] = argName;
    arg["role"] =
        mlir::rnn::stringifyBufferRole(mlir::rnn::bufferRole(argName)).str();
    if (auto layer = func.getArgAttrOfType<IntegerAttr>(
            i, RNNDialect::LayerAttrHelper::getNameStr()))
      arg["layer"] = layer.getInt();
    // A dynamic size is "T" or "B"; a byte buffer the sizes entry point
    // sizes (the arena, the saved region) has no shape.
    llvm::json::Array shape;
    bool sized = func.getArgAttr(i, RNNDialect::SizeAttrHelper::getNameStr()) !=
                 nullptr;
    // What a caller could not size or type from the manifest fails the
    // compile rather than leave a shape short or a dtype unnamed.
    auto unnamed = [&](llvm::StringRef what) {
      std::string type;
      llvm::raw_string_ostream os(type);
      os << memref;
      return llvm::createStringError(
          llvm::formatv("argument {0} ({1}) of @{2}, {3}, has {4} the "
                        "manifest cannot name",
                        i, argName, func.getName(), type, what)
              .str());
    };
    for (auto [dim, size] : llvm::enumerate(memref.getShape())) {
      std::optional<char> symbol =
          mlir::rnn::argumentSymbol(func.getArgument(i), dim);
      if (!ShapedType::isDynamic(size))
        shape.push_back(size);
      else if (symbol)
        shape.push_back(std::string(1, *symbol));
      else if (!sized)
        return unnamed("a dynamic size other than T and B");
    }
    if (sized)
      arg["shape"] = nullptr;
    else
      arg["shape"] = std::move(shape);
    llvm::StringRef dtype = dtypeName(memref.getElementType());
    if (dtype.empty())
      return unnamed("an element type");
    arg["dtype"] = dtype;
    args.push_back(std::move(arg));
  }
  llvm::json::Object entry;
  entry["symbol"] = "rnnc_" + func.getName().str();
  if (shape.dynamic)
    entry["sizes_symbol"] = "rnnc_" + func.getName().str() + "_sizes";
  entry["args"] = std::move(args);
  if (plan.arenaBytes)
    entry["arena_bytes"] = *plan.arenaBytes;
  if (plan.peakBytes)
    entry["predicted_peak_bytes"] = *plan.peakBytes;
  if (plan.savedBytes)
    entry["saved_bytes"] = *plan.savedBytes;
  if (plan.saved) {
    llvm::json::Array layout;
    for (const driver::SavedRegion &region : *plan.saved)
      layout.push_back(llvm::json::Object{{"role", region.role},
                                          {"offset", region.offset},
                                          {"bytes", region.bytes}});
    entry["saved"] = std::move(layout);
  } else if (shape.dynamic && plan.savedAlignment) {
    // Sizes in T and B: each value starts where the one before it ends,
    // rounded up to the alignment.
    llvm::json::Array layout;
    for (const auto &[role, size] : plan.savedSizes)
      layout.push_back(llvm::json::Object{{"role", role}, {"size", size}});
    entry["saved"] = std::move(layout);
    entry["saved_alignment"] = plan.savedAlignment;
  }
  entries[kind] = std::move(entry);
  return llvm::Error::success();
}

void Manifest::addRematVariant(func::FuncOp variant) {
  std::optional<mlir::rnn::RematVariant> figures =
      mlir::rnn::readRematVariant(variant);
  std::optional<mlir::rnn::RematPeak> peak = mlir::rnn::readRematPeak(variant);
  if (!figures || !peak)
    return;
  llvm::json::Array candidates;
  for (const mlir::rnn::SizeExpr &candidate : peak->peak.getCandidates())
    candidates.push_back(candidate.str());
  auto optional = [](std::optional<int64_t> value) -> llvm::json::Value {
    return value ? llvm::json::Value(*value) : llvm::json::Value(nullptr);
  };
  rematVariants.push_back(
      llvm::json::Object{{"plan", figures->plan.str()},
                         {"peak", std::move(candidates)},
                         {"rows", optional(peak->symbols.rows)},
                         {"chunk", optional(peak->symbols.chunk)}});
}

std::string Manifest::render(MLIRContext &context) const {
  // The states of the cell, the dialect's names (`h` first), or none for
  // a model of mixed cells.
  llvm::json::Array states;
  if (auto found = mlir::rnn::lookupCell(&context, cell))
    for (StringRef state : found.getStateNames())
      states.push_back(state);
  // What the library exports besides its entry points.
  llvm::json::Object functions;
  if (cuda) {
    functions["context_create"] = "rnnc_context_create";
    functions["context_destroy"] = "rnnc_context_destroy";
    functions["last_error"] = "rnnc_last_error";
    functions["set_graph_replay"] = "rnnc_set_graph_replay";
  }
  // Version 2: a library for every T and B, whose entry points take them.
  llvm::json::Value T = shape.dynamic ? llvm::json::Value("T")
                                      : llvm::json::Value(shape.seqLen);
  llvm::json::Value B = shape.dynamic ? llvm::json::Value("B")
                                      : llvm::json::Value(shape.batch);
  llvm::json::Object manifest{
      {"abi_version", shape.dynamic ? 2 : 1},
      {"dynamic", shape.dynamic},
      {"library", "librnnc_model.so"},
      {"model", model},
      {"cell", cell},
      {"states", std::move(states)},
      {"target", target},
      {"remat", remat},
      {"remat_plan", rematPlan},
      {"gemm_rows", gemmRows},
      {"wavefront", wavefront},
      {"storage", llvm::json::Array(storage)},
      {"dropout", llvm::json::Array(dropout)},
      {"functions", std::move(functions)},
      {"shape", llvm::json::Object{{"T", std::move(T)},
                                   {"B", std::move(B)},
                                   {"I", shape.inputSize},
                                   {"H", shape.hiddenSize},
                                   {"L", shape.layers}}},
      {"entries", llvm::json::Object(entries)}};
  if (!rematVariants.empty())
    manifest["remat_variants"] = llvm::json::Array(rematVariants);
  if (cuda)
    manifest["cuda"] = llvm::json::Object{{"chip", cuda->chip},
                                          {"ptx_features", cuda->features},
                                          {"gpu_math", cuda->math}};
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))).str() +
         "\n";
}
