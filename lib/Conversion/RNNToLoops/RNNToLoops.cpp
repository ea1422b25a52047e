//===- RNNToLoops.cpp - convert-rnn-to-loops ------------------------------===//
//
// Drives the lowering of bufferized rnn kernels, each through the lowering
// interface of its cell (CellLowering.td, implemented by the per-cell
// files on KernelBuilder.h). `rnn.begin_backward` stays: the memory passes
// find the phase boundary by it (LowerBeginBackward.cpp lowers it).
//
//===----------------------------------------------------------------------===//

#include "CellLowering.h"

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Conversion/Passes.h"
#include "rnn/Dialect/RNNOps.h"
#include "rnn/Support/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_CONVERTRNNTOLOOPSPASS
#include "rnn/Conversion/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

#include "RNNToLoops/CellLowering.cpp.inc"

void mlir::rnn::registerCellLoweringExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, RNNDialect *) {
#define RNN_CELL_LOWERING(Cell) attach##Cell##Lowering(*context);
#include "RNNToLoops/CellLowerings.def"
#undef RNN_CELL_LOWERING
  });
}

//===----------------------------------------------------------------------===//
// Wavefronts
//===----------------------------------------------------------------------===//
//
// Layer l + 1 of a forward reads layer l's y block by block (each GEMM
// block of P steps projects its own rows of x), and layer l of a backward
// reads layer l + 1's grad_x block by block (each block writes its own
// rows). So a run of such kernels is a wavefront: between rnn.fork and
// rnn.join each kernel goes on a lane of its own, the writer signals each
// block once written, and the reader waits for that block before its own.
// On a GPU, layer l + 1's block k then runs beside layer l's block k + 1.
//
// A kernel joins the run of the one before it only when nothing but that
// block-by-block sequence orders them: the same blocks (T, chunks, P), at
// least two of them, and no other buffer that one lane writes and another
// touches. The ops between two kernels go on the later kernel's lane if
// all they touch are buffer operands that no earlier lane touches (the
// zero cotangents of a lower layer's final states); any other op ends the
// run.

/// The highest lane rnn.lane takes.
constexpr size_t kMaxLane = 64;

namespace {
/// A kernel's place in a wavefront.
struct LanePlace {
  /// The slots its blocks signal and wait for (KernelBuilder).
  std::optional<KernelBuilder::BlockSlots> signalSlots, waitSlots;
  /// The wavefront's rnn.join, after which its scratch is freed.
  Operation *join = nullptr;
};
} // namespace

/// The first step of each GEMM block of `kernel`, as KernelBuilder's
/// forChunks and forBlocks make them: chunks of K steps (T without one),
/// blocks of P steps from each chunk's start.
static SmallVector<int64_t> blockStarts(KernelOpInterface kernel) {
  int64_t steps = cast<ShapedType>(kernel.getInput().getType()).getDimSize(0);
  int64_t chunk = kernel.getChunkSteps().value_or(steps);
  int64_t block = kernel.getBlockSteps();
  SmallVector<int64_t> starts;
  for (int64_t first = 0; first < steps; first += chunk)
    for (int64_t start = first; start < std::min(first + chunk, steps);
         start += block)
      starts.push_back(start);
  return starts;
}

/// The roles of the sequence `writer` writes block by block and `reader`
/// reads block by block, if they make a link of a wavefront: y into x
/// forward, grad_x into grad_y backward.
static std::optional<std::pair<StringRef, StringRef>>
linkRoles(KernelOpInterface writer, KernelOpInterface reader) {
  if (writer.getPhase() == KernelPhase::Fwd &&
      reader.getPhase() == KernelPhase::Fwd)
    return std::make_pair(StringRef(kRoleY), StringRef(kRoleX));
  if (writer.isBackward() && reader.isBackward())
    return std::make_pair(StringRef(kRoleGradX), StringRef(kRoleGradY));
  return std::nullopt;
}

namespace {
/// One lane of a wavefront: the ops that go on it before its kernel (ones
/// that touch no buffer of the lanes before, such as the zero cotangents
/// of a lower layer's final states), and the kernel.
struct Lane {
  SmallVector<Operation *> before;
  KernelOpInterface kernel;

  /// The first op on the lane.
  Operation *front() const { return before.empty() ? kernel : before.front(); }
};

/// A buffer an op of a lane touches, and whether it may write it.
struct Touch {
  Value root;
  bool writes;
  OpOperand *operand;
};
} // namespace

/// The buffers `lane` touches: its kernel's operands (destinations
/// written), and every buffer operand of the ops before it (taken as
/// written).
static SmallVector<Touch> touches(const Lane &lane) {
  SmallVector<Touch> result;
  auto dps = cast<DestinationStyleOpInterface>(*lane.kernel);
  for (OpOperand &operand : lane.kernel->getOpOperands())
    result.push_back(
        {viewedBuffer(operand.get()), dps.isDpsInit(&operand), &operand});
  for (Operation *op : lane.before)
    for (OpOperand &operand : op->getOpOperands())
      if (isa<BaseMemRefType>(operand.get().getType()))
        result.push_back({viewedBuffer(operand.get()), true, &operand});
  return result;
}

