//===- RNNOps.cpp - rnn dialect operations --------------------------------===//
//
// Verifiers and interfaces of the rnn operations. All ops share one
// table-driven shape check: the sequence length T, batch size B and input
// size I come from `x`, the hidden size H from `weight_hh`, and every other
// operand (and result) is checked against them, so that a message always
// names the operand in error and the operand the size was taken from. T and
// B may be dynamic (`?`): a dimension that equals one of them is then `?`
// too, and every other size stays static.
//
//===----------------------------------------------------------------------===//

#include "rnn/Dialect/RNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rnn;

namespace {
/// A symbolic dimension of the recurrence.
enum class Dim { T, B, I, H, GH, Chunks, Width };

/// What one operand or result must look like.
struct ValueSpec {
  StringRef name;
  Type type;
  SmallVector<Dim, 3> dims;
  bool isMask = false;
  /// A saved value that is not a state: in the storage type.
  bool isStored = false;
};

/// Builds the specs of one kind of op from the operands in order.
struct SpecList {
  SmallVector<ValueSpec> specs;
  SpecList &add(StringRef name, Value value, ArrayRef<Dim> dims) {
    specs.push_back({name, value.getType(), SmallVector<Dim, 3>(dims)});
    return *this;
  }
  SpecList &addMask(StringRef name, Value value) {
    specs.push_back({name, value.getType(), {Dim::T, Dim::B}, true});
    return *this;
  }
  SpecList &addStored(StringRef name, Value value, ArrayRef<Dim> dims) {
    add(name, value, dims).specs.back().isStored = true;
    return *this;
  }
};
} // namespace

static StringRef dimName(Dim dim) {
  switch (dim) {
  case Dim::T:
    return "sequence length";
  case Dim::B:
    return "batch size";
  case Dim::I:
    return "input size";
  case Dim::H:
    return "hidden size";
  case Dim::GH:
    return "gate rows";
  case Dim::Chunks:
    return "chunk count";
  case Dim::Width:
    return "width";
  }
  llvm_unreachable("unknown dim");
}

/// A size as types print it: `?` where dynamic.
static std::string sizeString(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

/// Whether dimension `dim` may be dynamic: T, B and what is made of them.
static bool mayBeDynamic(Dim dim) {
  return dim == Dim::T || dim == Dim::B || dim == Dim::Chunks;
}

static std::string dimsString(ArrayRef<Dim> dims) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (i)
      s += ", ";
    s += d == Dim::T        ? "T"
         : d == Dim::B      ? "B"
         : d == Dim::I      ? "I"
         : d == Dim::H      ? "H"
         : d == Dim::Chunks ? "ceil(T/K)"
         : d == Dim::GH     ? "G*H"
                            : "W";
  }
  return s + "]";
}

