//===- KernelBuilder.cpp - building blocks of the rnn lowering ------------===//
//
// Implements the IR vocabulary of KernelBuilder.h.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Dialect/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::rnn;

OpFoldResult KernelBuilder::sizeOf(Value buffer, unsigned dim) {
  return memref::getMixedSize(b, b.getLoc(), buffer, dim);
}

Shape KernelBuilder::shapeOf(Value buffer) {
  return memref::getMixedSizes(b, b.getLoc(), buffer);
}

SmallVector<Shape> KernelBuilder::shapesOf(ArrayRef<Value> buffers) {
  return llvm::map_to_vector(buffers,
                             [&](Value buffer) { return shapeOf(buffer); });
}

KernelBuilder::KernelBuilder(OpBuilder &builder, Location loc, Type elementType,
                             Type storageType, int64_t vectorWidth,
                             bool storageGemm, bool wholeVectors)
    : b(loc, builder), elementType(elementType), storageType(storageType),
      gemmType(storageGemm ? storageType : elementType),
      vectorWidth(vectorWidth), wholeVectors(wholeVectors) {
  // Only GEMM operands rounded to a narrower storage type are made there.
  if (storageType != elementType)
    kernelStart = arith::ConstantIndexOp::create(b, 0);
}

bool KernelBuilder::isAlongLanes(Value index) {
  if (width == 1)
    return false;
  if (index == laneIv)
    return true;
  auto add = index.getDefiningOp<arith::AddIOp>();
  return add && add.getLhs() == laneIv &&
         add.getRhs().getDefiningOp<arith::ConstantOp>();
}

/// The constant `index` adds to a lane index (0 for the index itself).
static int64_t laneOffset(Value index) {
  auto add = index.getDefiningOp<arith::AddIOp>();
  if (!add)
    return 0;
  return getConstantIntValue(add.getRhs()).value_or(1);
}

bool KernelBuilder::isAligned(Value memref, int64_t elements) {
  Operation *def = memref.getDefiningOp();
  if (!def)
    return true;
  if (auto cast = dyn_cast<memref::CastOp>(def))
    return isAligned(cast.getSource(), elements);
  if (auto select = dyn_cast<arith::SelectOp>(def))
    return isAligned(select.getTrueValue(), elements) &&
           isAligned(select.getFalseValue(), elements);
  if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
    return isAligned(def->getOperand(0), elements);
  if (auto subview = dyn_cast<memref::SubViewOp>(def)) {
    auto [strides, offset] = subview.getSourceType().getStridesAndOffset();
    for (auto [stride, start] :
         llvm::zip(strides, subview.getMixedOffsets())) {
      // A dimension adds start * stride elements to the offset.
      std::optional<int64_t> constant = getConstantIntValue(start);
      if (constant && *constant == 0)
        continue;
      if (ShapedType::isDynamic(stride) ||
          (stride % elements != 0 &&
           (!constant || (*constant * stride) % elements != 0)))
        return false;
    }
    return isAligned(subview.getSource(), elements);
  }
  // Allocations, function arguments and views the loops do not make are
  // buffers of their own.
  return isa<memref::AllocOp, memref::AllocaOp>(def);
}

llvm::MaybeAlign KernelBuilder::vectorAlignment(Value memref,
                                                ValueRange indices) {
  if (!wholeVectors || laneOffset(indices.back()) % width != 0)
    return std::nullopt;
  auto type = cast<MemRefType>(memref.getType());
  auto [strides, offset] = type.getStridesAndOffset();
  if (strides.back() != 1)
    return std::nullopt;
  for (int64_t stride : ArrayRef(strides).drop_back())
    if (ShapedType::isDynamic(stride) || stride % width != 0)
      return std::nullopt;
  if (!isAligned(memref, width))
    return std::nullopt;
  int64_t bytes = width * type.getElementTypeBitWidth() / 8;
  return llvm::MaybeAlign(bytes);
}

Value KernelBuilder::lanes(Value value) {
  if (width == 1 || isa<VectorType>(value.getType()))
    return value;
  return vector::BroadcastOp::create(
      b, VectorType::get({width}, value.getType()), value);
}

