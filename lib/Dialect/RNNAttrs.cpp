//===- RNNAttrs.cpp - rnn cell attributes ---------------------------------===//
//
// The facts of the cells #rnn.lstm and #rnn.gru (CellAttrInterface), and
// the layer interface of the model ops.
//
//===----------------------------------------------------------------------===//

#include "rnn/Dialect/RNNAttrs.h"

#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Dialect/RNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::rnn;

#include "rnn/Dialect/RNNAttrInterfaces.cpp.inc"
#include "rnn/Dialect/RNNOpInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "rnn/Dialect/RNNAttrs.cpp.inc"

void RNNDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "rnn/Dialect/RNNAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #rnn.lstm
//===----------------------------------------------------------------------===//

StringRef LSTMCellAttr::getCellName() const { return "lstm"; }
int64_t LSTMCellAttr::getNumGates() const { return 4; }

ArrayRef<StringRef> LSTMCellAttr::getStateNames() const {
  static const StringRef names[] = {"h", "c"};
  return names;
}

ArrayRef<StringRef> LSTMCellAttr::getSavedRoles() const {
  static const StringRef roles[] = {"gates", "cells"};
  return roles;
}

ArrayRef<StringRef> LSTMCellAttr::getReplayedRoles() const {
  static const StringRef roles[] = {"gates"};
  return roles;
}

ArrayRef<StringRef> LSTMCellAttr::getCheckpointRoles() const {
  static const StringRef roles[] = {"cells"};
  return roles;
}

int64_t LSTMCellAttr::getRoleWidth(StringRef role, int64_t hidden) const {
  if (role == "gates")
    return getNumGates() * hidden;
  return role == "cells" ? hidden : 0;
}

//===----------------------------------------------------------------------===//
// #rnn.gru
//===----------------------------------------------------------------------===//

StringRef GRUCellAttr::getCellName() const { return "gru"; }
int64_t GRUCellAttr::getNumGates() const { return 3; }

ArrayRef<StringRef> GRUCellAttr::getStateNames() const {
  static const StringRef names[] = {"h"};
  return names;
}

ArrayRef<StringRef> GRUCellAttr::getSavedRoles() const {
  static const StringRef roles[] = {"gates", "hn_proj"};
  return roles;
}

ArrayRef<StringRef> GRUCellAttr::getReplayedRoles() const {
  return getSavedRoles();
}

ArrayRef<StringRef> GRUCellAttr::getCheckpointRoles() const { return {}; }

int64_t GRUCellAttr::getRoleWidth(StringRef role, int64_t hidden) const {
  if (role == "gates")
    return getNumGates() * hidden;
  return role == "hn_proj" ? hidden : 0;
}

//===----------------------------------------------------------------------===//
// Model ops as layers
//===----------------------------------------------------------------------===//

CellAttrInterface LSTMOp::getCell() { return LSTMCellAttr::get(getContext()); }
SmallVector<Value> LSTMOp::getInitialStates() { return {getH0(), getC0()}; }
SmallVector<Value> LSTMOp::getFinalStates() { return {getHN(), getCN()}; }

CellAttrInterface GRUOp::getCell() { return GRUCellAttr::get(getContext()); }
SmallVector<Value> GRUOp::getInitialStates() { return {getH0()}; }
SmallVector<Value> GRUOp::getFinalStates() { return {getHN()}; }

//===----------------------------------------------------------------------===//
// Kernels' saved values by role
//===----------------------------------------------------------------------===//

/// The operand of `role` among `operands`, or null.
static OpOperand *
byRole(StringRef role,
       std::initializer_list<std::pair<StringRef, OpOperand *>> operands) {
  for (auto [name, operand] : operands)
    if (name == role)
      return operand;
  return nullptr;
}

OpOperand *LSTMFwdOp::getSavedOperand(StringRef role) {
  return byRole(role,
                {{"gates", &getGatesMutable()}, {"cells", &getCellsMutable()}});
}

OpOperand *LSTMBwdOp::getSavedOperand(StringRef role) {
  return byRole(role,
                {{"gates", &getGatesMutable()}, {"cells", &getCellsMutable()}});
}

/// Its `cells` are the checkpoints at chunk entries.
OpOperand *LSTMChunkedBwdOp::getSavedOperand(StringRef role) {
  return byRole(role, {{"cells", &getCellsMutable()}});
}

/// It reads the saved `cells` as states and writes the gates.
OpOperand *LSTMReplayOp::getSavedOperand(StringRef role) {
  return byRole(role,
                {{"gates", &getGatesMutable()}, {"cells", &getCellsMutable()}});
}

OpOperand *GRUFwdOp::getSavedOperand(StringRef role) {
  return byRole(
      role, {{"gates", &getGatesMutable()}, {"hn_proj", &getHnProjMutable()}});
}

OpOperand *GRUBwdOp::getSavedOperand(StringRef role) {
  return byRole(
      role, {{"gates", &getGatesMutable()}, {"hn_proj", &getHnProjMutable()}});
}

