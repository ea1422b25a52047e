//===- BufferLiveness.cpp - live ranges of a function's buffers -----------===//
//
// Implements BufferLiveness.h.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Dialect/RNNAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rnn;

SmallVector<Value> mlir::rnn::collectAliases(Value buffer) {
  llvm::SetVector<Value> aliases;
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!aliases.insert(value))
      continue;
    for (Operation *user : value.getUsers()) {
      // Views (subview, view, cast, reshapes, reinterpret_cast: the memref
      // ops that implement ViewLikeOpInterface), and a select, which may
      // be either of its operands.
      bool aliasing = isa<ViewLikeOpInterface, arith::SelectOp>(user);
      if (!aliasing)
        continue;
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }
  return aliases.takeVector();
}

std::optional<int64_t> rnn::getBufferBytes(MemRefType type,
                                           const DataLayout &layout) {
  // A buffer of another layout spans more than its elements.
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  Type element = type.getElementType();
  if (!isa<IntegerType, IndexType, FloatType, ComplexType, VectorType>(element))
    return std::nullopt;
  llvm::TypeSize size = layout.getTypeSize(element);
  if (size.isScalable())
    return std::nullopt;
  // Dimension by dimension: ShapedType::getNumElements does not check.
  int64_t bytes = static_cast<int64_t>(size.getFixedValue());
  for (int64_t dim : type.getShape())
    if (llvm::MulOverflow(bytes, dim, bytes))
      return std::nullopt;
  return bytes;
}

BufferLiveness::BufferLiveness(func::FuncOp func) {
  if (func.isExternal())
    return;
  DataLayout layout = DataLayout::closest(func);
  int64_t totalBytes = 0;
  Block &block = func.getBody().front();
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : block)
    position[&op] = numPositions++;

  func.walk([&](memref::AllocOp alloc) {
    if (alloc->getBlock() != &block) {
      staticAllocs = symbolicAllocs = false;
      return;
    }
    BufferInfo info;
    info.alloc = alloc;
    if (auto role = alloc->getAttrOfType<StringAttr>(kRoleAttr))
      info.role = role.str();
    else
      info.role = "buffer";
    if (auto layer = alloc->getAttrOfType<IntegerAttr>(kLayerAttr))
      info.layer = layer.getInt();
    if (alloc.getType().hasStaticShape()) {
      // Every sum of buffer sizes (the peak, the planned offsets) stays
      // below the sum of all of them, which must fit in 64 bits.
      std::optional<int64_t> bytes = getBufferBytes(alloc.getType(), layout);
      if (!bytes || llvm::AddOverflow(totalBytes, *bytes, totalBytes)) {
        staticAllocs = symbolicAllocs = false;
        return;
      }
      info.bytes = *bytes;
      info.size = SizeExpr::constant(*bytes);
    } else {
      staticAllocs = false;
      info.size = SizeExpr::bytesOf(alloc.getType(), alloc.getDynamicSizes(),
                                    layout, sizeSymbols);
      symbolicAllocs &= info.size.has_value();
    }
    info.allocIndex = info.lastUseIndex = position[alloc];
    for (Value alias : collectAliases(alloc.getResult())) {
      for (Operation *user : alias.getUsers()) {
        if (isa<func::ReturnOp>(user))
          info.returned = true;
        else if (user->hasTrait<OpTrait::IsTerminator>() ||
                 (user->getNumRegions() > 0 &&
                  llvm::any_of(user->getResultTypes(), [](Type type) {
                    return isa<BaseMemRefType>(type);
                  })))
          info.escapes = true;
        if (auto dealloc = dyn_cast<memref::DeallocOp>(user);
            dealloc && dealloc->getBlock() == &block) {
          info.dealloc = dealloc;
          info.deallocIndex = position[dealloc];
          continue;
        }
        Operation *ancestor = block.findAncestorOpInBlock(*user);
        if (ancestor)
          info.lastUseIndex = std::max(info.lastUseIndex, position[ancestor]);
      }
    }
    if (info.escapes)
      info.lastUseIndex = numPositions - 1;
    buffers.push_back(info);
  });
}

SmallVector<int64_t> BufferLiveness::getHeldBytes() const {
  // Bytes allocated and freed at each position, then a running sum.
  SmallVector<int64_t> held(numPositions + 1, 0);
  for (const BufferInfo &buffer : buffers) {
    held[buffer.allocIndex] += buffer.bytes;
    if (buffer.dealloc)
      held[buffer.deallocIndex] -= buffer.bytes;
  }
  for (unsigned i = 1; i < held.size(); ++i)
    held[i] += held[i - 1];
  return held;
}

SmallVector<SizeExpr> BufferLiveness::getHeldSizes() const {
  SmallVector<SizeExpr> held(numPositions + 1);
  for (const BufferInfo &buffer : buffers) {
    if (!buffer.size)
      continue;
    held[buffer.allocIndex] = held[buffer.allocIndex] + *buffer.size;
    if (buffer.dealloc)
      held[buffer.deallocIndex] = held[buffer.deallocIndex] - *buffer.size;
  }
  for (unsigned i = 1; i < held.size(); ++i)
    held[i] = held[i] + held[i - 1];
  return held;
}

std::pair<int64_t, unsigned> BufferLiveness::getPeak() const {
  int64_t peak = 0;
  unsigned position = 0;
  for (auto [index, bytes] : llvm::enumerate(getHeldBytes()))
    if (bytes > peak) {
      peak = bytes;
      position = index;
    }
  return {peak, position};
}

CallShape BufferLiveness::getCallShape(int64_t seqLen, int64_t batch) const {
  return sizeSymbols.at(seqLen, batch);
}
