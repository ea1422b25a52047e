//===- RNNAttrs.cpp - rnn cell attributes ---------------------------------===//
//
// The facts of the cells #rnn.lstm, #rnn.gru and #rnn.mgu
// (CellAttrInterface), the
// layer interface of the model ops, and the kernels' operands by role: the
// operand groups a cell gives each kernel phase (kernelOperandGroups), from
// which the kernel interface finds every operand and createKernel builds
// the generic kernel ops.
//
//===----------------------------------------------------------------------===//

#include "rnn/Dialect/RNNAttrs.h"

#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Dialect/RNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
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

/// The cells Attrs... (every attribute of the dialect is a cell).
template <typename... Attrs>
static SmallVector<CellAttrInterface> getCellsOf(MLIRContext *context) {
  return {Attrs::get(context)...};
}

SmallVector<CellAttrInterface> mlir::rnn::getCells(MLIRContext *context) {
  return getCellsOf<
#define GET_ATTRDEF_LIST
#include "rnn/Dialect/RNNAttrs.cpp.inc"
      >(context);
}

CellAttrInterface mlir::rnn::lookupCell(MLIRContext *context, StringRef name) {
  for (CellAttrInterface cell : getCells(context))
    if (cell.getCellName() == name)
      return cell;
  return nullptr;
}