Value KernelBuilder::index(int64_t value) {
  return arith::ConstantIndexOp::create(b, value);
}

Value KernelBuilder::index(OpFoldResult size) {
  if (std::optional<int64_t> constant = getConstantIntValue(size))
    return index(*constant);
  return cast<Value>(size);
}

OpFoldResult KernelBuilder::size(int64_t value) {
  return b.getIndexAttr(value);
}

OpFoldResult KernelBuilder::mulSize(OpFoldResult lhs, OpFoldResult rhs) {
  std::optional<int64_t> l = getConstantIntValue(lhs),
                         r = getConstantIntValue(rhs);
  if (l && r)
    return size(*l * *r);
  if (l == 1)
    return rhs;
  if (r == 1)
    return lhs;
  return arith::MulIOp::create(b, index(lhs), index(rhs)).getResult();
}

OpFoldResult KernelBuilder::subSize(OpFoldResult lhs, int64_t rhs) {
  if (std::optional<int64_t> l = getConstantIntValue(lhs))
    return size(*l - rhs);
  if (rhs == 0)
    return lhs;
  return arith::SubIOp::create(b, index(lhs), index(rhs)).getResult();
}

Value KernelBuilder::gemmBlockSteps(OpFoldResult steps, OpFoldResult batch,
                                    int64_t rows) {
  return BlockStepsOp::create(b, b.getIndexType(), index(steps),
                              index(batch), b.getI64IntegerAttr(rows));
}

Value KernelBuilder::chunkSteps(OpFoldResult steps, OpFoldResult block,
                                int64_t chunk) {
  return ChunkStepsOp::create(b, b.getIndexType(), index(steps), index(block),
                              b.getI64IntegerAttr(chunk));
}

Value KernelBuilder::scalar(double value) {
  FloatAttr attr = b.getFloatAttr(elementType, value);
  if (width == 1)
    return arith::ConstantOp::create(b, attr);
  auto type = VectorType::get({width}, elementType);
  return arith::ConstantOp::create(b, DenseElementsAttr::get(type, attr));
}

/// `type`, or a vector of `width` of it.
static Type withWidth(Type type, int64_t width) {
  return width == 1 ? type : VectorType::get({width}, type);
}

Value KernelBuilder::load(Value memref, ValueRange indices) {
  Type stored = cast<MemRefType>(memref.getType()).getElementType();
  Value value;
  if (!indices.empty() && isAlongLanes(indices.back()))
    value = vector::LoadOp::create(b, VectorType::get({width}, stored), memref,
                                   indices, /*nontemporal=*/false,
                                   vectorAlignment(memref, indices));
  else
    value = memref::LoadOp::create(b, memref, indices);
  // A mask (i1) is read as it is.
  if (stored == elementType || !isa<FloatType>(stored))
    return value;
  return arith::ExtFOp::create(
      b, withWidth(elementType, isa<VectorType>(value.getType()) ? width : 1),
      value);
}

void KernelBuilder::store(Value value, Value memref, ValueRange indices) {
  Type stored = cast<MemRefType>(memref.getType()).getElementType();
  bool vector = !indices.empty() && isAlongLanes(indices.back());
  if (vector)
    value = lanes(value);
  if (stored != elementType && isa<FloatType>(stored))
    value = arith::TruncFOp::create(b, withWidth(stored, vector ? width : 1),
                                    value);
  if (vector) {
    vector::StoreOp::create(b, value, memref, indices, /*nontemporal=*/false,
                            vectorAlignment(memref, indices));
    return;
  }
  memref::StoreOp::create(b, value, memref, indices);
}

Value KernelBuilder::round(Value value) {
  Type type = value.getType();
  int64_t w = isa<VectorType>(type) ? width : 1;
  Value narrow = arith::TruncFOp::create(b, withWidth(storageType, w), value);
  return arith::ExtFOp::create(b, type, narrow);
}

Value KernelBuilder::add(Value lhs, Value rhs) {
  return arith::AddFOp::create(b, lanes(lhs), lanes(rhs));
}

Value KernelBuilder::sub(Value lhs, Value rhs) {
  return arith::SubFOp::create(b, lanes(lhs), lanes(rhs));
}

