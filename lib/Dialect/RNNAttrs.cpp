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

OpOperand *LSTMFwdOp::getSavedOperand(StringRef role) {
  if (role == "gates")
    return &getGatesMutable();
  return role == "cells" ? &getCellsMutable() : nullptr;
}

OpOperand *LSTMBwdOp::getSavedOperand(StringRef role) {
  if (role == "gates")
    return &getGatesMutable();
  return role == "cells" ? &getCellsMutable() : nullptr;
}

/// Its `cells` are the checkpoints at chunk entries.
OpOperand *LSTMChunkedBwdOp::getSavedOperand(StringRef role) {
  return role == "cells" ? &getCellsMutable() : nullptr;
}

/// It reads the saved `cells` as states and writes the gates.
OpOperand *LSTMReplayOp::getSavedOperand(StringRef role) {
  if (role == "gates")
    return &getGatesMutable();
  return role == "cells" ? &getCellsMutable() : nullptr;
}

OpOperand *GRUFwdOp::getSavedOperand(StringRef role) {
  if (role == "gates")
    return &getGatesMutable();
  return role == "hn_proj" ? &getHnProjMutable() : nullptr;
}

OpOperand *GRUBwdOp::getSavedOperand(StringRef role) {
  if (role == "gates")
    return &getGatesMutable();
  return role == "hn_proj" ? &getHnProjMutable() : nullptr;
}

/// The GRU's chunked backward recomputes everything from `y`.
OpOperand *GRUChunkedBwdOp::getSavedOperand(StringRef) { return nullptr; }

OpOperand *GRUReplayOp::getSavedOperand(StringRef role) {
  if (role == "gates")
    return &getGatesMutable();
  return role == "hn_proj" ? &getHnProjMutable() : nullptr;
}
