//===- RNNAttrs.cpp - rnn cell attributes ---------------------------------===//
//
// The dialect's cells (their facts and model ops are generated from
// RNNCells.td) and the kernels' operands by role: the operand groups a cell
// gives each kernel phase (kernelOperandGroups), from which the kernel
// interface finds every operand and createKernel builds the generic kernel
// ops.
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
#include "rnn/Dialect/RNNEnums.cpp.inc"

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
// Kernels' operands by role
//===----------------------------------------------------------------------===//

KernelPhase mlir::rnn::kernelPhase(KernelKind kind, bool chunked) {
  switch (kind) {
  case KernelKind::Fwd:
    return KernelPhase::Fwd;
  case KernelKind::Bwd:
    return chunked ? KernelPhase::ChunkedBwd : KernelPhase::Bwd;
  case KernelKind::Replay:
    return KernelPhase::Replay;
  }
  llvm_unreachable("unknown kernel kind");
}

SmallVector<std::string> mlir::rnn::stateRoles(CellAttrInterface cell,
                                               StringRef prefix,
                                               StringRef suffix) {
  SmallVector<std::string> roles;
  for (StringRef state : cell.getStateNames())
    roles.push_back((prefix + state + suffix).str());
  return roles;
}

static SmallVector<std::string> roleStrings(ArrayRef<StringRef> roles) {
  return llvm::map_to_vector(roles, [](StringRef r) { return r.str(); });
}

ArrayRef<StringLiteral> mlir::rnn::kernelOperandGroupNames(KernelKind kind) {
  switch (kind) {
  case KernelKind::Fwd:
    return CellFwdOp::kOperandGroups;
  case KernelKind::Bwd:
    return CellBwdOp::kOperandGroups;
  case KernelKind::Replay:
    return CellReplayOp::kOperandGroups;
  }
  llvm_unreachable("unknown kernel kind");
}

static KernelKind kernelKind(KernelPhase phase) {
  switch (phase) {
  case KernelPhase::Fwd:
    return KernelKind::Fwd;
  case KernelPhase::Bwd:
  case KernelPhase::ChunkedBwd:
    return KernelKind::Bwd;
  case KernelPhase::Replay:
    return KernelKind::Replay;
  }
  llvm_unreachable("unknown kernel phase");
}

/// The roles of operand group `group` (its keyword) of a kernel of `cell`
/// in `phase`.
static SmallVector<std::string> groupRoles(CellAttrInterface cell,
                                           KernelPhase phase, bool resetStates,
                                           StringRef group) {
  if (group == "x")
    return {kRoleX.str()};
  if (group == "is_init")
    return {kRoleIsInit.str()};
  if (group == "states")
    return stateRoles(cell, "", kInitialStateSuffix);
  if (group == "reset_states")
    return resetStates ? stateRoles(cell, "", kResetStateSuffix)
                       : SmallVector<std::string>();
  if (group == "weights") {
    SmallVector<std::string> weights = {kRoleWeightIh.str(),
                                        kRoleWeightHh.str()};
    if (phase != KernelPhase::Bwd)
      weights.append({kRoleBiasIh.str(), kRoleBiasHh.str()});
    return weights;
  }
  if (group == "cotangents") {
    SmallVector<std::string> cotangents = {kRoleGradY.str()};
    llvm::append_range(cotangents,
                       stateRoles(cell, kGradPrefix, kFinalStateSuffix));
    return cotangents;
  }
  SmallVector<std::string> y = {kRoleY.str()};
  ArrayRef<StringRef> replayed = cell.getReplayedRoles();
  if (group == "saved") {
    if (phase == KernelPhase::Fwd)
      return roleStrings(cell.getSavedRoles());
    if (phase == KernelPhase::Replay) {
      for (StringRef role : cell.getSavedRoles())
        if (!llvm::is_contained(replayed, role))
          y.push_back(role.str());
      return y;
    }
    llvm::append_range(y, roleStrings(phase == KernelPhase::Bwd
                                          ? cell.getSavedRoles()
                                          : cell.getCheckpointRoles()));
    return y;
  }
  assert(group == "outs" && "an operand group of RNNOps.td");
  if (phase == KernelPhase::Fwd) {
    llvm::append_range(y, stateRoles(cell, "", kFinalStateSuffix));
    return y;
  }
  if (phase == KernelPhase::Replay)
    return roleStrings(replayed);
  // The backward's destinations: the gradients.
  SmallVector<std::string> gradients = {kRoleGradX.str()};
  llvm::append_range(gradients,
                     stateRoles(cell, kGradPrefix, kInitialStateSuffix));
  if (resetStates)
    llvm::append_range(gradients,
                       stateRoles(cell, kGradPrefix, kResetStateSuffix));
  gradients.append({kRoleGradWeightIh.str(), kRoleGradWeightHh.str(),
                    kRoleGradBiasIh.str(), kRoleGradBiasHh.str()});
  return gradients;
}

