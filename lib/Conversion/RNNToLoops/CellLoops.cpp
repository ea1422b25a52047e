//===- CellLoops.cpp - the loop skeleton every cell's kernels share -------===//
//
// The operands of a kernel as the skeleton (CellLoops.h) reads them.
//
//===----------------------------------------------------------------------===//

#include "CellLoops.h"

using namespace mlir;
using namespace mlir::rnn;


LayerInputs::LayerInputs(KernelOpInterface op, KernelBuilder &k)
    : x(op.getInput()), isInit(op.getResetMask()),
      weightIh(k.gemmOperand(op.getInputWeight())),
      weightHh(k.gemmOperand(op.getRecurrentWeight())),
      // The backward of saved values reads no bias (null).
      biasIh(op.get(kRoleBiasIh)), biasHh(op.get(kRoleBiasHh)),
      states(op.getInitialStates()), resetStates(op.getResetStates()),
      T(k.sizeOf(x, 0)), B(k.sizeOf(x, 1)),
      H(cast<MemRefType>(weightHh.getType()).getDimSize(1)),
      P(op.getGemmBlock().isPerCall()
            ? OpFoldResult(k.gemmBlockSteps(T, B, op.getGemmBlock().rows))
            : k.size(op.getBlockSteps())),
      replaysInPlace(op.getStorageType() ==
                     cast<MemRefType>(x.getType()).getElementType()) {
  std::optional<int64_t> chunk = op.getChunkSteps();
  if (!chunk)
    K = T;
  else if (op.getGemmBlock().isPerCall())
    K = k.chunkSteps(T, P, *chunk);
  else
    K = k.size(*chunk);
  if (op.hasDynamicShape())
    k.setGemmRowsBound(k.mulSize(P, B));
}

Shape LayerInputs::stepShape(int64_t width) const {
  return {B, IntegerAttr::get(IndexType::get(x.getContext()), width)};
}

Shape LayerInputs::blockShape(int64_t width) const {
  return {P, B, IntegerAttr::get(IndexType::get(x.getContext()), width)};
}

/// Element iv = (b, j) of step t of a reset state or its gradient: [t, b, j]
/// per step, [b, j] per batch column.
static SmallVector<Value> resetIndices(Value resetState, Value t,
                                       ValueRange iv) {
  SmallVector<Value> indices(iv);
  if (cast<MemRefType>(resetState.getType()).getRank() == 3)
    indices.insert(indices.begin(), t);
  return indices;
}

Value LayerInputs::enterState(KernelBuilder &k, unsigned state, Value reset,
                              Value t, ValueRange iv, Value carried) const {
  if (resetStates.empty())
    return k.zeroIf(reset, carried);
  Value given = resetStates[state];
  return k.select(reset, k.load(given, resetIndices(given, t, iv)), carried);
}

Value LayerInputs::resetAfter(KernelBuilder &k, Value t, Value b) const {
  if (!t)
    return k.load(isInit, {k.index(0), b});
  ImplicitLocOpBuilder &builder = k.builder();
  Value last = k.index(k.subSize(T, 1));
  // Step t + 1, clamped so that the load stays inside is_init at T - 1.
  Value next = arith::MinUIOp::create(builder, k.addIndex(t, 1), last);
  Value reset = k.load(isInit, {next, b});
  Value before =
      arith::CmpIOp::create(builder, arith::CmpIPredicate::ult, t, last);
  return arith::AndIOp::create(builder, reset, before);
}

Value LayerInputs::carryGradient(KernelBuilder &k, const BackwardIO &io,
                                 unsigned state, Value reset, Value t,
                                 ValueRange iv, Value gradient) const {
  if (!io.gradResetStates.empty()) {
    Value grad = io.gradResetStates[state];
    SmallVector<Value> indices = resetIndices(grad, t, iv);
    Value given = k.select(reset, gradient, k.scalar(0.0));
    if (indices.size() == 2)
      given = k.add(k.load(grad, indices), given);
    k.store(given, grad, indices);
  }
  return k.zeroIf(reset, gradient);
}

BackwardIO::BackwardIO(KernelOpInterface op)
    : y(op.getOutput()), gradY(op.get(kRoleGradY)), gradX(op.get(kRoleGradX)),
      gradWeightIh(op.get(kRoleGradWeightIh)),
      gradWeightHh(op.get(kRoleGradWeightHh)),
      gradBiasIh(op.get(kRoleGradBiasIh)), gradBiasHh(op.get(kRoleGradBiasHh)) {
  for (StringRef state : op.getCell().getStateNames())
    if (Value grad = op.get((kGradPrefix + state + kResetStateSuffix).str()))
      gradResetStates.push_back(grad);
}

Value StepIO::reset(KernelBuilder &k, const LayerInputs &in, Value b) const {
  return masked ? Value() : k.load(in.isInit, {t, b});
}

Value StepIO::enter(KernelBuilder &k, unsigned state, Value reset,
                    ValueRange iv) const {
  return afterReset(k, reset, k.load(prev[state], iv));
}

void StepIO::storeH(KernelBuilder &k, Value h, ValueRange iv) const {
  k.store(h, y, iv);
  if (gemmState)
    k.storeGemmOperand(h, gemmState, iv);
}

Value StepIO::afterReset(KernelBuilder &k, Value reset, Value value) const {
  return reset ? k.zeroIf(reset, value) : value;
}

StateScratch::StateScratch(KernelBuilder &k, const LayerInputs &in,
                           CellAttrInterface cell, bool carries) {
  ArrayRef<StringRef> names = cell.getStateNames();
  for (auto [i, name] : llvm::enumerate(names))
    carried.push_back(carries && i > 0 ? k.alloc(in.stepShape(in.H), name)
                                       : Value());
  if (!in.resetsToZero())
    for (StringRef name : names)
      masked.push_back(
          k.alloc(in.stepShape(in.H), (name + "_entering").str()));
}

StepIO StateScratch::enter(KernelBuilder &k, const LayerInputs &in, Value t,
                           ArrayRef<Value> prev) const {
  StepIO io;
  io.t = t;
  if (in.resetsToZero()) {
    io.prev.assign(prev.begin(), prev.end());
    return io;
  }
  k.parallel(in.stepShape(in.H), [&](ValueRange iv) {
    Value reset = k.load(in.isInit, {t, iv[0]});
    for (auto [i, state] : llvm::enumerate(masked))
      k.store(in.enterState(k, i, reset, t, iv, k.load(prev[i], iv)), state,
              iv);
  });
  io.prev = masked;
  io.masked = true;
  return io;
}