/// Checks every spec of an op of `cell`: rank, static sizes but those of T
/// and B, element type, and each dimension against the one it must equal;
/// `chunk` is the chunk length K of checkpointed kernels.
static LogicalResult verifyRecurrence(Operation *op, CellAttrInterface cell,
                                      ArrayRef<ValueSpec> specs,
                                      std::optional<int64_t> chunk = {}) {
  int64_t numGates = cell.getNumGates();
  const ValueSpec *x = nullptr, *weightHh = nullptr;
  for (const ValueSpec &spec : specs) {
    auto shaped = dyn_cast<ShapedType>(spec.type);
    if (!shaped || !shaped.hasRank())
      return op->emitOpError() << spec.name << " must be a ranked tensor or "
                               << "memref, got " << spec.type;
    if (shaped.getRank() != static_cast<int64_t>(spec.dims.size()))
      return op->emitOpError()
             << spec.name << " must have rank " << spec.dims.size() << " "
             << dimsString(spec.dims) << ", got " << spec.type;
    for (auto [size, dim] : llvm::zip(shaped.getShape(), spec.dims))
      if (ShapedType::isDynamic(size) && !mayBeDynamic(dim))
        return op->emitOpError()
               << spec.name << " of type " << spec.type << " has a dynamic "
               << dimName(dim)
               << ": only the sequence length and batch size may be dynamic";
    if (spec.name == kRoleX)
      x = &spec;
    if (spec.name == kRoleWeightHh)
      weightHh = &spec;
  }
  assert(x && weightHh && "every rnn op has x and weight_hh");

  Type elementType = cast<ShapedType>(x->type).getElementType();
  // The lowering computes in f32 and f64 only: another type would verify
  // and then fail in the lowering with a message about its internals.
  if (!elementType.isF32() && !elementType.isF64())
    return op->emitOpError() << "x must have element type f32 or f64 (the "
                                "types the lowering computes in), got "
                             << elementType;
  for (const ValueSpec &spec : specs) {
    Type type = cast<ShapedType>(spec.type).getElementType();
    if (spec.isMask) {
      if (!type.isInteger(1))
        return op->emitOpError()
               << spec.name << " must have element type i1, got " << type;
      continue;
    }
    // In the storage type, which the kernel's verifier checks.
    if (spec.isStored)
      continue;
    if (type != elementType)
      return op->emitOpError() << "element type " << type << " of " << spec.name
                               << " != " << elementType << " of x";
  }

  ArrayRef<int64_t> xShape = cast<ShapedType>(x->type).getShape();
  ArrayRef<int64_t> whhShape = cast<ShapedType>(weightHh->type).getShape();
  int64_t hidden = whhShape[1];
  // An empty sequence, batch, input or state has nothing to compute and
  // would divide by zero in the block and chunk arithmetic.
  for (auto [size, what] :
       {std::pair<int64_t, StringRef>{xShape[0], "sequence length T of x"},
        {xShape[1], "batch size B of x"},
        {xShape[2], "input size I of x"},
        {hidden, "hidden size H of weight_hh"}})
    if (!ShapedType::isDynamic(size) && size < 1)
      return op->emitOpError() << what << " must be positive, got " << size;
  // Every byte count the passes and the runtime derive from these shapes
  // must fit in 64 bits (8-byte elements at most); a dynamic size is
  // checked when a call gives it.
  int64_t gateRows = 0;
  if (llvm::MulOverflow(numGates, hidden, gateRows))
    return op->emitOpError()
           << "hidden size " << hidden << " of weight_hh is too large";
  for (const ValueSpec &spec : specs) {
    int64_t bytes = 8;
    for (int64_t size : cast<ShapedType>(spec.type).getShape())
      if (!ShapedType::isDynamic(size) &&
          llvm::MulOverflow(bytes, size, bytes))
        return op->emitOpError()
               << spec.name << " of type " << spec.type
               << " is too large: its size in bytes overflows 64 bits";
  }
  // Under `rows` (T or B dynamic) a chunk is the K asked for, which each
  // call rounds to whole GEMM blocks and caps at T (rnn.chunk_steps).
  bool perCall =
      ShapedType::isDynamic(xShape[0]) || ShapedType::isDynamic(xShape[1]);
  if (chunk && !perCall && *chunk > xShape[0])
    return op->emitOpError()
           << "chunk " << *chunk << " exceeds the sequence length " << xShape[0]
           << " of x";
  auto expected = [&](Dim dim,
                      const ValueSpec &spec) -> std::pair<int64_t, StringRef> {
    switch (dim) {
    case Dim::T:
      return {xShape[0], kRoleX};
    case Dim::B:
      return {xShape[1], kRoleX};
    case Dim::I:
      return {xShape[2], kRoleX};
    case Dim::H:
      return {hidden, kRoleWeightHh};
    case Dim::GH:
      return {numGates * hidden, kRoleWeightHh};
    case Dim::Chunks:
      return {perCall ? ShapedType::kDynamic
                      : llvm::divideCeil(xShape[0], *chunk),
              kRoleX};
    case Dim::Width:
      return {cell.getRoleWidth(spec.name, hidden), kRoleWeightHh};
    }
    llvm_unreachable("unknown dim");
  };

  for (const ValueSpec &spec : specs) {
    ArrayRef<int64_t> shape = cast<ShapedType>(spec.type).getShape();
    for (auto [axis, dim] : llvm::enumerate(spec.dims)) {
      auto [want, source] = expected(dim, spec);
      if (shape[axis] == want)
        continue;
      if (dim == Dim::Chunks)
        return op->emitOpError()
               << "chunk count " << sizeString(shape[axis]) << " of "
               << spec.name << " != " << sizeString(want)
               << " (sequence length " << sizeString(xShape[0])
               << " of x in chunks of " << *chunk << ")";
      if (dim == Dim::GH)
        return op->emitOpError()
               << "gate rows " << shape[axis] << " of " << spec.name
               << " != " << want << " (" << numGates << " gates x hidden size "
               << hidden << " of weight_hh)";
      if (dim == Dim::Width)
        return op->emitOpError()
               << "width " << shape[axis] << " of " << spec.name
               << " != " << want << " (its width in " << cell
               << " for hidden size " << hidden << " of weight_hh)";
      return op->emitOpError()
             << dimName(dim) << " " << sizeString(shape[axis]) << " of "
             << spec.name << " != " << sizeString(want) << " of " << source;
    }
  }
  return success();
}

