//===- ForwardKernels.cpp - model op -> forward kernel --------------------===//
//
// Implements ForwardKernels.h.
//
//===----------------------------------------------------------------------===//

#include "ForwardKernels.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include "rnn/Dialect/RNNOps.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rnn;

Value mlir::rnn::createEmptyLike(OpBuilder &builder, Location loc,
                                 Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  SmallVector<Value> sizes;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(tensor::DimOp::create(builder, loc, like, i));
  return tensor::EmptyOp::create(builder, loc, type, sizes);
}

Value mlir::rnn::createLayerEmpty(OpBuilder &builder, Location loc, Type type,
                                  Value x) {
  auto tensorType = cast<RankedTensorType>(type);
  // [T, B, W] takes x's T and B; [B, W] its B.
  int64_t skipped = 3 - tensorType.getRank();
  SmallVector<Value> sizes;
  for (auto [i, size] : llvm::enumerate(tensorType.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(tensor::DimOp::create(builder, loc, x, i + skipped));
  return tensor::EmptyOp::create(builder, loc, tensorType, sizes);
}

RankedTensorType mlir::rnn::checkpointsType(RankedTensorType cells,
                                            int64_t chunk) {
  SmallVector<int64_t> shape(cells.getShape());
  shape[0] = llvm::divideCeil(shape[0], chunk);
  return cells.clone(shape);
}

Value mlir::rnn::createCheckpointsEmpty(OpBuilder &builder, Location loc,
                                        RankedTensorType cells, Value x,
                                        int64_t rows, int64_t chunk) {
  Value t = tensor::DimOp::create(builder, loc, x, 0);
  Value b = tensor::DimOp::create(builder, loc, x, 1);
  Type index = builder.getIndexType();
  Value block = BlockStepsOp::create(builder, loc, index, t, b,
                                     builder.getI64IntegerAttr(rows));
  Value steps = ChunkStepsOp::create(builder, loc, index, t, block,
                                     builder.getI64IntegerAttr(chunk));
  SmallVector<Value> sizes = {
      arith::CeilDivUIOp::create(builder, loc, t, steps)};
  SmallVector<int64_t> shape(cells.getShape());
  shape[0] = ShapedType::kDynamic;
  if (ShapedType::isDynamic(shape[1]))
    sizes.push_back(b);
  return tensor::EmptyOp::create(builder, loc, cells.clone(shape), sizes);
}

Value mlir::rnn::createZeroTensor(OpBuilder &builder, Location loc,
                                  Value like) {
  Type elementType = cast<RankedTensorType>(like.getType()).getElementType();
  Value zero = arith::ConstantOp::create(
      builder, loc, builder.getFloatAttr(elementType, 0.0));
  return linalg::FillOp::create(builder, loc, ValueRange{zero},
                                ValueRange{createEmptyLike(builder, loc, like)})
      .getResult(0);
}

/// Appends an empty destination per type in `types`, values of the layer
/// of input `x`.
static void addDestinations(OpBuilder &builder, Location loc, TypeRange types,
                            Value x, SmallVectorImpl<Value> &operands) {
  for (Type type : types)
    operands.push_back(createLayerEmpty(builder, loc, type, x));
}

/// [T, B, width] tensor with the element type of `like`.
static RankedTensorType sequenceType(Value x, int64_t width) {
  auto xType = cast<RankedTensorType>(x.getType());
  return RankedTensorType::get(
      {xType.getDimSize(0), xType.getDimSize(1), width},
      xType.getElementType());
}

/// The layer of a model op: the `rnn.layer` of its initial state when that
/// is a function argument (model files name it), else its position among
/// the model ops (or forward kernels already made of them) of its block.
static int64_t layerOf(Operation *modelOp, Value h0) {
  if (auto arg = dyn_cast<BlockArgument>(h0))
    if (auto func =
            dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      if (auto layer = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                          kLayerAttr))
        return layer.getInt();
  int64_t position = 0;
  for (Operation *op = modelOp->getPrevNode(); op; op = op->getPrevNode())
    if (auto kernel = dyn_cast<KernelOpInterface>(op))
      position += kernel.getPhase() == KernelPhase::Fwd;
    else
      position += isa<LayerOpInterface>(op);
  return position;
}

Operation *mlir::rnn::createForwardKernel(OpBuilder &builder,
                                          Operation *modelOp,
                                          const IRMapping &mapping,
                                          int64_t gemmRows) {
  Location loc = modelOp->getLoc();
  auto layerOp = cast<LayerOpInterface>(modelOp);
  CellAttrInterface cell = layerOp.getCell();
  // Before the kernel is created in front of the model op.
  IntegerAttr layer = builder.getI64IntegerAttr(
      layerOf(modelOp, layerOp.getInitialStates().front()));
  SmallVector<Value> operands;
  for (Value operand : modelOp->getOperands())
    operands.push_back(mapping.lookupOrDefault(operand));
  // The model's results, then one [T, B, width] sequence per saved role,
  // in the storage type but for the states.
  SmallVector<Type> initTypes(modelOp->getResultTypes());
  for (StringRef role : cell.getSavedRoles()) {
    RankedTensorType type = sequenceType(
        layerOp.getInput(), cell.getRoleWidth(role, layerOp.getHiddenSize()));
    if (isStoredRole(cell, role))
      type = type.clone(layerOp.getStorageType());
    initTypes.push_back(type);
  }
  addDestinations(builder, loc, initTypes, operands.front(), operands);
  GemmBlock block =
      gemmBlockFor(layerOp.getSeqLen(), layerOp.getBatch(), gemmRows);

  Operation *fwd = createKernel(
      builder, loc, cell, KernelPhase::Fwd, !layerOp.getResetStates().empty(),
      initTypes, operands, block, std::nullopt, layerOp.getStorageType());
  fwd->setAttr(kLayerAttr, layer);
  return fwd;
}

SmallVector<Value> mlir::rnn::forwardOutputs(Operation *kernel) {
  auto dps = cast<DestinationStyleOpInterface>(kernel);
  SmallVector<Value> outputs;
  for (OpOperand *output : cast<KernelOpInterface>(kernel).getOutputOperands())
    outputs.push_back(dps.getTiedOpResult(output));
  return outputs;
}
