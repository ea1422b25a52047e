//===- RNNOps.cpp - rnn dialect operations --------------------------------===//
//
// Verifiers and interfaces of the rnn operations. All ops share one
// table-driven shape check: the sequence length T, batch size B and input
// size I come from `x`, the hidden size H from `weight_hh`, and every other
// operand (and result) is checked against them, so that a message always
// names the operand in error and the operand the size was taken from.
//
//===----------------------------------------------------------------------===//

#include "rnn/Dialect/RNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rnn;

namespace {
/// A symbolic dimension of the recurrence.
enum class Dim { T, B, I, H, GH, Chunks };

/// What one operand or result must look like.
struct ValueSpec {
  StringRef name;
  Type type;
  SmallVector<Dim, 3> dims;
  bool isMask = false;
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
  }
  llvm_unreachable("unknown dim");
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
                            : "G*H";
  }
  return s + "]";
}

/// Checks every spec: static shape, rank, element type, and each dimension
/// against the one it must equal. `numGates` is 4 (LSTM) or 3 (GRU);
/// `chunk` is the chunk length K of checkpointed kernels.
static LogicalResult verifyRecurrence(Operation *op, unsigned numGates,
                                      ArrayRef<ValueSpec> specs,
                                      std::optional<int64_t> chunk = {}) {
  const ValueSpec *x = nullptr, *weightHh = nullptr;
  for (const ValueSpec &spec : specs) {
    auto shaped = dyn_cast<ShapedType>(spec.type);
    if (!shaped || !shaped.hasRank())
      return op->emitOpError() << spec.name << " must be a ranked tensor or "
                               << "memref, got " << spec.type;
    if (!shaped.hasStaticShape())
      return op->emitOpError()
             << spec.name << " must have a static shape, got " << spec.type;
    if (shaped.getRank() != static_cast<int64_t>(spec.dims.size()))
      return op->emitOpError()
             << spec.name << " must have rank " << spec.dims.size() << " "
             << dimsString(spec.dims) << ", got " << spec.type;
    if (spec.name == "x")
      x = &spec;
    if (spec.name == "weight_hh")
      weightHh = &spec;
  }
  assert(x && weightHh && "every rnn op has x and weight_hh");

  Type elementType = cast<ShapedType>(x->type).getElementType();
  // The lowering computes in f32 only: another type would verify and then
  // fail in the lowering with a message about its internals.
  if (!elementType.isF32())
    return op->emitOpError() << "x must have element type f32 (the only one "
                                "the lowering computes in), got "
                             << elementType;
  for (const ValueSpec &spec : specs) {
    Type type = cast<ShapedType>(spec.type).getElementType();
    if (spec.isMask) {
      if (!type.isInteger(1))
        return op->emitOpError() << spec.name
                                 << " must have element type i1, got " << type;
      continue;
    }
    if (type != elementType)
      return op->emitOpError() << "element type " << type << " of "
                               << spec.name << " != " << elementType
                               << " of x";
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
    if (size < 1)
      return op->emitOpError() << what << " must be positive, got " << size;
  // Every byte count the passes and the runtime derive from these shapes
  // must fit in 64 bits (8-byte elements at most).
  int64_t gateRows = 0;
  if (llvm::MulOverflow(static_cast<int64_t>(numGates), hidden, gateRows))
    return op->emitOpError() << "hidden size " << hidden
                             << " of weight_hh is too large";
  for (const ValueSpec &spec : specs) {
    int64_t bytes = 8;
    for (int64_t size : cast<ShapedType>(spec.type).getShape())
      if (llvm::MulOverflow(bytes, size, bytes))
        return op->emitOpError()
               << spec.name << " of type " << spec.type
               << " is too large: its size in bytes overflows 64 bits";
  }
  if (chunk && *chunk > xShape[0])
    return op->emitOpError() << "chunk " << *chunk
                             << " exceeds the sequence length " << xShape[0]
                             << " of x";
  auto expected = [&](Dim dim) -> std::pair<int64_t, StringRef> {
    switch (dim) {
    case Dim::T:
      return {xShape[0], "x"};
    case Dim::B:
      return {xShape[1], "x"};
    case Dim::I:
      return {xShape[2], "x"};
    case Dim::H:
      return {hidden, "weight_hh"};
    case Dim::GH:
      return {numGates * hidden, "weight_hh"};
    case Dim::Chunks:
      return {llvm::divideCeil(xShape[0], *chunk), "x"};
    }
    llvm_unreachable("unknown dim");
  };

  for (const ValueSpec &spec : specs) {
    ArrayRef<int64_t> shape = cast<ShapedType>(spec.type).getShape();
    for (auto [axis, dim] : llvm::enumerate(spec.dims)) {
      auto [want, source] = expected(dim);
      if (shape[axis] == want)
        continue;
      if (dim == Dim::Chunks)
        return op->emitOpError()
               << "chunk count " << shape[axis] << " of " << spec.name
               << " != " << want << " (sequence length " << xShape[0]
               << " of x in chunks of " << *chunk << ")";
      if (dim == Dim::GH)
        return op->emitOpError()
               << "gate rows " << shape[axis] << " of " << spec.name
               << " != " << want << " (" << numGates
               << " gates x hidden size " << hidden << " of weight_hh)";
      return op->emitOpError() << dimName(dim) << " " << shape[axis] << " of "
                               << spec.name << " != " << want << " of "
                               << source;
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
                             << (tensors ? "tensor" : "memref")
                             << " form, got " << op->getNumResults();
  auto inits = op->getOperands().take_back(numInits);
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (result.getType() != inits[i].getType())
      return op->emitOpError() << "result #" << i << " type "
                               << result.getType() << " != "
                               << inits[i].getType() << " of its destination";
  return success();
}

/// The block and chunk of a kernel agree with its sequence length: the
/// block is at most T, and a chunk is a whole number of blocks (or T), so
/// that a replayed chunk issues the forward's GEMM blocks.
static LogicalResult verifySteps(Operation *op, int64_t block,
                                 std::optional<int64_t> chunk) {
  int64_t steps = cast<ShapedType>(op->getOperand(0).getType()).getDimSize(0);
  if (block > steps)
    return op->emitOpError() << "block " << block
                             << " exceeds the sequence length " << steps
                             << " of x";
  if (chunk && *chunk != steps && *chunk % block != 0)
    return op->emitOpError() << "chunk " << *chunk
                             << " is not a multiple of block " << block
                             << " (nor the sequence length " << steps << ")";
  return success();
}

bool mlir::rnn::isOverwrittenInput(Operation *op, unsigned operandNumber) {
  // The backward overwrites the values a replay would recompute.
  auto kernel = dyn_cast<KernelOpInterface>(op);
  if (!kernel || kernel.getPhase() != "bwd")
    return false;
  return llvm::any_of(kernel.getCell().getReplayedRoles(), [&](StringRef role) {
    OpOperand *saved = kernel.getSavedOperand(role);
    return saved && saved->getOperandNumber() == operandNumber;
  });
}

static void addKernelEffects(
    Operation *op, unsigned numInits,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  unsigned firstInit = op->getNumOperands() - numInits;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    unsigned number = operand.getOperandNumber();
    if (number < firstInit)
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
    if (number >= firstInit || isOverwrittenInput(op, number))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

/// The operands every op of a cell starts with: x, is_init, the initial
/// state(s) and the weights (biases only where the op takes them).
template <typename OpTy>
static SpecList cellInputs(OpTy op) {
  SpecList l;
  l.add("x", op.getX(), {Dim::T, Dim::B, Dim::I})
      .addMask("is_init", op.getIsInit())
      .add("h0", op.getH0(), {Dim::B, Dim::H});
  if constexpr (llvm::is_one_of<OpTy, LSTMOp, LSTMFwdOp, LSTMBwdOp,
                                LSTMChunkedBwdOp, LSTMReplayOp>::value)
    l.add("c0", op.getC0(), {Dim::B, Dim::H});
  l.add("weight_ih", op.getWeightIh(), {Dim::GH, Dim::I})
      .add("weight_hh", op.getWeightHh(), {Dim::GH, Dim::H});
  if constexpr (!llvm::is_one_of<OpTy, LSTMBwdOp, GRUBwdOp>::value)
    l.add("bias_ih", op.getBiasIh(), {Dim::GH})
        .add("bias_hh", op.getBiasHh(), {Dim::GH});
  return l;
}

/// The cotangents and gradients of a backward kernel, after its saved
/// values.
template <typename OpTy>
static void addGradients(SpecList &l, OpTy op) {
  constexpr bool lstm =
      llvm::is_one_of<OpTy, LSTMBwdOp, LSTMChunkedBwdOp>::value;
  l.add("grad_y", op.getGradY(), {Dim::T, Dim::B, Dim::H})
      .add("grad_h_n", op.getGradHN(), {Dim::B, Dim::H});
  if constexpr (lstm)
    l.add("grad_c_n", op.getGradCN(), {Dim::B, Dim::H});
  l.add("grad_x", op.getGradX(), {Dim::T, Dim::B, Dim::I})
      .add("grad_h0", op.getGradH0(), {Dim::B, Dim::H});
  if constexpr (lstm)
    l.add("grad_c0", op.getGradC0(), {Dim::B, Dim::H});
  l.add("grad_weight_ih", op.getGradWeightIh(), {Dim::GH, Dim::I})
      .add("grad_weight_hh", op.getGradWeightHh(), {Dim::GH, Dim::H})
      .add("grad_bias_ih", op.getGradBiasIh(), {Dim::GH})
      .add("grad_bias_hh", op.getGradBiasHh(), {Dim::GH});
}

//===----------------------------------------------------------------------===//
// Model level
//===----------------------------------------------------------------------===//

LogicalResult LSTMOp::verify() {
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H})
      .add("h_n", getHN(), {Dim::B, Dim::H})
      .add("c_n", getCN(), {Dim::B, Dim::H});
  return verifyRecurrence(*this, getCell().getNumGates(), l.specs);
}

LogicalResult GRUOp::verify() {
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H})
      .add("h_n", getHN(), {Dim::B, Dim::H});
  return verifyRecurrence(*this, getCell().getNumGates(), l.specs);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

LogicalResult LSTMFwdOp::verify() {
  if (failed(verifyKernelForm(*this, kNumInits)))
    return failure();
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H})
      .add("h_n", getHN(), {Dim::B, Dim::H})
      .add("c_n", getCN(), {Dim::B, Dim::H})
      .add("gates", getGates(), {Dim::T, Dim::B, Dim::GH})
      .add("cells", getCells(),
           {getChunk() ? Dim::Chunks : Dim::T, Dim::B, Dim::H});
  if (failed(verifyRecurrence(*this, 4, l.specs, getChunk())))
    return failure();
  return verifySteps(*this, getBlock(), getChunk());
}