/// Whether `next` may follow `run` in a wavefront: its kernel reads block
/// by block the sequence run.back()'s kernel writes, over the same blocks,
/// and apart from that the lanes share no buffer that one of them writes.
static bool extendsWavefront(ArrayRef<Lane> run, const Lane &next) {
  KernelOpInterface writer = run.back().kernel, reader = next.kernel;
  auto roles = linkRoles(writer, reader);
  if (!roles || run.size() > kMaxLane)
    return false;
  OpOperand *written = writer.getOperandOf(roles->first);
  OpOperand *read = reader.getOperandOf(roles->second);
  if (!written || !read)
    return false;
  // The blocks of a dynamic shape are known per call only.
  if (writer.hasDynamicShape() || reader.hasDynamicShape())
    return false;
  // A single block leaves nothing to overlap.
  SmallVector<int64_t> blocks = blockStarts(writer);
  if (viewedBuffer(written->get()) != viewedBuffer(read->get()) ||
      blocks.size() < 2 || blocks != blockStarts(reader))
    return false;
  SmallVector<Touch> later = touches(next);
  for (const Lane &lane : run)
    for (const Touch &earlier : touches(lane))
      for (const Touch &touch : later)
        if (earlier.root == touch.root && (earlier.writes || touch.writes) &&
            !(earlier.operand == written && touch.operand == read))
          return false;
  return true;
}