/// The GRU's chunked backward recomputes everything from `y`.
OpOperand *GRUChunkedBwdOp::getSavedOperand(StringRef) { return nullptr; }

OpOperand *GRUReplayOp::getSavedOperand(StringRef role) {
  return byRole(
      role, {{"gates", &getGatesMutable()}, {"hn_proj", &getHnProjMutable()}});
}

//===----------------------------------------------------------------------===//
// Kernels' named operands
//===----------------------------------------------------------------------===//

namespace {
/// Kernels of a cell with a second state (c).
template <typename OpTy>
constexpr bool kHasCellState =
    llvm::is_one_of<OpTy, LSTMFwdOp, LSTMBwdOp, LSTMChunkedBwdOp,
                    LSTMReplayOp>::value;
/// Kernels that read the biases.
template <typename OpTy>
constexpr bool kHasBiases = !llvm::is_one_of<OpTy, LSTMBwdOp, GRUBwdOp>::value;
/// Kernels that compute gradients.
template <typename OpTy>
constexpr bool kIsBackward =
    llvm::is_one_of<OpTy, LSTMBwdOp, GRUBwdOp, LSTMChunkedBwdOp,
                    GRUChunkedBwdOp>::value;
} // namespace

template <typename OpTy> static SmallVector<Value> initialStatesOf(OpTy op) {
  if constexpr (kHasCellState<OpTy>)
    return {op.getH0(), op.getC0()};
  else
    return {op.getH0()};
}

template <typename OpTy> static SmallVector<Value> biasesOf(OpTy op) {
  if constexpr (kHasBiases<OpTy>)
    return {op.getBiasIh(), op.getBiasHh()};
  else
    return {};
}

template <typename OpTy> static SmallVector<Value> cotangentsOf(OpTy op) {
  if constexpr (kIsBackward<OpTy> && kHasCellState<OpTy>)
    return {op.getGradY(), op.getGradHN(), op.getGradCN()};
  else if constexpr (kIsBackward<OpTy>)
    return {op.getGradY(), op.getGradHN()};
  else
    return {};
}

#define RNN_KERNEL_NAMED_OPERANDS(OpTy)                                        \
  SmallVector<Value> OpTy::getInitialStates() {                                \
    return initialStatesOf(*this);                                             \
  }                                                                            \
  SmallVector<Value> OpTy::getBiases() { return biasesOf(*this); }             \
  SmallVector<Value> OpTy::getCotangents() { return cotangentsOf(*this); }
RNN_KERNEL_NAMED_OPERANDS(LSTMFwdOp)
RNN_KERNEL_NAMED_OPERANDS(LSTMBwdOp)
RNN_KERNEL_NAMED_OPERANDS(LSTMChunkedBwdOp)
RNN_KERNEL_NAMED_OPERANDS(LSTMReplayOp)
RNN_KERNEL_NAMED_OPERANDS(GRUFwdOp)
RNN_KERNEL_NAMED_OPERANDS(GRUBwdOp)
RNN_KERNEL_NAMED_OPERANDS(GRUChunkedBwdOp)
RNN_KERNEL_NAMED_OPERANDS(GRUReplayOp)
#undef RNN_KERNEL_NAMED_OPERANDS

SmallVector<OpOperand *> LSTMFwdOp::getOutputOperands() {
  return {&getYMutable(), &getHNMutable(), &getCNMutable()};
}
SmallVector<OpOperand *> GRUFwdOp::getOutputOperands() {
  return {&getYMutable(), &getHNMutable()};
}
#define RNN_KERNEL_NO_OUTPUTS(OpTy)                                            \
  SmallVector<OpOperand *> OpTy::getOutputOperands() { return {}; }
RNN_KERNEL_NO_OUTPUTS(LSTMBwdOp)
RNN_KERNEL_NO_OUTPUTS(LSTMChunkedBwdOp)
RNN_KERNEL_NO_OUTPUTS(LSTMReplayOp)
RNN_KERNEL_NO_OUTPUTS(GRUBwdOp)
RNN_KERNEL_NO_OUTPUTS(GRUChunkedBwdOp)
RNN_KERNEL_NO_OUTPUTS(GRUReplayOp)
#undef RNN_KERNEL_NO_OUTPUTS

//===----------------------------------------------------------------------===//
// Creating a cell's kernels
//===----------------------------------------------------------------------===//

KernelOpInterface mlir::rnn::createKernel(OpBuilder &builder, Location loc,
                                          CellAttrInterface cell,
                                          StringRef phase, TypeRange types,
                                          ValueRange operands, int64_t block,
                                          std::optional<int64_t> chunk) {
  std::string name = ("rnn." + cell.getCellName() + "_" + phase).str();
  OperationState state(loc, name);
  assert(state.name.isRegistered() && "every cell has a kernel per phase");
  state.addOperands(operands);
  state.addTypes(types);
  state.addAttribute("block", builder.getI64IntegerAttr(block));
  if (chunk)
    state.addAttribute("chunk", builder.getI64IntegerAttr(*chunk));
  return cast<KernelOpInterface>(builder.create(state));
}
