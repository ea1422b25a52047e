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

namespace {
/// Lowers one memref-form kernel: its cell's lowering writes its loops in
/// its place.
struct KernelLowering : public OpInterfaceRewritePattern<KernelOpInterface> {
  KernelLowering(MLIRContext *ctx, int64_t vectorWidth, bool wholeVectors,
                 bool storageGemm)
      : OpInterfaceRewritePattern<KernelOpInterface>(ctx),
        vectorWidth(vectorWidth), wholeVectors(wholeVectors),
        storageGemm(storageGemm) {}

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
    for (Value operand : op->getOperands())
      if (!cast<MemRefType>(operand.getType()).getLayout().isIdentity())
        return rewriter.notifyMatchFailure(op, "non-identity layout");
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
    lowering.emitKernel(op, k);
    k.freeScratch();
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
      getOperation().emitError("convert-rnn-to-loops: vector-width must be "
                               ">= 1");
      return signalPassFailure();
    }
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    RewritePatternSet patterns(ctx);
    patterns.add<KernelLowering>(ctx, vectorWidth, wholeVectors, storageGemm);
    walkAndApplyPatterns(module, std::move(patterns));

    // The phase boundary stays until the target's lowering.
    WalkResult left = module.walk([](Operation *op) {
      if (!isa<RNNDialect>(op->getDialect()) || isa<BeginBackwardOp>(op))
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