std::string mlir::rnn::listCells(MLIRContext *context, StringRef prefix,
                                 StringRef last) {
  SmallVector<CellAttrInterface> cells = getCells(context);
  std::string names;
  for (auto [i, cell] : llvm::enumerate(cells)) {
    if (i > 0)
      names += i + 1 == cells.size() ? last.str() : ", ";
    names += (prefix + cell.getCellName()).str();
  }
  return names;
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
// #rnn.gru and #rnn.mgu: state h; saved gates and hn_proj, both replayed
//===----------------------------------------------------------------------===//

static ArrayRef<StringRef> hiddenStateNames() {
  static const StringRef names[] = {"h"};
  return names;
}

static ArrayRef<StringRef> gatesAndHiddenProjection() {
  static const StringRef roles[] = {"gates", "hn_proj"};
  return roles;
}

static int64_t gatesAndHiddenProjectionWidth(StringRef role, int64_t gates,
                                             int64_t hidden) {
  if (role == "gates")
    return gates * hidden;
  return role == "hn_proj" ? hidden : 0;
}

StringRef GRUCellAttr::getCellName() const { return "gru"; }
int64_t GRUCellAttr::getNumGates() const { return 3; }
ArrayRef<StringRef> GRUCellAttr::getStateNames() const {
  return hiddenStateNames();
}
ArrayRef<StringRef> GRUCellAttr::getSavedRoles() const {
  return gatesAndHiddenProjection();
}
ArrayRef<StringRef> GRUCellAttr::getReplayedRoles() const {
  return getSavedRoles();
}
ArrayRef<StringRef> GRUCellAttr::getCheckpointRoles() const { return {}; }
int64_t GRUCellAttr::getRoleWidth(StringRef role, int64_t hidden) const {
  return gatesAndHiddenProjectionWidth(role, getNumGates(), hidden);
}

StringRef MGUCellAttr::getCellName() const { return "mgu"; }
int64_t MGUCellAttr::getNumGates() const { return 2; }
ArrayRef<StringRef> MGUCellAttr::getStateNames() const {
  return hiddenStateNames();
}
ArrayRef<StringRef> MGUCellAttr::getSavedRoles() const {
  return gatesAndHiddenProjection();
}
ArrayRef<StringRef> MGUCellAttr::getReplayedRoles() const {
  return getSavedRoles();
}
ArrayRef<StringRef> MGUCellAttr::getCheckpointRoles() const { return {}; }
int64_t MGUCellAttr::getRoleWidth(StringRef role, int64_t hidden) const {
  return gatesAndHiddenProjectionWidth(role, getNumGates(), hidden);
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

CellAttrInterface MGUOp::getCell() { return MGUCellAttr::get(getContext()); }
SmallVector<Value> MGUOp::getInitialStates() { return {getH0()}; }
SmallVector<Value> MGUOp::getFinalStates() { return {getHN()}; }

//===----------------------------------------------------------------------===//
// Kernels' operands by role
//===----------------------------------------------------------------------===//

StringRef mlir::rnn::kernelPhase(KernelKind kind, bool chunked) {
  switch (kind) {
  case KernelKind::Fwd:
    return "fwd";
  case KernelKind::Bwd:
    return chunked ? "chunked_bwd" : "bwd";
  case KernelKind::Replay:
    return "replay";
  }
  llvm_unreachable("unknown kernel kind");
}

/// `prefix` + each state name + `suffix`.
static SmallVector<std::string> stateRoles(CellAttrInterface cell,
                                           StringRef prefix, StringRef suffix) {
  SmallVector<std::string> roles;
  for (StringRef state : cell.getStateNames())
    roles.push_back((prefix + state + suffix).str());
  return roles;
}

static SmallVector<std::string> roleStrings(ArrayRef<StringRef> roles) {
  return llvm::map_to_vector(roles, [](StringRef r) { return r.str(); });
}

SmallVector<SmallVector<std::string>>
mlir::rnn::kernelOperandGroups(CellAttrInterface cell, StringRef phase,
                               bool resetStates) {
  SmallVector<std::string> weights = {"weight_ih", "weight_hh"};
  if (phase != "bwd")
    weights.append({"bias_ih", "bias_hh"});
  SmallVector<std::string> reset;
  if (resetStates)
    reset = stateRoles(cell, "", "_reset");
  SmallVector<SmallVector<std::string>> groups = {
      {"x"}, {"is_init"}, stateRoles(cell, "", "0"), reset, weights};
  SmallVector<std::string> y = {"y"};
  if (phase == "fwd") {
    llvm::append_range(y, stateRoles(cell, "", "_n"));
    groups.append({y, roleStrings(cell.getSavedRoles())});
    return groups;
  }
  if (phase == "replay") {
    ArrayRef<StringRef> replayed = cell.getReplayedRoles();
    for (StringRef role : cell.getSavedRoles())
      if (!llvm::is_contained(replayed, role))
        y.push_back(role.str());
    groups.append({y, roleStrings(replayed)});
    return groups;
  }
  llvm::append_range(y,
                     roleStrings(phase == "bwd" ? cell.getSavedRoles()
                                                : cell.getCheckpointRoles()));
  SmallVector<std::string> cotangents = {"grad_y"};
  llvm::append_range(cotangents, stateRoles(cell, "grad_", "_n"));
  SmallVector<std::string> gradients = {"grad_x"};
  llvm::append_range(gradients, stateRoles(cell, "grad_", "0"));
  if (resetStates)
    llvm::append_range(gradients, stateRoles(cell, "grad_", "_reset"));
  gradients.append(
      {"grad_weight_ih", "grad_weight_hh", "grad_bias_ih", "grad_bias_hh"});
  groups.append({y, cotangents, gradients});
  return groups;
}

SmallVector<std::string> mlir::rnn::kernelOperandRoles(CellAttrInterface cell,
                                                       StringRef phase,
                                                       bool resetStates) {
  SmallVector<std::string> roles;
  for (SmallVector<std::string> &group :
       kernelOperandGroups(cell, phase, resetStates))
    llvm::append_range(roles, group);
  return roles;
}

bool mlir::rnn::isStoredRole(CellAttrInterface cell, StringRef role) {
  return llvm::is_contained(cell.getSavedRoles(), role) &&
         !llvm::is_contained(cell.getCheckpointRoles(), role);
}

OpOperand *KernelOpInterface::getOperandOf(StringRef role) {
  for (auto [operand, name] :
       llvm::zip(getOperation()->getOpOperands(), getOperandRoles()))
    if (name == role)
      return &operand;
  return nullptr;
}

/// The values of the roles `prefix` + state + `suffix` that the kernel has.
static SmallVector<Value> stateValues(KernelOpInterface kernel,
                                      StringRef prefix, StringRef suffix) {
  SmallVector<Value> values;
  for (const std::string &role : stateRoles(kernel.getCell(), prefix, suffix))
    if (Value value = kernel.get(role))
      values.push_back(value);
  return values;
}

SmallVector<Value> KernelOpInterface::getInitialStates() {
  return stateValues(*this, "", "0");
}

SmallVector<Value> KernelOpInterface::getBiases() {
  Value ih = get("bias_ih"), hh = get("bias_hh");
  if (!ih || !hh)
    return {};
  return {ih, hh};
}

SmallVector<OpOperand *> KernelOpInterface::getOutputOperands() {
  if (getPhase() != "fwd")
    return {};
  SmallVector<OpOperand *> outputs = {getOperandOf("y")};
  for (const std::string &role : stateRoles(getCell(), "", "_n"))
    outputs.push_back(getOperandOf(role));
  return outputs;
}

SmallVector<Value> KernelOpInterface::getCotangents() {
  if (!isBackward())
    return {};
  SmallVector<Value> cotangents = {get("grad_y")};
  llvm::append_range(cotangents, stateValues(*this, "grad_", "_n"));
  return cotangents;
}

SmallVector<std::string> KernelOpInterface::getDestinationRoles() {
  auto dps = cast<DestinationStyleOpInterface>(getOperation());
  SmallVector<std::string> roles = getOperandRoles();
  return SmallVector<std::string>(
      ArrayRef(roles).take_back(dps.getNumDpsInits()));
}

//===----------------------------------------------------------------------===//
// Creating a cell's kernels
//===----------------------------------------------------------------------===//

KernelOpInterface mlir::rnn::createKernel(
    OpBuilder &builder, Location loc, CellAttrInterface cell, StringRef phase,
    bool resetStates, TypeRange types, ValueRange operands, int64_t block,
    std::optional<int64_t> chunk, Type storage) {
  StringRef name = phase == "fwd"      ? CellFwdOp::getOperationName()
                   : phase == "replay" ? CellReplayOp::getOperationName()
                                       : CellBwdOp::getOperationName();
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addTypes(types);
  SmallVector<int32_t> sizes;
  for (SmallVector<std::string> &group :
       kernelOperandGroups(cell, phase, resetStates))
    sizes.push_back(group.size());
  assert(llvm::sum_of(sizes) == static_cast<int32_t>(operands.size()) &&
         "one operand per role");
  state.addAttribute("operandSegmentSizes",
                     builder.getDenseI32ArrayAttr(sizes));
  state.addAttribute("cell", cell);
  state.addAttribute("block", builder.getI64IntegerAttr(block));
  if (chunk)
    state.addAttribute("chunk", builder.getI64IntegerAttr(*chunk));
  if (storage &&
      storage != cast<ShapedType>(operands.front().getType()).getElementType())
    state.addAttribute("storage", TypeAttr::get(storage));
  return cast<KernelOpInterface>(builder.create(state));
}
