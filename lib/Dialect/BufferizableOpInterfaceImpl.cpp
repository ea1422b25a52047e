//===- BufferizableOpInterfaceImpl.cpp - rnn kernels bufferization --------===//
//
// One-Shot Bufferize model of the destination-style rnn kernels: inputs are
// read, each destination is written in place and aliases its result. The
// saved values a backward kernel overwrites with gradients
// (isOverwrittenInput) are inputs that are also written: One-Shot Bufferize
// writes them in place when nothing reads them afterwards, and into a copy
// otherwise. The bufferized kernel is the same op on memrefs, with no
// results.
//
//===----------------------------------------------------------------------===//

#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Dialect/RNNOps.h"

#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {
template <typename OpTy>
struct KernelBufferizationModel
    : public DstBufferizableOpInterfaceExternalModel<
          KernelBufferizationModel<OpTy>, OpTy> {
  /// Destinations are overwritten entirely: their old contents are never
  /// read, so bufferization needs no copy into them.
  bool bufferizesToMemoryRead(Operation *op, OpOperand &opOperand,
                              const AnalysisState &state) const {
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&opOperand);
  }

  bool bufferizesToMemoryWrite(Operation *op, OpOperand &opOperand,
                               const AnalysisState &state) const {
    return cast<DestinationStyleOpInterface>(op).isDpsInit(&opOperand) ||
           rnn::isOverwrittenInput(op, opOperand.getOperandNumber());
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    unsigned numInits = cast<DestinationStyleOpInterface>(op).getNumDpsInits();
    SmallVector<Value> buffers;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> buffer = getBuffer(rewriter, operand, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    OpTy::create(rewriter, op->getLoc(), TypeRange{}, buffers, op->getAttrs());
    auto inits = ArrayRef<Value>(buffers).take_back(numInits);
    replaceOpWithBufferizedValues(rewriter, op, inits);
    return success();
  }
};
} // namespace

void mlir::rnn::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, rnn::RNNDialect *) {
    rnn::CellFwdOp::attachInterface<KernelBufferizationModel<rnn::CellFwdOp>>(
        *ctx);
    rnn::CellBwdOp::attachInterface<KernelBufferizationModel<rnn::CellBwdOp>>(
        *ctx);
    rnn::CellReplayOp::attachInterface<
        KernelBufferizationModel<rnn::CellReplayOp>>(*ctx);
  });
}