/// Kernels take tensors or memrefs, never both; in tensor form each
/// destination has a result of the same type.
static LogicalResult verifyKernelForm(Operation *op, unsigned numInits) {
  bool tensors = isa<RankedTensorType>(op->getOperand(0).getType());
  for (Value operand : op->getOperands())
    if (isa<RankedTensorType>(operand.getType()) != tensors)
      return op->emitOpError("operands must be all tensors or all memrefs");
  unsigned wantResults = tensors ? numInits : 0;
  if (op->getNumResults() != wantResults)
    return op->emitOpError() << "expected " << wantResults << " results in "
                             << (tensors ? "tensor" : "memref") << " form, got "
                             << op->getNumResults();
  auto inits = op->getOperands().take_back(numInits);
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (result.getType() != inits[i].getType())
      return op->emitOpError()
             << "result #" << i << " type " << result.getType()
             << " != " << inits[i].getType() << " of its destination";
  return success();
}

/// The GEMM block and chunk of a kernel agree with its shape: `block` P
/// where T and B are static, at most T, a chunk being a whole number of
/// blocks (or T), so that a replayed chunk issues the forward's GEMM
/// blocks; `rows` where T or B is dynamic, with any chunk (each call
/// rounds it to whole blocks: rnn.chunk_steps).
static LogicalResult verifySteps(KernelOpInterface kernel,
                                 std::optional<int64_t> chunk) {
  Operation *op = kernel;
  bool hasBlock = op->hasAttr("block"), hasRows = op->hasAttr("rows");
  if (hasBlock == hasRows)
    return op->emitOpError("needs exactly one of `block` and `rows`");
  if (kernel.hasDynamicShape()) {
    if (!hasRows)
      return op->emitOpError("has a dynamic sequence length or batch size: "
                             "its GEMM block is `rows`, not `block`");
    return success();
  }
  if (!hasBlock)
    return op->emitOpError("has a static shape: its GEMM block is `block`, "
                           "not `rows`");
  int64_t block = kernel.getBlockSteps();
  int64_t steps = kernel.getSeqLen();
  if (block > steps)
    return op->emitOpError()
           << "block " << block << " exceeds the sequence length " << steps
           << " of x";
  if (chunk && *chunk != steps && *chunk % block != 0)
    return op->emitOpError()
           << "chunk " << *chunk << " is not a multiple of block " << block
           << " (nor the sequence length " << steps << ")";
  return success();
}

bool mlir::rnn::isOverwrittenInput(Operation *op, unsigned operandNumber) {
  // The backward overwrites the values a replay would recompute.
  auto kernel = dyn_cast<KernelOpInterface>(op);
  if (!kernel || kernel.getPhase() != KernelPhase::Bwd)
    return false;
  return llvm::any_of(kernel.getCell().getReplayedRoles(), [&](StringRef role) {
    OpOperand *saved = kernel.getSavedOperand(role);
    return saved && saved->getOperandNumber() == operandNumber;
  });
}