LogicalResult LSTMBwdOp::verify() {
  if (failed(verifyKernelForm(*this, kNumInits)))
    return failure();
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H})
      .add("gates", getGates(), {Dim::T, Dim::B, Dim::GH})
      .add("cells", getCells(), {Dim::T, Dim::B, Dim::H});
  addGradients(l, *this);
  if (failed(verifyRecurrence(*this, 4, l.specs)))
    return failure();
  return verifySteps(*this, getBlock(), std::nullopt);
}

LogicalResult GRUFwdOp::verify() {
  if (failed(verifyKernelForm(*this, kNumInits)))
    return failure();
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H})
      .add("h_n", getHN(), {Dim::B, Dim::H})
      .add("gates", getGates(), {Dim::T, Dim::B, Dim::GH})
      .add("hn_proj", getHnProj(), {Dim::T, Dim::B, Dim::H});
  if (failed(verifyRecurrence(*this, 3, l.specs)))
    return failure();
  return verifySteps(*this, getBlock(), std::nullopt);
}

LogicalResult GRUBwdOp::verify() {
  if (failed(verifyKernelForm(*this, kNumInits)))
    return failure();
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H})
      .add("gates", getGates(), {Dim::T, Dim::B, Dim::GH})
      .add("hn_proj", getHnProj(), {Dim::T, Dim::B, Dim::H});
  addGradients(l, *this);
  if (failed(verifyRecurrence(*this, 3, l.specs)))
    return failure();
  return verifySteps(*this, getBlock(), std::nullopt);
}