Value KernelBuilder::mul(Value lhs, Value rhs) {
  return arith::MulFOp::create(b, lanes(lhs), lanes(rhs));
}

Value KernelBuilder::addIndex(Value lhs, int64_t rhs) {
  if (rhs == 0)
    return lhs;
  return arith::AddIOp::create(b, lhs, index(rhs));
}

Value KernelBuilder::sigmoid(Value x) {
  Value e = math::ExpOp::create(b, arith::NegFOp::create(b, x));
  return arith::DivFOp::create(b, scalar(1.0), add(scalar(1.0), e));
}

Value KernelBuilder::tanh(Value x) { return math::TanhOp::create(b, x); }

Value KernelBuilder::select(Value mask, Value onTrue, Value onFalse) {
  return arith::SelectOp::create(b, mask, lanes(onTrue), lanes(onFalse));
}

Value KernelBuilder::zeroIf(Value mask, Value value) {
  return select(mask, scalar(0.0), value);
}

void KernelBuilder::parallel(ArrayRef<OpFoldResult> upperBounds,
                             function_ref<void(ValueRange ivs)> body) {
  // One loop of `w` lanes over [lower, upper) of the innermost dimension.
  auto emit = [&](int64_t lower, OpFoldResult upper, int64_t w) {
    SmallVector<Value> lbs, ubs, steps;
    for (OpFoldResult ub : upperBounds.drop_back()) {
      lbs.push_back(index(0));
      ubs.push_back(index(ub));
      steps.push_back(index(1));
    }
    lbs.push_back(index(lower));
    ubs.push_back(index(upper));
    steps.push_back(index(w));
    auto loop = scf::ParallelOp::create(b, lbs, ubs, steps);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    width = w;
    laneIv = w > 1 ? loop.getInductionVars().back() : Value();
    body(loop.getInductionVars());
    width = 1;
    laneIv = Value();
  };
  // A dynamic innermost size (ones of a dynamic block) is scalar.
  std::optional<int64_t> innerSize = getConstantIntValue(upperBounds.back());
  if (!innerSize) {
    emit(0, upperBounds.back(), 1);
    return;
  }
  int64_t inner = *innerSize;
  int64_t vectorized = vectorWidth > 1 ? inner / vectorWidth * vectorWidth : 0;
  // A remainder would be a loop (a kernel) of its own.
  if (wholeVectors && vectorized != inner)
    vectorized = 0;
  if (vectorized > 0)
    emit(0, size(vectorized), vectorWidth);
  if (vectorized < inner)
    emit(vectorized, size(inner), 1);
}