template <typename OpTy> static MutableOperandRange kernelInits(OpTy op) {
  // The destinations are the last kNumInitGroups operand groups.
  constexpr unsigned firstInit =
      std::size(OpTy::kOperandGroups) - OpTy::kNumInitGroups;
  unsigned first = op.getODSOperandIndexAndLength(firstInit).first;
  return MutableOperandRange(op, first, op->getNumOperands() - first);
}

static void addKernelEffects(
    Operation *op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  auto dps = cast<DestinationStyleOpInterface>(op);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    bool init = dps.isDpsInit(&operand);
    if (!init)
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
    if (init || isOverwrittenInput(op, operand.getOperandNumber()))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

/// The dimensions of the operand or result of role `role` and rank `rank`
/// of an op of `cell` (kernelOperandRoles); `chunked` for checkpointed
/// kernels, whose checkpoint roles hold one entry per chunk. A reset state
/// (and its gradient) is per step or per batch column, as its rank says.
static SmallVector<Dim, 3> dimsOfRole(CellAttrInterface cell, StringRef role,
                                      int64_t rank, bool chunked) {
  if (role.ends_with(kResetStateSuffix) && rank == 2)
    return {Dim::B, Dim::H};
  if (role.ends_with(kResetStateSuffix))
    return {Dim::T, Dim::B, Dim::H};
  if (llvm::is_contained(cell.getSavedRoles(), role)) {
    bool perChunk =
        chunked && llvm::is_contained(cell.getCheckpointRoles(), role);
    // As wide as the gates or the state, or some other width.
    int64_t gates = cell.getNumGates();
    auto widthIs = [&](int64_t perHidden) {
      return cell.getRoleWidth(role, 1) == perHidden &&
             cell.getRoleWidth(role, 2) == 2 * perHidden;
    };
    Dim width = widthIs(gates) ? Dim::GH : widthIs(1) ? Dim::H : Dim::Width;
    return {perChunk ? Dim::Chunks : Dim::T, Dim::B, width};
  }
  role.consume_front(kGradPrefix);
  if (role == kRoleX)
    return {Dim::T, Dim::B, Dim::I};
  if (role == kRoleY)
    return {Dim::T, Dim::B, Dim::H};
  if (role == kRoleWeightIh)
    return {Dim::GH, Dim::I};
  if (role == kRoleWeightHh)
    return {Dim::GH, Dim::H};
  if (role == kRoleBiasIh || role == kRoleBiasHh)
    return {Dim::GH};
  // An initial or final state.
  return {Dim::B, Dim::H};
}

/// Checks `values` against `roles`, with the dimensions of their roles.
static LogicalResult verifyByRole(Operation *op, CellAttrInterface cell,
                                  ArrayRef<std::string> roles,
                                  ArrayRef<Value> values,
                                  std::optional<int64_t> chunk) {
  SpecList l;
  for (auto [role, value] : llvm::zip_equal(roles, values)) {
    SmallVector<Dim, 3> dims =
        dimsOfRole(cell, role, cast<ShapedType>(value.getType()).getRank(),
                   chunk.has_value());
    if (role == kRoleIsInit)
      l.addMask(role, value);
    else if (isStoredRole(cell, role))
      l.addStored(role, value, dims);
    else
      l.add(role, value, dims);
  }
  return verifyRecurrence(op, cell, l.specs, chunk);
}

/// The storage type of an op whose input is `x`: x's element type, or bf16
/// with x of f32.
static LogicalResult verifyStorage(Operation *op, Type storage, Value x) {
  Type element = cast<ShapedType>(x.getType()).getElementType();
  if (storage == element || (storage.isBF16() && element.isF32()))
    return success();
  return op->emitOpError() << "storage must be bf16 (with x of f32) or "
                           << element << " of x, got " << storage;
}

/// The reset states of an op of `cell` are none or one per state.
static LogicalResult verifyResetCount(Operation *op, CellAttrInterface cell,
                                      size_t count, StringRef group) {
  size_t numStates = cell.getStateNames().size();
  if (count == 0 || count == numStates)
    return success();
  return op->emitOpError() << "expected 0 or " << numStates << " " << group
                           << " for " << cell << " ("
                           << llvm::join(
                                  stateRoles(cell, "", kResetStateSuffix), ", ")
                           << "), got " << count;
}

//===----------------------------------------------------------------------===//
// Model level
//===----------------------------------------------------------------------===//

/// A model op has the operands of its cell's forward kernel but the
/// destinations, and the outputs as results: the forward's roles without
/// the saved values (its last group). Each model op's verify() (generated
/// with the op in RNNCells.td) calls it.
static LogicalResult verifyLayer(LayerOpInterface layer) {
  CellAttrInterface cell = layer.getCell();
  size_t numReset = layer.getResetStates().size();
  if (failed(verifyResetCount(layer, cell, numReset, "reset states")))
    return failure();
  auto groups = kernelOperandGroups(cell, KernelPhase::Fwd, numReset != 0);
  SmallVector<std::string> roles;
  for (auto &group : ArrayRef(groups).drop_back())
    llvm::append_range(roles, group);
  Operation *op = layer;
  SmallVector<Value> values(op->getOperands());
  llvm::append_range(values, op->getResults());
  if (failed(verifyByRole(op, cell, roles, values, std::nullopt)))
    return failure();
  // The pipelines compile a layer for one (T, B) or for every (T, B).
  auto x = cast<ShapedType>(layer.getInput().getType());
  if (x.isDynamicDim(0) != x.isDynamicDim(1))
    return op->emitOpError()
           << "x of type " << x << " has a dynamic "
           << (x.isDynamicDim(0) ? "sequence length and a static batch size"
                                 : "batch size and a static sequence length")
           << ": the two are dynamic together or static together";
  // The kernels save the gates, [T, B, G*H], in the element type at most:
  // their size in bytes must fit in 64 bits too.
  if (x.hasStaticShape()) {
    int64_t hidden = cast<ShapedType>(layer.getOutput().getType()).getDimSize(2);
    int64_t bytes = llvm::divideCeil(x.getElementTypeBitWidth(), 8);
    for (int64_t size : {x.getDimSize(0), x.getDimSize(1),
                         cell.getNumGates(), hidden})
      if (llvm::MulOverflow(bytes, size, bytes))
        return op->emitOpError()
               << "x of type " << x << " and a hidden size of " << hidden
               << " make gates [T, B, G*H] whose size in bytes overflows "
                  "64 bits";
  }
  return verifyStorage(op, layer.getStorageType(), layer.getInput());
}

OpFoldResult BlockStepsOp::fold(FoldAdaptor adaptor) {
  auto steps = dyn_cast_or_null<IntegerAttr>(adaptor.getSteps());
  auto batch = dyn_cast_or_null<IntegerAttr>(adaptor.getBatch());
  if (!steps || !batch || steps.getInt() < 1 || batch.getInt() < 1)
    return {};
  return IntegerAttr::get(
      IndexType::get(getContext()),
      gemmBlockSteps(steps.getInt(), batch.getInt(), getRows()));
}

OpFoldResult ChunkStepsOp::fold(FoldAdaptor adaptor) {
  auto steps = dyn_cast_or_null<IntegerAttr>(adaptor.getSteps());
  auto block = dyn_cast_or_null<IntegerAttr>(adaptor.getBlock());
  if (!steps || !block || steps.getInt() < 1 || block.getInt() < 1)
    return {};
  return IntegerAttr::get(
      IndexType::get(getContext()),
      chunkStepsFor(steps.getInt(), block.getInt(), getChunk()));
}

LogicalResult BeginBackwardOp::verify() {
  // rnn-split-training cuts the function's body at it.
  auto func = dyn_cast<FunctionOpInterface>((*this)->getParentOp());
  if (!func)
    return emitOpError("must stand directly in a function's body, which "
                       "it divides into forward and backward");
  for (Operation &op : (*this)->getBlock()->getOperations()) {
    if (&op == getOperation())
      break;
    if (isa<BeginBackwardOp>(op))
      return emitOpError("is a second phase boundary in @")
             << func.getName() << ": a function has one";
  }
  return success();
}

uint64_t DropoutOp::getThreshold() {
  return static_cast<uint64_t>(std::ldexp(getP().convertToDouble(), 32));
}

LogicalResult DropoutOp::verify() {
  auto x = cast<RankedTensorType>(getX().getType());
  if (x.getRank() != 3 || ShapedType::isDynamic(x.getDimSize(2)))
    return emitOpError() << "x must be a sequence [T, B, H] with a static "
                            "H, got "
                         << x;
  Type element = x.getElementType();
  if (!element.isF32() && !element.isF64())
    return emitOpError() << "x must have element type f32 or f64 (the types "
                            "the lowering computes in), got "
                         << element;
  auto rng = cast<RankedTensorType>(getRng().getType());
  if (rng.getShape() != ArrayRef<int64_t>{2} ||
      !rng.getElementType().isInteger(64))
    return emitOpError() << "rng must be tensor<2xi64> ([seed, offset]), got "
                         << rng;
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0)) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", p);
    return emitOpError() << "p must be in [0, 1), got " << text;
  }
  if (llvm::is_contained(x.getShape(), 0))
    return emitOpError() << "x must have sizes of at least 1, got " << x;
  // The Philox counter holds the layer in 32 bits.
  if (getLayer() > std::numeric_limits<uint32_t>::max())
    return emitOpError() << "layer must be below 2^32, got " << getLayer();
  // The Philox counter numbers groups of four elements in 32 bits (checked
  // per call where T or B is dynamic).
  if (x.hasStaticShape() && x.getNumElements() > (int64_t(1) << 34))
    return emitOpError() << "x has " << x.getNumElements()
                         << " elements; dropout numbers at most 2^34";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

