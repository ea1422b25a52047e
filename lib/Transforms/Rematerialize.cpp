//===- Rematerialize.cpp - rnn-rematerialize ------------------------------===//
//
// Chooses, per backward kernel, where the values it reads come from: saved
// by the forward, recomputed by a replay kernel over all steps, or replayed
// chunk by chunk from checkpoints (see Passes.td).
//
// Every plan issues the same GEMM calls for the values it recomputes as the
// forward did: the kernels compute the input projection and the gradients
// per GEMM block of P steps (`block`), and a chunk is a whole number of
// blocks, so K is rounded up to a multiple of P.
//
// The budget policy ranks plans by a cost model (RematCostModel): FLOPs
// recomputed (a replay of the forward: the input projection, the recurrent
// GEMM and the gate math of every step) plus the memory traffic a plan adds,
// in FLOP equivalents: the packing of W_ih by each block's input-projection
// GEMM in the replay, and the replayed chunk's scratch beyond the cache,
// written and read back, which long chunks pay. Bytes held come from the
// memory planner itself: the pass runs `predict-pipeline` (the caller's
// pipeline down to the memory plan, by name from the pass registry, as the
// inliner runs its `default-pipeline`) on a copy of the module with the
// plan applied, so the peak a plan is chosen for is the peak it gets.
// Where T or B is dynamic the plan that fits depends on each call's shape:
// the pass makes a variant of the training function per plan instead, and
// rnn-dispatch-remat chooses among them per call (RematVariants.cpp).
//
//===----------------------------------------------------------------------===//

#include "ForwardKernels.h"
#include "RematCost.h"

#include "rnn/Dialect/RNNOps.h"
#include "rnn/Support/Diagnostics.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNREMATERIALIZEPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

//===----------------------------------------------------------------------===//
// Policies
//===----------------------------------------------------------------------===//

std::string RematPlan::str() const {
  switch (kind) {
  case Kind::None:
    return "none";
  case Kind::Gates:
    return "gates";
  case Kind::Chunk:
    return "chunk:" + std::to_string(chunk);
  }
  llvm_unreachable("unknown plan");
}

FailureOr<RematPolicy> mlir::rnn::parseRematPolicy(StringRef policyText,
                                                   std::string &message) {
  StringRef text = policyText;
  auto number = [&](StringRef digits, StringRef what) -> FailureOr<int64_t> {
    int64_t value;
    if (digits.getAsInteger(10, value) || value < 1) {
      message = "bad remat policy '" + policyText.str() + "': " + what.str() +
                " must be a positive integer";
      return failure();
    }
    return value;
  };
  RematPolicy policy;
  if (text == "none")
    return policy;
  if (text == "gates") {
    policy.plan.kind = RematPlan::Kind::Gates;
    return policy;
  }
  if (text.consume_front("chunk:")) {
    FailureOr<int64_t> k = number(text, "K");
    if (failed(k))
      return failure();
    policy.plan = {RematPlan::Kind::Chunk, *k};
    return policy;
  }
  if (text.consume_front("budget:")) {
    FailureOr<int64_t> bytes = number(text, "BYTES");
    if (failed(bytes))
      return failure();
    policy.budget = *bytes;
    return policy;
  }
  message = "unknown remat policy '" + policyText.str() +
            "' (expected none, gates, chunk:K or budget:BYTES)";
  return failure();
}

//===----------------------------------------------------------------------===//
// Rewrites
//===----------------------------------------------------------------------===//

/// The forward kernel whose saved values `bwd` reads, or null (the values
/// come from elsewhere, as in a hand-written kernel).
static KernelOpInterface forwardOf(KernelOpInterface bwd) {
  Value saved = bwd.getSaved(bwd.getCell().getSavedRoles().front());
  auto fwd = saved ? saved.getDefiningOp<KernelOpInterface>() : nullptr;
  return fwd && fwd.getPhase() == KernelPhase::Fwd ? fwd : nullptr;
}

