//===- RNNDialect.cpp - rnn dialect ---------------------------------------===//
//
// Registers the rnn dialect and its operations.
//
//===----------------------------------------------------------------------===//

#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Dialect/RNNOps.h"
#include "rnn/Dialect/RNNRoles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::rnn;

#include "rnn/Dialect/RNNDialect.cpp.inc"

void RNNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "rnn/Dialect/RNNOps.cpp.inc"
      >();
  registerAttributes();
}

Operation *RNNDialect::materializeConstant(OpBuilder &builder,
                                           Attribute value, Type type,
                                           Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

bool mlir::rnn::writesArgument(FunctionOpInterface func, unsigned index) {
  auto name = func.getArgAttrOfType<StringAttr>(
      index, RNNDialect::NameAttrHelper::getNameStr());
  return name && isWrittenRole(bufferRole(name.getValue()));
}
