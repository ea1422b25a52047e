//===- Compile.cpp - the compile stages both tools share ------------------===//

#include "rnn/Driver/Compile.h"
#include "rnn/Driver/Model.h"

#include "rnn/Analysis/MemoryPlan.h"
#include "rnn/Dialect/RNNAttrs.h"
#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"

#include <map>

using namespace mlir;
using mlir::rnn::RNNDialect;

namespace rnn {
namespace driver {

/// The plan of a function compiled for every T and B, at `shape`.
static void evaluateSymbolicPlan(func::FuncOp entry, bool train,
                                 const ModelShape &shape, EntryPlan &plan) {
  mlir::rnn::MemoryPlan memory(entry);
  const std::optional<mlir::rnn::SymbolicPlan> &symbolic = memory.getSymbolic();
  if (!symbolic)
    return;
  mlir::rnn::CallShape call =
      memory.getLiveness().getCallShape(shape.seqLen, shape.batch);
  plan.blockSteps = call.P;
  plan.peakBytes = symbolic->peak.evaluate(call);
  plan.expressions.push_back({"peak", symbolic->peak.str()});
  plan.expressions.push_back({"arena", symbolic->arenaStr()});
  if (train && symbolic->saved) {
    plan.phases = symbolic->phasesAt(call);
    plan.expressions.push_back({"fwd_peak", symbolic->fwdPeak->str()});
    plan.expressions.push_back({"bwd_peak", symbolic->bwdPeak->str()});
    plan.expressions.push_back({"saved", symbolic->saved->str()});
  } else if (!train && plan.peakBytes) {
    plan.phases = mlir::rnn::PhaseBytes{*plan.peakBytes, 0, 0};
  }
}

/// The variants `entry` chooses among per call (rnn-dispatch-remat), by
/// index, and the fused training function of each; none if it is no such
/// function.
static void findVariants(func::FuncOp entry, SmallVector<func::FuncOp> &called,
                         SmallVector<func::FuncOp> &fused) {
  auto module = entry->getParentOfType<ModuleOp>();
  std::map<int64_t, func::FuncOp> byIndex;
  std::string of;
  for (auto func : module.getOps<func::FuncOp>())
    if (std::optional<mlir::rnn::RematVariant> variant =
            mlir::rnn::readRematVariant(func);
        variant && mlir::rnn::rematDispatchName(func.getName(),
                                                variant->index) ==
                       entry.getName()) {
      byIndex[variant->index] = func;
      of = variant->of;
    }
  for (auto &[index, func] : byIndex)
    called.push_back(func);
  if (!called.empty())
    mlir::rnn::trainingVariantsOf(module, of, fused);
}

/// The plan of `entry`, which runs the remat variant in `called` that
/// each call chooses, at `shape`.
static EntryPlan readChosenPlan(func::FuncOp entry, bool train,
                                const ModelShape &shape,
                                ArrayRef<func::FuncOp> called,
                                ArrayRef<func::FuncOp> fused) {
  EntryPlan plan;
  std::optional<mlir::rnn::RematVariant> variant =
      mlir::rnn::readRematVariant(called.front());
  FailureOr<mlir::rnn::RematChoice> choice = failure();
  if (fused.size() == called.size())
    choice = mlir::rnn::chooseRematVariant(fused, shape.seqLen, shape.batch);
  if (failed(choice)) {
    plan.rematError = "@" + entry.getName().str() +
                      " has remat variants without their figures";
    return plan;
  }
  if (!choice->chosen) {
    std::optional<mlir::rnn::RematVariant> smallest =
        mlir::rnn::readRematVariant(fused[choice->smallest]);
    plan.rematError =
        "no remat plan fits budget:" + std::to_string(variant->budget) +
        " at T=" + std::to_string(shape.seqLen) +
        ", B=" + std::to_string(shape.batch) +
        "; the smallest feasible budget there is " +
        std::to_string(choice->smallestPeak) + " bytes (" +
        smallest->plan.str() + ")";
    plan.rematBudget = variant->budget;
    return plan;
  }
  plan = readEntryPlan(called[*choice->chosen], train, &shape);
  // The chunk the call runs: K rounded up to whole GEMM blocks, at most T.
  mlir::rnn::RematPlan chosen =
      mlir::rnn::readRematVariant(called[*choice->chosen])->plan;
  if (chosen.kind == mlir::rnn::RematPlan::Kind::Chunk && plan.blockSteps)
    chosen.chunk = mlir::rnn::chunkStepsFor(shape.seqLen, *plan.blockSteps,
                                            chosen.chunk);
  plan.remat = chosen.str();
  plan.rematBudget = variant->budget;
  return plan;
}

EntryPlan readEntryPlan(func::FuncOp entry, bool train,
                        const ModelShape *shape) {
  if (shape && shape->dynamic) {
    SmallVector<func::FuncOp> called, fused;
    findVariants(entry, called, fused);
    if (!called.empty())
      return readChosenPlan(entry, train, *shape, called, fused);
  }
  MLIRContext *context = entry.getContext();
  auto planned = [&](auto helper) -> std::optional<int64_t> {
    if (IntegerAttr attr = helper.getAttr(entry))
      return attr.getInt();
    return std::nullopt;
  };
  EntryPlan plan;
  plan.peakBytes = planned(RNNDialect::PredictedPeakBytesAttrHelper(context));
  plan.arenaBytes = planned(RNNDialect::ArenaBytesAttrHelper(context));
  plan.savedBytes = planned(RNNDialect::SavedBytesAttrHelper(context));
  std::optional<int64_t> fwd =
      planned(RNNDialect::PredictedFwdPeakBytesAttrHelper(context));
  std::optional<int64_t> bwd =
      planned(RNNDialect::PredictedBwdPeakBytesAttrHelper(context));
  std::optional<int64_t> saved =
      planned(RNNDialect::PredictedSavedBytesAttrHelper(context));
  if (train && fwd && bwd && saved)
    plan.phases = mlir::rnn::PhaseBytes{*fwd, *bwd, *saved};
  else if (!train && plan.peakBytes)
    plan.phases = mlir::rnn::PhaseBytes{*plan.peakBytes, 0, 0};
  // A static layout: offsets and bytes (a symbolic one names sizes in T
  // and B, its offsets computed per call).
  ArrayAttr layout = RNNDialect::SavedAttrHelper(context).getAttr(entry);
  if (layout && plan.savedBytes) {
    plan.saved.emplace();
    for (auto item : layout.getAsRange<DictionaryAttr>())
      plan.saved->push_back({item.getAs<StringAttr>("role").getValue().str(),
                             item.getAs<IntegerAttr>("offset").getInt(),
                             item.getAs<IntegerAttr>("bytes").getInt()});
  } else if (layout) {
    for (auto item : layout.getAsRange<DictionaryAttr>())
      if (auto size = item.getAs<StringAttr>("size"))
        plan.savedSizes.push_back(
            {item.getAs<StringAttr>("role").getValue().str(),
             size.getValue().str()});
    plan.savedAlignment = mlir::rnn::MemoryPlan::kAlignment;
  }
  if (StringAttr remat = RNNDialect::RematAttrHelper(context).getAttr(entry))
    plan.remat = remat.getValue().str();
  plan.rematBudget = planned(RNNDialect::RematBudgetAttrHelper(context));
  plan.sequentialLayers =
      RNNDialect::SequentialLayersAttrHelper(context).isAttrPresent(entry);
  if (shape && shape->dynamic)
    evaluateSymbolicPlan(entry, train, *shape, plan);
  return plan;
}

LogicalResult buildTrainingFunctions(ModuleOp module,
                                     const mlir::rnn::PipelineOptions &options,
                                     std::string &error) {
  PassManager pm(module.getContext());
  mlir::rnn::buildTrainingFunctionsStage(pm, options);
  return runPipeline(pm, module, error);
}

CompileStatus compileToBuffers(ModuleOp module,
                               const mlir::rnn::PipelineOptions &options,
                               const std::string &memoryReportFile,
                               const std::string &memorySVGFile,
                               std::string &error,
                               std::optional<mlir::rnn::ReportShape> shape) {
  PassManager pm(module.getContext());
  mlir::rnn::buildToBuffersPipeline(pm, options);
  auto reports = std::make_unique<mlir::rnn::MemoryReportWriter>(
      memoryReportFile, memorySVGFile, shape);
  const mlir::rnn::MemoryReportWriter &writer = *reports;
  pm.addInstrumentation(std::move(reports));
  if (failed(runPipeline(pm, module, error)))
    return CompileStatus::Failed;
  // A report that could not be written is an error of a pipeline that
  // succeeds: its message is then the first error.
  return writer.failed() ? CompileStatus::ReportFailed
                         : CompileStatus::Compiled;
}

void inlineIntoEntryPoints(llvm::Module &module, llvm::StringRef prefix) {
  for (llvm::Function &function : module) {
    if (function.isDeclaration() || function.getName().starts_with(prefix))
      continue;
    llvm::Function *entry =
        module.getFunction((prefix + function.getName()).str());
    if (!entry || entry->isDeclaration())
      continue;
    bool onlyEntry = llvm::all_of(function.users(), [&](llvm::User *user) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(user);
      return call && call->getCalledFunction() == &function &&
             call->getFunction() == entry;
    });
    if (!onlyEntry)
      continue;
    function.setLinkage(llvm::GlobalValue::InternalLinkage);
    function.addFnAttr(llvm::Attribute::AlwaysInline);
  }
}

void skipLoopStrengthReduction() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("disable-lsr");
  // TargetPassConfig's `static cl::opt<bool> DisableLSR("disable-lsr")`.
  if (it == options.end())
    return;
  auto *disable = static_cast<llvm::cl::opt<bool> *>(it->second);
  if (disable->getNumOccurrences() == 0)
    *disable = true;
}

} // namespace driver
} // namespace rnn