/// x, is_init, the initial and reset states, the weights and the biases of
/// `fwd`: the first operands of its replay and its chunked backward.
static SmallVector<Value> forwardInputs(KernelOpInterface fwd) {
  SmallVector<Value> operands = {fwd.getInput(), fwd.getResetMask()};
  llvm::append_range(operands, fwd.getInitialStates());
  llvm::append_range(operands, fwd.getResetStates());
  operands.append({fwd.getInputWeight(), fwd.getRecurrentWeight()});
  llvm::append_range(operands, fwd.getBiases());
  return operands;
}

/// Recomputes the values `bwd` reads that its cell replays (the gates, and
/// GRU's hn_proj) from the states its forward saved.
static void replaySaved(KernelOpInterface bwd, RewriterBase &rewriter) {
  KernelOpInterface fwd = forwardOf(bwd);
  if (!fwd)
    return;
  CellAttrInterface cell = bwd.getCell();
  ArrayRef<StringRef> replayed = cell.getReplayedRoles();
  rewriter.setInsertionPoint(bwd);
  Location loc = bwd.getLoc();
  SmallVector<Value> operands = forwardInputs(fwd);
  // The states: y and the saved values the replay does not recompute.
  operands.push_back(bwd.getOutput());
  for (StringRef role : cell.getSavedRoles())
    if (!llvm::is_contained(replayed, role))
      operands.push_back(bwd.getSaved(role));
  SmallVector<Type> types;
  for (StringRef role : replayed) {
    Value saved = bwd.getSaved(role);
    types.push_back(saved.getType());
    operands.push_back(createEmptyLike(rewriter, loc, saved));
  }
  Operation *replay = createKernel(
      rewriter, loc, cell, KernelPhase::Replay, fwd.hasResetStates(), types,
      operands, bwd.getGemmBlock(), std::nullopt, bwd.getStorageType());
  copyLayer(bwd, replay);
  rewriter.modifyOpInPlace(bwd, [&] {
    for (auto [role, value] : llvm::zip_equal(replayed, replay->getResults()))
      bwd.getSavedOperand(role)->set(value);
    RNNDialect::RematAttrHelper(bwd->getContext())
        .setAttr(bwd, rewriter.getStringAttr("gates"));
  });
}

/// Replaces `fwd` by the same kernel saving the states of its cell's
/// checkpoint roles entering each chunk of `chunk` steps instead of every
/// step's.
static KernelOpInterface chunkForward(KernelOpInterface fwd, int64_t chunk,
                                      RewriterBase &rewriter) {
  rewriter.setInsertionPoint(fwd);
  SmallVector<Value> operands(fwd->getOperands());
  for (StringRef role : fwd.getCell().getCheckpointRoles()) {
    OpOperand *saved = fwd.getSavedOperand(role);
    auto cells = cast<RankedTensorType>(saved->get().getType());
    Value empty;
    if (fwd.hasDynamicShape()) {
      empty = createCheckpointsEmpty(rewriter, fwd.getLoc(), cells,
                                     fwd.getInput(), fwd.getGemmBlock().rows,
                                     chunk);
    } else {
      auto checkpoints = checkpointsType(cells, chunk);
      empty = tensor::EmptyOp::create(rewriter, fwd.getLoc(),
                                      checkpoints.getShape(),
                                      checkpoints.getElementType());
    }
    operands[saved->getOperandNumber()] = empty;
  }
  SmallVector<Type> types;
  for (OpOperand &init :
       cast<DestinationStyleOpInterface>(*fwd).getDpsInitsMutable())
    types.push_back(operands[init.getOperandNumber()].getType());
  KernelOpInterface chunked =
      createKernel(rewriter, fwd.getLoc(), fwd.getCell(), KernelPhase::Fwd,
                   fwd.hasResetStates(), types, operands, fwd.getGemmBlock(),
                   chunk, fwd.getStorageType());
  copyLayer(fwd, chunked);
  // The saved values keep no reader: the chunked backward replaces theirs.
  for (auto [oldResult, newResult] :
       llvm::zip(fwd->getResults(), chunked->getResults()))
    if (oldResult.getType() == newResult.getType())
      rewriter.replaceAllUsesWith(oldResult, newResult);
  return chunked;
}