void KernelBuilder::parallelEach(
    ArrayRef<Shape> shapes,
    function_ref<void(unsigned i, ValueRange iv)> body) {
  if (llvm::all_equal(shapes)) {
    parallel(shapes.front(), [&](ValueRange iv) {
      for (unsigned i = 0; i < shapes.size(); ++i)
        body(i, iv);
    });
    return;
  }
  auto count = [&](ArrayRef<OpFoldResult> shape) {
    OpFoldResult n = size(1);
    for (OpFoldResult dim : shape)
      n = mulSize(n, dim);
    return n;
  };
  SmallVector<OpFoldResult> counts =
      llvm::map_to_vector(shapes, [&](const Shape &s) { return count(s); });
  // Each count as a constant times its dynamic sizes (T, B: values read
  // once per kernel, each at least 1). One loop runs every shape, the
  // smaller counts guarded: over the count that bounds the others, as for
  // static shapes (a constant at least theirs, times a superset of their
  // sizes), else over their maximum at run time, every body guarded.
  auto byAddress = [](Value x, Value y) {
    return x.getAsOpaquePointer() < y.getAsOpaquePointer();
  };
  SmallVector<int64_t> coefficients;
  SmallVector<SmallVector<Value>> factors;
  for (const Shape &shape : shapes) {
    int64_t coefficient = 1;
    SmallVector<Value> dynamic;
    for (OpFoldResult dim : shape) {
      if (std::optional<int64_t> n = getConstantIntValue(dim))
        coefficient *= *n;
      else
        dynamic.push_back(cast<Value>(dim));
    }
    llvm::sort(dynamic, byAddress);
    coefficients.push_back(coefficient);
    factors.push_back(std::move(dynamic));
  }
  // Whether count i is at least count j at every shape.
  auto bounds = [&](unsigned i, unsigned j) {
    return coefficients[i] >= coefficients[j] &&
           std::includes(factors[i].begin(), factors[i].end(),
                         factors[j].begin(), factors[j].end(), byAddress);
  };
  std::optional<unsigned> largest;
  for (unsigned i = 0; i < shapes.size() && !largest; ++i)
    if (llvm::all_of(llvm::seq<unsigned>(0, shapes.size()),
                     [&](unsigned j) { return bounds(i, j); }))
      largest = i;
  Value upper;
  if (largest) {
    upper = index(counts[*largest]);
  } else {
    // Each count once (two bound each other where they are equal).
    upper = index(counts.front());
    for (unsigned i = 1; i < counts.size(); ++i)
      if (llvm::none_of(llvm::seq<unsigned>(0, i), [&](unsigned j) {
            return bounds(i, j) && bounds(j, i);
          }))
        upper = arith::MaxUIOp::create(b, upper, index(counts[i]));
  }
  auto loop = scf::ParallelOp::create(b, ValueRange{index(0)},
                                      ValueRange{upper}, ValueRange{index(1)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value linear = loop.getInductionVars().front();
  for (auto [i, shape] : llvm::enumerate(shapes)) {
    OpBuilder::InsertionGuard inner(b);
    if (!largest || (i != *largest && !bounds(i, *largest))) {
      Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                           linear, index(counts[i]));
      auto guarded = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
      b.setInsertionPoint(guarded.thenBlock()->getTerminator());
    }
    SmallVector<Value> iv(shape.size());
    Value rest = linear;
    for (size_t d = shape.size(); d-- > 0;) {
      iv[d] = d == 0 ? rest
                     : arith::RemUIOp::create(b, rest, index(shape[d]))
                           .getResult();
      if (d > 0)
        rest = arith::DivUIOp::create(b, rest, index(shape[d]));
    }
    body(i, iv);
  }
}

void KernelBuilder::forRange(OpFoldResult n,
                             function_ref<void(Value i)> body) {
  auto loop = scf::ForOp::create(b, index(0), index(n), index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

void KernelBuilder::forTime(OpFoldResult steps, bool reverse,
                            function_ref<void(Value t)> body) {
  forRange(steps, [&](Value i) {
    if (!reverse)
      return body(i);
    body(arith::SubIOp::create(b, index(subSize(steps, 1)), i));
  });
}

Value KernelBuilder::alloc(ArrayRef<OpFoldResult> shape, StringRef role,
                           Type type) {
  SmallVector<int64_t> staticShape;
  SmallVector<Value> dynamicSizes;
  dispatchIndexOpFoldResults(shape, dynamicSizes, staticShape);
  // No alignment attribute: the runtime aligns every buffer to 64 bytes, and
  // an attribute would make the lowering over-allocate to align by hand.
  Value buffer = memref::AllocOp::create(
      b, MemRefType::get(staticShape, type ? type : elementType),
      dynamicSizes);
  buffer.getDefiningOp()->setAttr(kRoleAttr, b.getStringAttr(role));
  scratch.push_back(buffer);
  return buffer;
}

void KernelBuilder::freeScratch(Operation *after) {
  OpBuilder::InsertionGuard guard(b);
  if (after)
    b.setInsertionPointAfter(after);
  for (Value buffer : scratch)
    memref::DeallocOp::create(b, buffer);
  scratch.clear();
}

Value KernelBuilder::blockSlot(const BlockSlots &slots, Value start) {
  Value ordinal =
      slots.stride == 1
          ? start
          : arith::DivUIOp::create(b, start, index(slots.stride)).getResult();
  return addIndex(ordinal, slots.base);
}

void KernelBuilder::signalBlock(Value start) {
  if (signalSlots)
    SignalOp::create(b, blockSlot(*signalSlots, start));
}

void KernelBuilder::waitBlock(Value start) {
  if (waitSlots)
    WaitOp::create(b, blockSlot(*waitSlots, start));
}

Value KernelBuilder::step(Value sequence, Value t) {
  auto type = cast<MemRefType>(sequence.getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<OpFoldResult> offsets = {t, b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {
      b.getIndexAttr(1), sizeOf(sequence, 1),
      sizeOf(sequence, 2)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  auto resultType = memref::SubViewOp::inferRankReducedResultType(
      {shape[1], shape[2]}, type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, cast<MemRefType>(resultType), sequence,
                                   offsets, sizes, strides);
}

Value KernelBuilder::flatten(Value sequence) {
  SmallVector<ReassociationIndices> groups = {{0, 1}, {2}};
  return memref::CollapseShapeOp::create(b, sequence, groups);
}

Value KernelBuilder::previous(Value sequence, Value initial, Value t) {
  Value zero = index(0);
  Value before =
      arith::MaxSIOp::create(b, arith::SubIOp::create(b, t, index(1)), zero);
  return initialOr(initial, step(sequence, before), t);
}

Value KernelBuilder::initialOr(Value initial, Value carried, Value t) {
  Value init = initial.getType() == carried.getType()
                   ? initial
                   : memref::CastOp::create(b, carried.getType(), initial)
                         .getResult();
  Value first =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, index(0));
  return arith::SelectOp::create(b, first, init, carried);
}

Value rnn::viewedBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      value = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      value = cast.getSource();
    else
      break;
  }
  return value;
}

bool KernelBuilder::isGemmReady(Value value) {
  return storageType == elementType ||
         gemmOperands.contains(viewedBuffer(value)) ||
         (gemmType != elementType &&
          cast<MemRefType>(value.getType()).getElementType() == gemmType);
}

Value KernelBuilder::gemmOperand(Value value) {
  if (isGemmReady(value))
    return value;
  // Once, before the kernel's loops, into a buffer of its own.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(kernelStart);
  Value converted = convertOperand(value, std::nullopt);
  gemmOperands.insert(converted);
  return converted;
}

void KernelBuilder::setGemmRowsBound(OpFoldResult rows) {
  gemmRowsBound = rows;
  if (roundsGemmOperands())
    dynamicConversionsStart = arith::ConstantIndexOp::create(b, 0);
}

Value KernelBuilder::convertOperand(Value value, std::optional<unsigned> slot) {
  auto type = cast<MemRefType>(value.getType());
  Value dst;
  if (!type.hasStaticShape()) {
    // [rows, X]: the leading rows of its slot's [P * B, X] buffer.
    assert(type.getRank() == 2 && !type.isDynamicDim(1) &&
           dynamicConversionsStart && "a GEMM operand of dynamic rows");
    int64_t columns = type.getDimSize(1);
    Value &buffer = conversions[{slot.value_or(2), {ShapedType::kDynamic,
                                                     columns}}];
    if (!buffer) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(dynamicConversionsStart);
      buffer = alloc({gemmRowsBound, size(columns)}, "gemm_operand", gemmType);
    }
    dst = rows(buffer, sizeOf(value, 0));
  } else {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(kernelStart);
    Shape shape = getAsIndexOpFoldResult(b.getContext(), type.getShape());
    if (!slot) {
      dst = alloc(shape, "gemm_weight", gemmType);
    } else {
      Value &buffer =
          conversions[{*slot, SmallVector<int64_t>(type.getShape())}];
      if (!buffer)
        buffer = alloc(shape, "gemm_operand", gemmType);
      dst = buffer;
    }
  }
  convertInto(value, dst);
  return dst;
}

Value KernelBuilder::allocGemmOperand(ArrayRef<OpFoldResult> shape,
                                      StringRef role) {
  Value buffer = alloc(shape, role, gemmType);
  gemmOperands.insert(buffer);
  return buffer;
}

void KernelBuilder::storeGemmOperand(Value value, Value dst,
                                     ValueRange indices) {
  // A store into a bf16 buffer rounds; into an f32 one, round first.
  store(gemmType == storageType ? value : round(value), dst, indices);
}

void KernelBuilder::convertInto(Value src, Value dst) {
  // A value of the storage type (widened by the load) is bf16 already.
  bool rounded =
      cast<MemRefType>(src.getType()).getElementType() == storageType;
  parallel(shapeOf(dst), [&](ValueRange iv) {
    Value element = load(src, iv);
    if (rounded)
      store(element, dst, iv);
    else
      storeGemmOperand(element, dst, iv);
  });
}

void KernelBuilder::matmul(Value a, Value bMat, Value c, bool transA,
                           bool transB, bool accumulate) {
  if (storageType != elementType) {
    // Both operands rounded to bf16, in scratch where needed: the second
    // one in a buffer of its own if it has the first one's shape.
    auto shape = [](Value v) {
      return cast<MemRefType>(v.getType()).getShape();
    };
    bool convertA = !isGemmReady(a);
    if (convertA)
      a = convertOperand(a, 0);
    if (!isGemmReady(bMat))
      bMat = convertOperand(bMat, convertA && shape(a) == shape(bMat) ? 1 : 0);
  }
  if (!accumulate)
    linalg::FillOp::create(b, ValueRange{scalar(0.0)}, ValueRange{c});
  MLIRContext *ctx = b.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](AffineExpr r, AffineExpr col) {
    return AffineMap::get(3, 0, {r, col}, ctx);
  };
  SmallVector<Attribute> maps = {
      AffineMapAttr::get(transA ? map(k, m) : map(m, k)),
      AffineMapAttr::get(transB ? map(n, k) : map(k, n)),
      AffineMapAttr::get(map(m, n))};
  auto op = linalg::MatmulOp::create(b, ValueRange{a, bMat}, ValueRange{c});
  op.setIndexingMapsAttr(b.getArrayAttr(maps));
}

void KernelBuilder::copy(Value src, Value dst) {
  parallel(shapeOf(dst), [&](ValueRange iv) { store(load(src, iv), dst, iv); });
}

void KernelBuilder::zero(Value dst) {
  parallel(shapeOf(dst), [&](ValueRange iv) { store(scalar(0.0), dst, iv); });
}

Value KernelBuilder::allocOnes(OpFoldResult n) {
  Value buffer = alloc({size(1), n}, "ones", gemmType);
  // 1 is a bf16 value.
  gemmOperands.insert(buffer);
  return buffer;
}

void KernelBuilder::addColumnSums(Value rowsMatrix, Value onesRow, Value acc) {
  OpFoldResult numRows = sizeOf(rowsMatrix, 0);
  matmul(columns(onesRow, 0, numRows), rowsMatrix, acc, false, false, true);
}

Value KernelBuilder::row(Value vector) {
  int64_t n = cast<MemRefType>(vector.getType()).getDimSize(0);
  return memref::ExpandShapeOp::create(b, ArrayRef<int64_t>{1, n}, vector,
                                       {ReassociationIndices{0, 1}});
}

/// The [len0, len1] block of a matrix at (start0, start1).
static Value submatrix(ImplicitLocOpBuilder &b, Value matrix, int64_t start0,
                       OpFoldResult len0, int64_t start1, OpFoldResult len1) {
  SmallVector<OpFoldResult> whole =
      memref::getMixedSizes(b, b.getLoc(), matrix);
  if (start0 == 0 && start1 == 0 && isEqualConstantIntOrValue(len0, whole[0]) &&
      isEqualConstantIntOrValue(len1, whole[1]))
    return matrix;
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(start0),
                                       b.getIndexAttr(start1)};
  SmallVector<OpFoldResult> sizes = {len0, len1};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  return memref::SubViewOp::create(b, matrix, offsets, sizes, strides);
}