template <typename OpTy> static LogicalResult verifyKernel(OpTy op) {
  auto kernel = cast<KernelOpInterface>(op.getOperation());
  CellAttrInterface cell = kernel.getCell();
  std::optional<int64_t> chunk = kernel.getChunkSteps();
  size_t numReset = op.getResetStates().size();
  if (failed(verifyResetCount(op, cell, numReset, "reset_states")))
    return failure();
  auto groups = kernelOperandGroups(cell, kernel.getPhase(), numReset != 0);
  for (auto [i, group] : llvm::enumerate(groups)) {
    unsigned size = op.getODSOperandIndexAndLength(i).second;
    if (size != group.size())
      return op.emitOpError()
             << "expected " << group.size() << " operands in "
             << OpTy::kOperandGroups[i] << " for " << cell << " ("
             << llvm::join(group, ", ") << "), got " << size;
  }
  auto dps = cast<DestinationStyleOpInterface>(op.getOperation());
  if (failed(verifyKernelForm(op, dps.getNumDpsInits())))
    return failure();
  SmallVector<Value> operands(op->getOperands());
  if (failed(verifyByRole(op, cell, kernel.getOperandRoles(), operands, chunk)))
    return failure();
  // The saved values that are not states are in the storage type.
  Type storage = kernel.getStorageType();
  if (failed(verifyStorage(op, storage, kernel.getInput())))
    return failure();
  for (StringRef role : cell.getSavedRoles()) {
    Value saved = kernel.get(role);
    if (!saved || !isStoredRole(cell, role))
      continue;
    Type type = cast<ShapedType>(saved.getType()).getElementType();
    if (type != storage)
      return op.emitOpError()
             << "element type " << type << " of " << role << " != storage "
             << storage << " (x's element type unless `storage` is given)";
  }
  // A reset state's gradient has its shape (per step or per column).
  for (StringRef state : cell.getStateNames()) {
    std::string role = (state + kResetStateSuffix).str();
    Value reset = kernel.get(role),
          grad = kernel.get((kGradPrefix + role).str());
    if (reset && grad && reset.getType() != grad.getType())
      return op.emitOpError()
             << kGradPrefix << role << " type " << grad.getType()
             << " != " << reset.getType() << " of " << role;
  }
  return verifySteps(kernel, chunk);
}