/// Replaces `bwd` by the chunked backward that replays each chunk from the
/// checkpoints of its cell's checkpoint roles (a cell without any, as the
/// GRU, replays from `y` alone: its forward stays as it is, and its saved
/// values lose their reader).
static void checkpoint(KernelOpInterface bwd, int64_t chunk,
                       RewriterBase &rewriter) {
  KernelOpInterface fwd = forwardOf(bwd);
  if (!fwd)
    return;
  CellAttrInterface cell = bwd.getCell();
  ArrayRef<StringRef> checkpointRoles = cell.getCheckpointRoles();
  KernelOpInterface source =
      checkpointRoles.empty() ? fwd : chunkForward(fwd, chunk, rewriter);
  rewriter.setInsertionPoint(bwd);
  SmallVector<Value> operands = forwardInputs(source);
  operands.push_back(bwd.getOutput());
  auto sourceDps = cast<DestinationStyleOpInterface>(*source);
  for (StringRef role : checkpointRoles)
    operands.push_back(sourceDps.getTiedOpResult(source.getSavedOperand(role)));
  llvm::append_range(operands, bwd.getCotangents());
  llvm::append_range(operands,
                     cast<DestinationStyleOpInterface>(*bwd).getDpsInits());
  Operation *replacement =
      createKernel(rewriter, bwd.getLoc(), cell, KernelPhase::ChunkedBwd,
                   bwd.hasResetStates(), bwd->getResultTypes(), operands,
                   bwd.getGemmBlock(), chunk, bwd.getStorageType());
  copyLayer(bwd, replacement);
  rewriter.replaceOp(bwd, replacement->getResults());
  if (source != fwd)
    rewriter.eraseOp(fwd);
}

/// The chunk `bwd` runs under `plan`: K rounded up to whole GEMM blocks,
/// and at most T.
static int64_t chunkOf(KernelOpInterface bwd, const RematPlan &plan) {
  // Under `rows` each call rounds the K asked for (rnn.chunk_steps).
  if (bwd.hasDynamicShape())
    return plan.chunk;
  return chunkStepsFor(bwd.getSeqLen(), bwd.getBlockSteps(), plan.chunk);
}

/// Whether `op` is a kernel of phase `phase`.
static bool isPhase(Operation *op, KernelPhase phase) {
  auto kernel = dyn_cast<KernelOpInterface>(op);
  return kernel && kernel.getPhase() == phase;
}

void mlir::rnn::applyRematPlan(Operation *root, const RematPlan &plan) {
  if (plan.kind == RematPlan::Kind::None)
    return;
  IRRewriter rewriter(root->getContext());
  SmallVector<Operation *> kernels;
  root->walk([&](Operation *op) {
    if (isPhase(op, KernelPhase::Bwd))
      kernels.push_back(op);
  });
  for (Operation *op : kernels) {
    auto func = op->getParentOfType<func::FuncOp>();
    RematPlan applied = plan;
    if (plan.kind == RematPlan::Kind::Chunk)
      applied.chunk = chunkOf(cast<KernelOpInterface>(op), plan);
    int64_t chunk = applied.chunk;
    auto kernel = cast<KernelOpInterface>(op);
    if (plan.kind == RematPlan::Kind::Gates)
      replaySaved(kernel, rewriter);
    else
      checkpoint(kernel, chunk, rewriter);
    RNNDialect::RematAttrHelper(func->getContext())
        .setAttr(func, rewriter.getStringAttr(applied.str()));
  }
}

//===----------------------------------------------------------------------===//
// Cost model
//===----------------------------------------------------------------------===//

RematLayer mlir::rnn::rematLayerOf(KernelOpInterface fwd) {
  RematLayer layer;
  layer.I = fwd.getInputSize();
  layer.H = fwd.getHiddenSize();
  // G*H: the rows of the gates.
  layer.G = fwd.getCell().getNumGates() * layer.H;
  layer.elementBytes =
      cast<ShapedType>(fwd.getInput().getType()).getElementTypeBitWidth() / 8;
  layer.storageBytes = fwd.getStorageType().getIntOrFloatBitWidth() / 8;
  return layer;
}

double mlir::rnn::rematCost(ModuleOp module, const RematPlan &plan,
                            const RematCostModel &model) {
  if (plan.kind == RematPlan::Kind::None)
    return 0;
  double cost = 0;
  module.walk([&](Operation *op) {
    if (!isPhase(op, KernelPhase::Fwd))
      return;
    auto fwd = cast<KernelOpInterface>(op);
    cost = addReplayCost<double>(cost, rematLayerOf(fwd), fwd.getSeqLen(),
                                 fwd.getBatch(), fwd.getBlockSteps(), plan,
                                 model);
  });
  return cost;
}

