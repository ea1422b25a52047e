//===- RuntimeFunctions.cpp - declarations of the runtime's entry points --===//

#include "rnn/Conversion/RuntimeFunctions.h"
#include "rnn/Support/Diagnostics.h"

using namespace mlir;

FailureOr<func::FuncOp> rnn::declareRuntimeFunction(ModuleOp module,
                                                    StringRef name,
                                                    FunctionType type,
                                                    StringRef caller) {
  if (Operation *existing = module.lookupSymbol(name)) {
    auto function = dyn_cast<func::FuncOp>(existing);
    if (function && function.getFunctionType() == type && function.isExternal())
      return function;
    // The symbol may be a whole function: name it without printing it.
    return rnn::emitErrorAt(existing, "@")
           << name << " is the rnnc runtime's function of type " << type
           << " that " << caller
           << " calls; the module defines the symbol otherwise";
  }
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto function = func::FuncOp::create(builder, module.getLoc(), name, type);
  function.setPrivate();
  return function;
}