/// The operands of group `group` of a kernel, each after its role:
/// `gates %g, cells %c`. The roles must be those of the cell.
static ParseResult
parseRoleOperands(OpAsmParser &parser, CellAttrInterface cell,
                  IntegerAttr chunk, KernelKind kind, unsigned group,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands) {
  // The roles of the groups with roles do not depend on the reset states.
  auto groups = kernelOperandGroups(cell, kernelPhase(kind, chunk != nullptr),
                                    /*resetStates=*/false);
  ArrayRef<std::string> roles = groups[group];
  auto expected = [&](SMLoc loc) {
    return parser.emitError(loc)
           << "expected " << roles.size() << " operands ("
           << llvm::join(roles, ", ") << ") in "
           << kernelOperandGroupNames(kind)[group] << " for " << cell;
  };
  for (auto [i, role] : llvm::enumerate(roles)) {
    SMLoc loc = parser.getCurrentLocation();
    if (i && failed(parser.parseOptionalComma()))
      return expected(loc);
    loc = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseOptionalKeyword(&keyword))
      return expected(loc);
    if (keyword != role)
      return parser.emitError(loc) << "expected role '" << role << "' of "
                                   << cell << ", got '" << keyword << "'";
    if (parser.parseOperand(operands.emplace_back()))
      return failure();
  }
  SMLoc loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalComma()))
    return expected(loc);
  return success();
}