/// The plans the budget policy considers: saving everything, replaying
/// the gates, and chunks of P, 2P, 4P, ... steps up to the longest
/// sequence, P the largest GEMM block (blocks are powers of two, so each
/// of these chunks is a whole number of every kernel's blocks).
static SmallVector<RematPlan> candidatePlans(ModuleOp module) {
  int64_t longest = 1, block = 1;
  module.walk([&](KernelOpInterface kernel) {
    if (kernel.getPhase() == KernelPhase::Bwd) {
      longest = std::max(longest, kernel.getSeqLen());
      block = std::max(block, kernel.getBlockSteps());
    }
  });
  SmallVector<RematPlan> plans = {{RematPlan::Kind::None, 0},
                                  {RematPlan::Kind::Gates, 0}};
  for (int64_t k = block; k < longest; k *= 2)
    plans.push_back({RematPlan::Kind::Chunk, k});
  plans.push_back({RematPlan::Kind::Chunk, longest});
  return plans;
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct RNNRematerializePass
    : public rnn::impl::RNNRematerializePassBase<RNNRematerializePass> {
  using RNNRematerializePassBase::RNNRematerializePassBase;

  /// The passes of `pipeline`, or failure with `errors` written.
  static FailureOr<OpPassManager> parsePasses(StringRef pipeline,
                                              raw_ostream &errors) {
    OpPassManager pm(ModuleOp::getOperationName());
    if (failed(parsePassPipeline(pipeline, pm, errors)))
      return failure();
    return pm;
  }

  /// The passes of `pipeline`, the value of option `option` (none where
  /// it is empty), or failure with an error on `module` naming it.
  static FailureOr<OpPassManager> parseOption(ModuleOp module, StringRef option,
                                              StringRef pipeline) {
    if (pipeline.empty())
      return OpPassManager(ModuleOp::getOperationName());
    std::string errorText;
    llvm::raw_string_ostream errors(errorText);
    FailureOr<OpPassManager> passes = parsePasses(pipeline, errors);
    if (failed(passes))
      return rnn::emitErrorAt(module)
             << "rnn-rematerialize: bad " << option << " '" << pipeline
             << "': " << llvm::StringRef(errorText).trim();
    return passes;
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    RNNRematerializePassBase::getDependentDialects(registry);
    // A pipeline that does not parse is reported when the pass runs.
    std::string ignored;
    llvm::raw_string_ostream errors(ignored);
    for (StringRef pipeline :
         {StringRef(predictPipeline), StringRef(fallbackPredictPipeline)})
      if (FailureOr<OpPassManager> pm = parsePasses(pipeline, errors);
          !pipeline.empty() && succeeded(pm))
        pm->getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string message;
    FailureOr<RematPolicy> parsed = parseRematPolicy(policy, message);
    if (failed(parsed)) {
      rnn::emitErrorAt(module) << "rnn-rematerialize: " << message;
      return signalPassFailure();
    }
    // Another policy would apply to kernels the first one rewrote, and
    // its label would misname them; the same one again changes nothing.
    MLIRContext *ctx = &getContext();
    bool again = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto applied = RNNDialect::RematAttrHelper(ctx).getAttr(func);
      if (!applied &&
          !RNNDialect::RematVariantAttrHelper(ctx).isAttrPresent(func))
        continue;
      if (applied && !parsed->budget && applied.getValue() == policy) {
        again = true;
        continue;
      }
      rnn::emitErrorAt(func, "rnn-rematerialize: @")
          << func.getSymName() << " has a remat policy already"
          << (applied ? " (" + applied.getValue().str() + ")" : "") << ", not "
          << policy.getValue();
      return signalPassFailure();
    }
    if (again)
      return;
    // The pipelines are checked whatever the policy and shape: one that
    // does not parse is an error even where no budget search would run it.
    FailureOr<OpPassManager> predict =
        parseOption(module, "predict-pipeline", predictPipeline);
    FailureOr<OpPassManager> fallback = parseOption(
        module, "fallback-predict-pipeline", fallbackPredictPipeline);
    if (failed(predict) || failed(fallback))
      return signalPassFailure();
    if (!parsed->budget && parsed->plan.kind == RematPlan::Kind::None)
      return;
    // Every other policy rewrites the training functions' backward kernels
    // (a budget chooses among their plans, and predicts their peaks);
    // without one it would do nothing.
    if (!module
             .walk([](Operation *op) {
               return isPhase(op, KernelPhase::Bwd) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
             })
             .wasInterrupted()) {
      rnn::emitErrorAt(module)
          << "rnn-rematerialize: policy " << policy.getValue()
          << (parsed->budget ? " chooses among the plans of"
                             : " rewrites the backward kernels of")
          << " training functions, and the module has none (rnn-autodiff "
             "makes them)";
      return signalPassFailure();
    }
    if (!parsed->budget)
      return applyRematPlan(module, parsed->plan);
    // Under a budget the plan that fits depends on T and B: a function
    // for every T and B becomes variants, one per plan, among which each
    // call chooses (rnn-dispatch-remat).
    bool dynamic =
        module
            .walk([](KernelOpInterface kernel) {
              return kernel.hasDynamicShape() ? WalkResult::interrupt()
                                              : WalkResult::advance();
            })
            .wasInterrupted();
    if (failed(dynamic
                   ? makeVariants(module, *parsed->budget)
                   : applyBudget(module, *parsed->budget, *predict, *fallback)))
      signalPassFailure();
  }

  /// Replaces each training function of `module` by its variants under
  /// `budget`, one per plan of variantPlans(), each with its figures for
  /// the cost model (rnn.remat_variant).
  LogicalResult makeVariants(ModuleOp module, int64_t budget) {
    SmallVector<func::FuncOp> training;
    for (auto func : module.getOps<func::FuncOp>()) {
      WalkResult trains = func.walk([](KernelOpInterface kernel) {
        return kernel.isBackward() ? WalkResult::interrupt()
                                   : WalkResult::advance();
      });
      if (trains.wasInterrupted())
        training.push_back(func);
    }
    MLIRContext *ctx = module.getContext();
    Builder b(ctx);
    SmallVector<RematPlan> plans = variantPlans();
    for (func::FuncOp func : training) {
      SmallVector<Attribute> layers;
      func.walk([&](Operation *op) {
        if (!isPhase(op, KernelPhase::Fwd))
          return;
        RematLayer layer = rematLayerOf(cast<KernelOpInterface>(op));
        layers.push_back(b.getDenseF64ArrayAttr(
            {layer.I, layer.H, layer.G, layer.elementBytes,
             layer.storageBytes}));
      });
      for (auto [index, plan] : llvm::enumerate(plans)) {
        std::string name = rematVariantName(func.getName(), index);
        if (module.lookupSymbol(name))
          return rnn::emitOpErrorAt(func,
                                    "cannot have its remat variants: symbol @")
                 << name << " already exists";
        func::FuncOp variant = func.clone();
        variant.setName(name);
        module.insert(Block::iterator(func), variant);
        applyRematPlan(variant, plan);
        RNNDialect::RematAttrHelper(ctx).setAttr(
            variant, b.getStringAttr(plan.str()));
        RNNDialect::RematBudgetAttrHelper(ctx).setAttr(
            variant, b.getI64IntegerAttr(budget));
        RNNDialect::RematVariantAttrHelper(ctx).setAttr(
            variant,
            b.getDictionaryAttr(
                {b.getNamedAttr("of", b.getStringAttr(func.getName())),
                 b.getNamedAttr("index", b.getI64IntegerAttr(index)),
                 b.getNamedAttr("layers", b.getArrayAttr(layers))}));
      }
      func.erase();
    }
    return success();
  }

  /// The largest peak `passes` (the pipeline option `option` gives) plan
  /// for a training function of `module`.
  static FailureOr<int64_t>
  predictPeak(ModuleOp module, const OpPassManager &passes, StringRef option) {
    PassManager pm(module.getContext());
    static_cast<OpPassManager &>(pm) = passes;
    if (failed(pm.run(module)))
      return failure();
    MLIRContext *ctx = module.getContext();
    std::optional<int64_t> peak;
    for (auto func : module.getOps<func::FuncOp>())
      if (RNNDialect::PredictedBwdPeakBytesAttrHelper(ctx).isAttrPresent(func))
        if (IntegerAttr bytes =
                RNNDialect::PredictedPeakBytesAttrHelper(ctx).getAttr(func))
          peak = std::max(peak.value_or(0), bytes.getInt());
    // A pipeline that plans no training function predicts nothing.
    if (!peak)
      return rnn::emitErrorAt(module, "rnn-rematerialize: the ")
             << option
             << " plans no training function's peak "
                "(rnn.predicted_peak_bytes); it must end with "
                "rnn-plan-memory, as rnn-train-to-buffers-pipeline does";
    return *peak;
  }

  /// A plan and the peak predicted for it.
  using PlanPeak = std::pair<RematPlan, int64_t>;

  /// Searches the candidate plans under `passes` (the pipeline `pipeline`
  /// of option `option`): the cheapest whose predicted peak fits `budget` in
  /// `best`, the one of the smallest peak in `smallest` (kept if smaller than
  /// the one given).
  LogicalResult searchPlans(ModuleOp module, const OpPassManager &passes,
                            StringRef option, StringRef pipeline,
                            int64_t budget, std::optional<PlanPeak> &best,
                            std::optional<PlanPeak> &smallest) {
    double bestCost = 0;
    for (const RematPlan &plan : candidatePlans(module)) {
      OwningOpRef<ModuleOp> copy = module.clone();
      applyRematPlan(*copy, plan);
      FailureOr<int64_t> peak = predictPeak(*copy, passes, option);
      if (failed(peak))
        return rnn::emitErrorAt(module)
               << "rnn-rematerialize: could not plan the memory of "
               << plan.str() << " with the " << option << " '" << pipeline
               << "'";
      if (!smallest || *peak < smallest->second)
        smallest = {plan, *peak};
      if (*peak > budget)
        continue;
      double cost = rematCost(module, plan, RematCostModel());
      // Equal costs: the plan that holds fewer bytes.
      if (!best || cost < bestCost ||
          (cost == bestCost && *peak < best->second)) {
        best = {plan, *peak};
        bestCost = cost;
      }
    }
    return success();
  }

  /// Applies the cheapest candidate plan whose predicted peak fits, with
  /// the layers in sequence if only the fallback pipeline's plans fit.
  LogicalResult applyBudget(ModuleOp module, int64_t budget,
                            const OpPassManager &predict,
                            const OpPassManager &fallback) {
    std::optional<PlanPeak> best, smallest;
    if (failed(searchPlans(module, predict, "predict-pipeline", predictPipeline,
                           budget, best, smallest)))
      return failure();
    bool sequential = false, smallestSequential = false;
    if (!best && !fallbackPredictPipeline.empty()) {
      int64_t smallestPeak = smallest->second;
      if (failed(searchPlans(module, fallback, "fallback-predict-pipeline",
                             fallbackPredictPipeline, budget, best, smallest)))
        return failure();
      sequential = best.has_value();
      smallestSequential = smallest->second < smallestPeak;
    }
    if (!best)
      return rnn::emitErrorAt(module)
             << "rnn-rematerialize: no plan fits budget:" << budget
             << "; the smallest feasible budget is " << smallest->second
             << " bytes (" << smallest->first.str()
             << (smallestSequential ? ", layers in sequence" : "") << ")";
    applyRematPlan(module, best->first);
    Builder b(module.getContext());
    module.walk([&](func::FuncOp func) {
      // The whole module in sequence: one library, one way to run layers.
      if (sequential)
        RNNDialect::SequentialLayersAttrHelper(b.getContext())
            .setAttr(func, b.getUnitAttr());
      bool trains = false;
      func.walk(
          [&](KernelOpInterface kernel) { trains |= kernel.isBackward(); });
      if (!trains)
        return;
      RNNDialect::RematAttrHelper(b.getContext())
          .setAttr(func, b.getStringAttr(best->first.str()));
      RNNDialect::RematBudgetAttrHelper(b.getContext())
          .setAttr(func, b.getI64IntegerAttr(budget));
    });
    return success();
  }
};
} // namespace