LogicalResult LSTMChunkedBwdOp::verify() {
  if (failed(verifyKernelForm(*this, kNumInits)))
    return failure();
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H})
      .add("cells", getCells(), {Dim::Chunks, Dim::B, Dim::H});
  addGradients(l, *this);
  if (failed(verifyRecurrence(*this, 4, l.specs, getChunk())))
    return failure();
  return verifySteps(*this, getBlock(), getChunk());
}

LogicalResult GRUChunkedBwdOp::verify() {
  if (failed(verifyKernelForm(*this, kNumInits)))
    return failure();
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H});
  addGradients(l, *this);
  if (failed(verifyRecurrence(*this, 3, l.specs, getChunk())))
    return failure();
  return verifySteps(*this, getBlock(), getChunk());
}

LogicalResult LSTMReplayOp::verify() {
  if (failed(verifyKernelForm(*this, kNumInits)))
    return failure();
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H})
      .add("cells", getCells(), {Dim::T, Dim::B, Dim::H})
      .add("gates", getGates(), {Dim::T, Dim::B, Dim::GH});
  if (failed(verifyRecurrence(*this, 4, l.specs)))
    return failure();
  return verifySteps(*this, getBlock(), std::nullopt);
}

LogicalResult GRUReplayOp::verify() {
  if (failed(verifyKernelForm(*this, kNumInits)))
    return failure();
  SpecList l = cellInputs(*this);
  l.add("y", getY(), {Dim::T, Dim::B, Dim::H})
      .add("gates", getGates(), {Dim::T, Dim::B, Dim::GH})
      .add("hn_proj", getHnProj(), {Dim::T, Dim::B, Dim::H});
  if (failed(verifyRecurrence(*this, 3, l.specs)))
    return failure();
  return verifySteps(*this, getBlock(), std::nullopt);
}

#define GET_OP_CLASSES
#include "rnn/Dialect/RNNOps.cpp.inc"