static void printRoleOperands(OpAsmPrinter &printer, Operation *,
                              CellAttrInterface cell, IntegerAttr chunk,
                              KernelKind kind, unsigned group,
                              OperandRange operands) {
  auto roles = kernelOperandGroups(cell, kernelPhase(kind, chunk != nullptr),
                                   /*resetStates=*/false);
  llvm::interleaveComma(
      llvm::zip(roles[group], operands), printer, [&](auto pair) {
        printer << std::get<0>(pair) << ' ' << std::get<1>(pair);
      });
}

//===----------------------------------------------------------------------===//
// Lanes
//===----------------------------------------------------------------------===//

/// The nearest fork or join before `op` in its block, or null.
static Operation *previousForkOrJoin(Operation *op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
    if (isa<ForkOp, JoinOp>(prev))
      return prev;
  return nullptr;
}

/// Checks that `op` is in the body of a function, between a fork and its
/// join.
static LogicalResult verifyInFork(Operation *op) {
  if (!isa_and_present<FunctionOpInterface>(op->getParentOp()))
    return op->emitOpError("must be in the body of a function");
  if (!isa_and_present<ForkOp>(previousForkOrJoin(op)))
    return op->emitOpError("must follow an 'rnn.fork' with no 'rnn.join' "
                           "between them");
  return success();
}

LogicalResult ForkOp::verify() {
  if (!isa_and_present<FunctionOpInterface>((*this)->getParentOp()))
    return emitOpError("must be in the body of a function");
  for (Operation *next = (*this)->getNextNode(); next;
       next = next->getNextNode()) {
    if (isa<JoinOp>(next))
      return success();
    if (isa<ForkOp>(next))
      return emitOpError("is followed by another 'rnn.fork' before its "
                         "'rnn.join'");
  }
  return emitOpError("has no 'rnn.join' after it in its block");
}

LogicalResult LaneSwitchOp::verify() { return verifyInFork(*this); }

LogicalResult JoinOp::verify() { return verifyInFork(*this); }

/// Checks that `op` (a signal or a wait) is inside a fork: it, or an op
/// around it, follows a fork with no join between them.
static LogicalResult verifyInsideFork(Operation *op) {
  for (Operation *at = op; at && !isa<FunctionOpInterface>(at);
       at = at->getParentOp())
    if (Operation *marker = previousForkOrJoin(at))
      return success(isa<ForkOp>(marker));
  return failure();
}

LogicalResult SignalOp::verify() {
  if (failed(verifyInsideFork(*this)))
    return emitOpError("must be between an 'rnn.fork' and its 'rnn.join'");
  return success();
}

LogicalResult WaitOp::verify() {
  if (failed(verifyInsideFork(*this)))
    return emitOpError("must be between an 'rnn.fork' and its 'rnn.join'");
  return success();
}

#define GET_OP_CLASSES
#include "rnn/Dialect/RNNOps.cpp.inc"