SmallVector<SmallVector<std::string>>
mlir::rnn::kernelOperandGroups(CellAttrInterface cell, KernelPhase phase,
                               bool resetStates) {
  return llvm::map_to_vector(
      kernelOperandGroupNames(kernelKind(phase)), [&](StringRef group) {
        return groupRoles(cell, phase, resetStates, group);
      });
}

SmallVector<std::string> mlir::rnn::kernelOperandRoles(CellAttrInterface cell,
                                                       KernelPhase phase,
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
  return stateValues(*this, "", kInitialStateSuffix);
}

SmallVector<Value> KernelOpInterface::getBiases() {
  Value ih = get(kRoleBiasIh), hh = get(kRoleBiasHh);
  if (!ih || !hh)
    return {};
  return {ih, hh};
}

SmallVector<OpOperand *> KernelOpInterface::getOutputOperands() {
  if (getPhase() != KernelPhase::Fwd)
    return {};
  SmallVector<OpOperand *> outputs = {getOperandOf(kRoleY)};
  for (const std::string &role : stateRoles(getCell(), "", kFinalStateSuffix))
    outputs.push_back(getOperandOf(role));
  return outputs;
}

SmallVector<Value> KernelOpInterface::getCotangents() {
  if (!isBackward())
    return {};
  SmallVector<Value> cotangents = {get(kRoleGradY)};
  llvm::append_range(cotangents,
                     stateValues(*this, kGradPrefix, kFinalStateSuffix));
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

int64_t mlir::rnn::gemmBlockSteps(int64_t steps, int64_t batch,
                                  int64_t gemmRows) {
  // Steps whose rows reach gemmRows, rounded up (no product that could
  // overflow).
  int64_t rowsPerStep = std::max<int64_t>(batch, 1);
  int64_t wanted = gemmRows / rowsPerStep + (gemmRows % rowsPerStep != 0);
  int64_t block = 1;
  while (block < steps && block < wanted)
    block *= 2;
  return std::max<int64_t>(1, std::min(block, steps));
}

int64_t mlir::rnn::chunkStepsFor(int64_t steps, int64_t block,
                                 int64_t chunk) {
  int64_t blocks = chunk / block + (chunk % block != 0);
  return blocks > steps / block ? steps : blocks * block;
}

GemmBlock mlir::rnn::gemmBlockFor(int64_t steps, int64_t batch,
                                  int64_t gemmRows) {
  if (ShapedType::isDynamic(steps) || ShapedType::isDynamic(batch))
    return GemmBlock::ofRows(gemmRows);
  return GemmBlock::ofSteps(gemmBlockSteps(steps, batch, gemmRows));
}

KernelOpInterface mlir::rnn::createKernel(
    OpBuilder &builder, Location loc, CellAttrInterface cell, KernelPhase phase,
    bool resetStates, TypeRange types, ValueRange operands, GemmBlock block,
    std::optional<int64_t> chunk, Type storage) {
  StringRef name = phase == KernelPhase::Fwd ? CellFwdOp::getOperationName()
                   : phase == KernelPhase::Replay
                       ? CellReplayOp::getOperationName()
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
  if (block.isPerCall())
    state.addAttribute("rows", builder.getI64IntegerAttr(block.rows));
  else
    state.addAttribute("block", builder.getI64IntegerAttr(block.steps));
  if (chunk)
    state.addAttribute("chunk", builder.getI64IntegerAttr(*chunk));
  if (storage &&
      storage != cast<ShapedType>(operands.front().getType()).getElementType())
    state.addAttribute("storage", TypeAttr::get(storage));
  return cast<KernelOpInterface>(builder.create(state));
}