Value KernelBuilder::columns(Value matrix, int64_t start, OpFoldResult len) {
  return submatrix(b, matrix, 0, sizeOf(matrix, 0),
                   start, len);
}

Value KernelBuilder::rows(Value matrix, int64_t start, int64_t len) {
  return submatrix(b, matrix, start, size(len), 0,
                   sizeOf(matrix, 1));
}

Value KernelBuilder::rows(Value matrix, OpFoldResult len) {
  return submatrix(b, matrix, 0, len, 0,
                   sizeOf(matrix, 1));
}

Value KernelBuilder::steps(Value sequence, Value start, OpFoldResult len) {
  Shape shape = shapeOf(sequence);
  if (isEqualConstantIntOrValue(len, shape[0]) && matchPattern(start, m_Zero()))
    return sequence;
  SmallVector<OpFoldResult> offsets = {start, b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {len, shape[1], shape[2]};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return memref::SubViewOp::create(b, sequence, offsets, sizes, strides);
}

Value KernelBuilder::leading(Value sequence, OpFoldResult len) {
  return steps(sequence, index(0), len);
}

void KernelBuilder::project(Value x, Value weightIh, Value dst) {
  Value rows = flatten(x);
  Value out = flatten(dst);
  matmul(rows, weightIh, out, /*transA=*/false, /*transB=*/true,
         /*accumulate=*/false);
}

void KernelBuilder::forChunks(
    OpFoldResult steps, OpFoldResult chunk, bool reverse,
    function_ref<void(Value start, OpFoldResult len)> body) {
  // One chunk of all the steps (a dynamic T without a chunk).
  if (steps == chunk)
    return body(index(0), steps);
  std::optional<int64_t> staticSteps = getConstantIntValue(steps),
                         staticChunk = getConstantIntValue(chunk);
  if (!staticSteps || !staticChunk)
    return forDynamicChunks(steps, chunk, reverse, body);
  forStaticChunks(*staticSteps, *staticChunk, reverse, body);
}

/// The full chunks, then the short one, or the reverse.
static void inChunkOrder(bool reverse, function_ref<void()> fullChunks,
                         function_ref<void()> shortChunk) {
  if (reverse) {
    shortChunk();
    fullChunks();
  } else {
    fullChunks();
    shortChunk();
  }
}

void KernelBuilder::forDynamicChunks(
    OpFoldResult steps, OpFoldResult chunk, bool reverse,
    function_ref<void(Value start, OpFoldResult len)> body) {
  Value t = index(steps), k = index(chunk);
  Value full = arith::DivUIOp::create(b, t, k);
  Value fullSteps = arith::MulIOp::create(b, full, k);
  Value rest = arith::SubIOp::create(b, t, fullSteps);
  auto fullChunks = [&] {
    forTime(full, reverse, [&](Value w) {
      body(arith::MulIOp::create(b, w, k), chunk);
    });
  };
  auto shortChunk = [&] {
    Value some = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, rest,
                                       index(0));
    auto guarded = scf::IfOp::create(b, some, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(guarded.thenBlock()->getTerminator());
    body(fullSteps, rest);
  };
  inChunkOrder(reverse, fullChunks, shortChunk);
}

void KernelBuilder::forStaticChunks(
    int64_t steps, int64_t chunk, bool reverse,
    function_ref<void(Value start, OpFoldResult len)> body) {
  int64_t full = steps / chunk, rest = steps % chunk;
  auto fullChunks = [&] {
    if (full == 1)
      return body(index(0), size(chunk));
    if (full > 1)
      forTime(size(full), reverse, [&](Value w) {
        body(arith::MulIOp::create(b, w, index(chunk)), size(chunk));
      });
  };
  auto shortChunk = [&] {
    if (rest)
      body(index(full * chunk), size(rest));
  };
  inChunkOrder(reverse, fullChunks, shortChunk);
}

void KernelBuilder::forBlocks(
    Value first, OpFoldResult steps, OpFoldResult block, bool reverse,
    function_ref<void(Value start, Value offset, OpFoldResult len)> body) {
  forChunks(steps, block, reverse, [&](Value offset, OpFoldResult len) {
    Value start = matchPattern(first, m_Zero())
                      ? offset
                      : arith::AddIOp::create(b, first, offset).getResult();
    body(start, offset, len);
  });
}

void KernelBuilder::forBlockSteps(
    Value start, Value offset, OpFoldResult len, bool reverse,
    function_ref<void(Value t, Value j, Value i)> body) {
  forTime(len, reverse, [&](Value i) {
    Value t = arith::AddIOp::create(b, start, i);
    Value j = offset == start ? t : arith::AddIOp::create(b, offset, i);
    body(t, j, i);
  });
}
