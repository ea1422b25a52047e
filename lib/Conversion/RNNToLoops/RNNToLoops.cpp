//===- RNNToLoops.cpp - convert-rnn-to-loops ------------------------------===//
//
// Drives the lowering of bufferized rnn kernels (KernelBuilder.h and the
// per-cell files) and turns `rnn.begin_backward` into the runtime call that
// marks the phase boundary.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Conversion/Passes.h"
#include "rnn/Dialect/RNNOps.h"

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

/// Name of the runtime entry point that marks a phase boundary.
static constexpr StringLiteral kBeginPhase = "rnnrt_begin_phase";

namespace {
/// Lowers one memref-form kernel: `emitFn` writes its loops in its place.
template <typename OpTy> struct KernelLowering : public OpRewritePattern<OpTy> {
  using EmitFn = void (*)(Operation *, KernelBuilder &);
  KernelLowering(MLIRContext *ctx, EmitFn emitFn, int64_t vectorWidth)
      : OpRewritePattern<OpTy>(ctx), emitFn(emitFn), vectorWidth(vectorWidth) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "not bufferized");
    if (!cast<MemRefType>(op.getX().getType()).getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "only f32 is lowered");
    // The loops index whole sequences and collapse [T, B, X] into
    // [T*B, X]: every buffer must be contiguous and row-major.
    for (Value operand : op->getOperands())
      if (!cast<MemRefType>(operand.getType()).getLayout().isIdentity())
        return rewriter.notifyMatchFailure(op, "non-identity layout");
    for (auto [init, role] :
         llvm::zip(op.getDpsInits(), OpTy::getInitRoles())) {
      auto alloc = init.template getDefiningOp<memref::AllocOp>();
      if (alloc && !alloc->hasAttr(kRoleAttr))
        rewriter.modifyOpInPlace(alloc, [&, role = role] {
          alloc->setAttr(kRoleAttr, rewriter.getStringAttr(role));
        });
    }
    rewriter.setInsertionPoint(op);
    Operation *before = op->getPrevNode();
    KernelBuilder k(rewriter, op.getLoc(), vectorWidth);
    emitFn(op, k);
    k.freeScratch();
    // The kernel's allocations, loops and calls name the kernel and its
    // layer, so that the memory report can say where in the model a
    // position is. (Its linalg ops become loops and GEMM calls later, which
    // the report names after the allocations and loops around them.)
    Attribute layer = op->getAttr(kLayerAttr);
    StringAttr kernel =
        rewriter.getStringAttr(op->getName().getStringRef().drop_front(
            op->getName().getDialectNamespace().size() + 1));
    auto tag = [&](Operation *created) {
      if (!isa<scf::ForOp, scf::ParallelOp, func::CallOp, memref::AllocOp,
               memref::CopyOp>(created))
        return;
      created->setAttr(kKernelAttr, kernel);
      if (layer)
        created->setAttr(kLayerAttr, layer);
    };
    for (Value init : op.getDpsInits())
      if (auto alloc = init.template getDefiningOp<memref::AllocOp>())
        if (!alloc->hasAttr(kKernelAttr))
          rewriter.modifyOpInPlace(alloc, [&] { tag(alloc); });
    for (Operation *created = before ? before->getNextNode()
                                     : &op->getBlock()->front();
         created != op.getOperation(); created = created->getNextNode())
      tag(created);
    rewriter.eraseOp(op);
    return success();
  }

  EmitFn emitFn;
  int64_t vectorWidth;
};

/// rnn.begin_backward -> call @rnnrt_begin_phase(1).
struct BeginBackwardLowering : public OpRewritePattern<BeginBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BeginBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Value phase = arith::ConstantIntOp::create(rewriter, op.getLoc(),
                                               rewriter.getI64Type(), 1);
    rewriter.replaceOpWithNewOp<func::CallOp>(op, kBeginPhase, TypeRange{},
                                              ValueRange{phase});
    return success();
  }
};

struct ConvertRNNToLoopsPass
    : public rnn::impl::ConvertRNNToLoopsPassBase<ConvertRNNToLoopsPass> {
  using ConvertRNNToLoopsPassBase::ConvertRNNToLoopsPassBase;

  void runOnOperation() override {
    if (vectorWidth < 1) {
      getOperation().emitError("convert-rnn-to-loops: vector-width must be "
                               ">= 1");
      return signalPassFailure();
    }
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    bool hasPhaseMarker = false;
    module.walk([&](BeginBackwardOp) { hasPhaseMarker = true; });
    if (hasPhaseMarker && !module.lookupSymbol(kBeginPhase)) {
      OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
      auto decl = func::FuncOp::create(
          builder, module.getLoc(), kBeginPhase,
          builder.getFunctionType({builder.getI64Type()}, {}));
      decl.setPrivate();
    }

    RewritePatternSet patterns(ctx);
    patterns.add<KernelLowering<LSTMFwdOp>>(ctx, emitLSTMFwd, vectorWidth);
    patterns.add<KernelLowering<LSTMBwdOp>>(ctx, emitLSTMBwd, vectorWidth);
    patterns.add<KernelLowering<GRUFwdOp>>(ctx, emitGRUFwd, vectorWidth);
    patterns.add<KernelLowering<GRUBwdOp>>(ctx, emitGRUBwd, vectorWidth);
    patterns.add<KernelLowering<LSTMChunkedBwdOp>>(ctx, emitLSTMChunkedBwd,
                                                   vectorWidth);
    patterns.add<KernelLowering<GRUChunkedBwdOp>>(ctx, emitGRUChunkedBwd,
                                                  vectorWidth);
    patterns.add<KernelLowering<LSTMReplayOp>>(ctx, emitLSTMReplay,
                                               vectorWidth);
    patterns.add<KernelLowering<GRUReplayOp>>(ctx, emitGRUReplay, vectorWidth);
    patterns.add<BeginBackwardLowering>(ctx);
    walkAndApplyPatterns(module, std::move(patterns));

    WalkResult left = module.walk([](Operation *op) {
      if (!isa<RNNDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitOpError("was not lowered: convert-rnn-to-loops needs bufferized "
                      "f32 kernels on identity-layout buffers (run "
                      "rnn-expand-forward and one-shot-bufferize with "
                      "identity layouts first)");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