/// Whether `op` may go on a lane before that lane's kernel: all it touches
/// are its buffer operands.
static bool mayPrecedeKernel(Operation *op) {
  if (isa<linalg::LinalgOp>(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (op->getNumRegions() != 0 || !effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::all_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return e.getValue() != nullptr;
  });
}

/// Finds the wavefronts of `block`, puts rnn.fork, rnn.lane and rnn.join
/// around their lanes and records each kernel's place; `nextSlot` is the
/// function's first free signal slot.
static void formWavefronts(Block &block,
                           llvm::DenseMap<Operation *, LanePlace> &places,
                           int64_t &nextSlot) {
  SmallVector<SmallVector<Lane>> runs(1);
  Lane pending;
  for (Operation &op : block) {
    auto kernel = dyn_cast<KernelOpInterface>(op);
    if (!kernel) {
      if (!isa<memref::AllocOp, arith::ConstantOp>(op))
        pending.before.push_back(&op);
      if (!mayPrecedeKernel(&op) && !runs.back().empty()) {
        runs.emplace_back();
        pending = Lane();
      }
      continue;
    }
    pending.kernel = kernel;
    if (!runs.back().empty() && !extendsWavefront(runs.back(), pending))
      runs.emplace_back();
    // The first lane of a run starts at its kernel.
    if (runs.back().empty())
      pending.before.clear();
    runs.back().push_back(pending);
    pending = Lane();
  }
  for (MutableArrayRef<Lane> run : runs) {
    if (run.size() < 2)
      continue;
    OpBuilder b(run.front().kernel);
    ForkOp::create(b, run.front().kernel.getLoc());
    for (auto [index, lane] : llvm::enumerate(run)) {
      b.setInsertionPoint(lane.front());
      LaneSwitchOp::create(b, lane.kernel.getLoc(), index);
    }
    b.setInsertionPointAfter(run.back().kernel);
    Operation *join = JoinOp::create(b, run.back().kernel.getLoc());
    for (auto [i, lane] : llvm::enumerate(run)) {
      LanePlace &place = places[lane.kernel];
      place.join = join;
      if (i + 1 == run.size())
        continue;
      // One slot per block of the link: the block's first step over the
      // shortest distance between two starts.
      SmallVector<int64_t> starts = blockStarts(lane.kernel);
      KernelBuilder::BlockSlots slots{nextSlot, starts[1] - starts[0]};
      for (size_t j = 1; j < starts.size(); ++j)
        slots.stride = std::min(slots.stride, starts[j] - starts[j - 1]);
      place.signalSlots = slots;
      places[run[i + 1].kernel].waitSlots = slots;
      nextSlot += starts.back() / slots.stride + 1;
    }
  }
}

namespace {
/// Lowers one memref-form kernel: its cell's lowering writes its loops in
/// its place.
struct KernelLowering : public OpInterfaceRewritePattern<KernelOpInterface> {
  KernelLowering(MLIRContext *ctx, int64_t vectorWidth, bool wholeVectors,
                 bool storageGemm,
                 const llvm::DenseMap<Operation *, LanePlace> &places)
      : OpInterfaceRewritePattern<KernelOpInterface>(ctx),
        vectorWidth(vectorWidth), wholeVectors(wholeVectors),
        storageGemm(storageGemm), places(places) {}

  LogicalResult matchAndRewrite(KernelOpInterface op,
                                PatternRewriter &rewriter) const override {
    auto dps = cast<DestinationStyleOpInterface>(*op);
    auto lowering = dyn_cast<CellLoweringAttrInterface>(op.getCell());
    if (!lowering)
      return rewriter.notifyMatchFailure(op, "the cell has no lowering");
    if (!dps.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "not bufferized");
    Type elementType =
        cast<MemRefType>(op.getInput().getType()).getElementType();
    if (!elementType.isF32() && !elementType.isF64())
      return rewriter.notifyMatchFailure(op, "only f32 and f64 are lowered");
    // The loops index whole sequences and collapse [T, B, X] into
    // [T*B, X]: every buffer must be contiguous and row-major.
    for (Value operand : op->getOperands()) {
      auto type = cast<MemRefType>(operand.getType());
      if (!type.getLayout().isIdentity())
        return rewriter.notifyMatchFailure(op, "non-identity layout");
      // The loops' views and the GEMM calls are in the default space.
      if (type.getMemorySpace())
        return rewriter.notifyMatchFailure(op, "non-default memory space");
    }
    SmallVector<std::string> roles = op.getDestinationRoles();
    for (auto [init, role] : llvm::zip(dps.getDpsInits(), roles)) {
      auto alloc = init.getDefiningOp<memref::AllocOp>();
      if (alloc && !alloc->hasAttr(kRoleAttr))
        rewriter.modifyOpInPlace(alloc, [&, role = role] {
          alloc->setAttr(kRoleAttr, rewriter.getStringAttr(role));
        });
    }
    rewriter.setInsertionPoint(op);
    Operation *before = op->getPrevNode();
    KernelBuilder k(rewriter, op.getLoc(), elementType, op.getStorageType(),
                    vectorWidth, storageGemm, wholeVectors);
    // In a wavefront no buffer is freed before the join (see rnn.fork).
    LanePlace place = places.lookup(op);
    k.signalSlots = place.signalSlots;
    k.waitSlots = place.waitSlots;
    lowering.emitKernel(op, k);
    k.freeScratch(place.join);
    // The kernel's allocations, loops and calls name the kernel and its
    // layer, so that the memory report can say where in the model a
    // position is. (Its linalg ops become loops and GEMM calls later, which
    // the report names after the allocations and loops around them.)
    Attribute layer = op->getAttr(kLayerAttr);
    StringAttr kernel = rewriter.getStringAttr(
        op.getCell().getCellName() + "_" + stringifyKernelPhase(op.getPhase()));
    auto tag = [&](Operation *created) {
      if (!isa<scf::ForOp, scf::ParallelOp, func::CallOp, memref::AllocOp,
               memref::CopyOp>(created))
        return;
      created->setAttr(kKernelAttr, kernel);
      if (layer)
        created->setAttr(kLayerAttr, layer);
    };
    for (Value init : dps.getDpsInits())
      if (auto alloc = init.getDefiningOp<memref::AllocOp>())
        if (!alloc->hasAttr(kKernelAttr))
          rewriter.modifyOpInPlace(alloc, [&] { tag(alloc); });
    for (Operation *created = before ? before->getNextNode()
                                     : &op->getBlock()->front();
         created != op; created = created->getNextNode())
      tag(created);
    rewriter.eraseOp(op);
    return success();
  }

  int64_t vectorWidth;
  bool wholeVectors;
  bool storageGemm;
  const llvm::DenseMap<Operation *, LanePlace> &places;
};

struct ConvertRNNToLoopsPass
    : public rnn::impl::ConvertRNNToLoopsPassBase<ConvertRNNToLoopsPass> {
  using ConvertRNNToLoopsPassBase::ConvertRNNToLoopsPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    ConvertRNNToLoopsPassBase::getDependentDialects(registry);
    registerCellLoweringExternalModels(registry);
  }

  void runOnOperation() override {
    if (vectorWidth < 1) {
      rnn::emitErrorAt(getOperation(),
                       "convert-rnn-to-loops: vector-width must be "
                       ">= 1");
      return signalPassFailure();
    }
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    llvm::DenseMap<Operation *, LanePlace> places;
    for (auto function : module.getOps<FunctionOpInterface>()) {
      int64_t nextSlot = 0;
      // A budget that fits only with the layers in sequence
      // (rnn-rematerialize's fallback).
      if (wavefronts && !function.isExternal() &&
          !RNNDialect::SequentialLayersAttrHelper(ctx).isAttrPresent(function))
        formWavefronts(function.getFunctionBody().front(), places, nextSlot);
    }
    RewritePatternSet patterns(ctx);
    patterns.add<KernelLowering>(ctx, vectorWidth, wholeVectors, storageGemm,
                                 places);
    walkAndApplyPatterns(module, std::move(patterns));

    // The phase boundary and the GEMM blocks of dynamic shapes stay until
    // the target's lowering.
    WalkResult left = module.walk([](Operation *op) {
      if (!isa<RNNDialect>(op->getDialect()) ||
          isa<BeginBackwardOp, BlockStepsOp, ChunkStepsOp, ForkOp,
              LaneSwitchOp, JoinOp, SignalOp, WaitOp>(op))
        return WalkResult::advance();
      op->emitOpError("was not lowered: convert-rnn-to-loops needs bufferized "
                      "f32 kernels on identity-layout buffers of the "
                      "default memory space (run "
                      "rnn-expand-forward and one-shot-bufferize with "
                      "identity layouts first)");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
