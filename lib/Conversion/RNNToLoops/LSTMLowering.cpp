//===- LSTMLowering.cpp - LSTM kernels to loops ---------------------------===//
//
// Loops of the LSTM kernels on buffers. Forward, per layer, in chunks of K
// steps (K = T unless the kernel is checkpointed):
//
//   for each chunk [s, s + K):
//     xproj[K*B, 4H] = x[s : s+K] W_ih^T                   (one GEMM)
//     for t in the chunk:
//           h, c = reset[t] ? 0 : h, c                     (state in scratch)
//           pre[B, 4H] = h W_hh^T                          (GEMM)
//           i, f, g, o = act(pre + xproj[t - s] + b_ih + b_hh)
//           c = f c + i g ; h = o tanh(c)
//           y[t] = h ; saved: gates[t] = (i, f, g, o), cells[t] = c
//
// The recurrent state lives in scratch buffers, not in the saved outputs, so
// that a store of a saved value is only ever read by the backward. A
// checkpointed forward saves, instead of every c, the c entering each chunk.
//
// Backward walks t downwards with dh, dc in scratch. Each step writes the
// gradient of its gate pre-activations into dgates[B, 4H] and turns it at
// once into the recurrent gradient, grad_x[t] and its share of the weight
// and bias gradients (KernelBuilder::stepGradients). The gates and cells it
// reads come from the forward (rnn.lstm_bwd) or, for rnn.lstm_chunked_bwd,
// from replaying each chunk from its checkpoint into K-step scratch, last
// chunk first. Forward, replay and backward share the step code below, so
// every policy computes the same values with the same operations. A replay
// computes the gates in place of the input projection they are made from.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "rnn/Dialect/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::rnn;

static int64_t dim(Value v, unsigned i) {
  return cast<MemRefType>(v.getType()).getDimSize(i);
}

namespace {
/// The inputs of a layer, shared by every LSTM kernel.
struct LSTMInputs {
  Value x, isInit, h0, c0, weightIh, weightHh, biasIh, biasHh;
  int64_t T = 0, B = 0, H = 0;

  template <typename OpTy>
  static LSTMInputs of(OpTy op) {
    LSTMInputs in{op.getX(),        op.getIsInit(),   op.getH0(),
                  op.getC0(),       op.getWeightIh(), op.getWeightHh()};
    // The backward of saved values needs no bias.
    if constexpr (!std::is_same_v<OpTy, LSTMBwdOp>) {
      in.biasIh = op.getBiasIh();
      in.biasHh = op.getBiasHh();
    }
    in.T = dim(in.x, 0);
    in.B = dim(in.x, 1);
    in.H = dim(in.weightHh, 1);
    return in;
  }
};

/// Scratch of the forward steps: reset-masked state, recurrent
/// pre-activations, and the input projection of one chunk. A replay passes
/// the buffer it recomputes the gates into as `xproj`: each element of the
/// gates is computed from the same element of the projection alone, so the
/// step can overwrite the projection with the gates.
struct StepScratch {
  Value h, c, pre, xproj;

  StepScratch(KernelBuilder &k, const LSTMInputs &in, int64_t chunk,
              Value gates = {})
      : h(k.alloc({in.B, in.H}, "h")), c(k.alloc({in.B, in.H}, "c")),
        pre(k.alloc({in.B, 4 * in.H}, "preact")),
        xproj(gates ? gates : k.alloc({chunk, in.B, 4 * in.H}, "xproj")) {}
};

/// Where one forward step reads its state and writes its results. Null
/// outputs are not written.
struct StepIO {
  Value hPrev, cPrev;   // [B, H] state entering the step, before the mask
  Value xproj;          // [B, 4H] input projection of the step
  Value gates;          // [B, 4H] activated gates
  Value cells, y;       // [B, H] new c and h
  bool updateState = false; // carry h, c in the scratch to the next step
};
} // namespace

/// One forward step t.
static void emitStep(KernelBuilder &k, const LSTMInputs &in,
                     const StepScratch &s, Value t, const StepIO &io) {
  int64_t B = in.B, H = in.H;
  k.parallel({B, H}, [&](ValueRange iv) {
    Value reset = k.load(in.isInit, {t, iv[0]});
    k.store(k.zeroIf(reset, k.load(io.hPrev, iv)), s.h, iv);
    k.store(k.zeroIf(reset, k.load(io.cPrev, iv)), s.c, iv);
  });
  k.matmul(s.h, in.weightHh, s.pre, false, true, false);
  k.parallel({B, H}, [&](ValueRange iv) {
    Value b = iv[0];
    SmallVector<Value> cols;
    auto preact = [&](int64_t gate) {
      Value col = k.addIndex(iv[1], gate * H);
      cols.push_back(col);
      Value sum = k.add(k.load(s.pre, {b, col}), k.load(io.xproj, {b, col}));
      return k.add(sum, k.add(k.load(in.biasIh, col), k.load(in.biasHh, col)));
    };
    Value i = k.sigmoid(preact(0));
    Value f = k.sigmoid(preact(1));
    Value g = k.tanh(preact(2));
    Value o = k.sigmoid(preact(3));
    Value activations[] = {i, f, g, o};
    for (auto [gate, value] : llvm::enumerate(activations))
      k.store(value, io.gates, {b, cols[gate]});
    if (!io.cells && !io.y)
      return;
    Value cNew = k.add(k.mul(f, k.load(s.c, iv)), k.mul(i, g));
    if (io.cells)
      k.store(cNew, io.cells, iv);
    if (!io.updateState)
      return;
    Value hNew = k.mul(o, k.tanh(cNew));
    k.store(cNew, s.c, iv);
    k.store(hNew, s.h, iv);
    k.store(hNew, io.y, iv);
  });
}

void mlir::rnn::emitLSTMFwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<LSTMFwdOp>(operation);
  LSTMInputs in = LSTMInputs::of(op);
  int64_t chunk = op.getChunk().value_or(in.T);
  bool checkpointed = op.getChunk().has_value();
  StepScratch s(k, in, chunk);
  k.copy(in.h0, s.h);
  k.copy(in.c0, s.c);
  k.forChunks(in.T, chunk, /*reverse=*/false, [&](Value start, int64_t len) {
    if (checkpointed) {
      Value w = arith::DivUIOp::create(k.builder(), start, k.index(chunk));
      k.copy(s.c, k.step(op.getCells(), w));
    }
    Value xproj = k.projectChunk(in.x, in.weightIh, s.xproj, start, len);
    k.forTime(len, /*reverse=*/false, [&](Value i) {
      Value t = arith::AddIOp::create(k.builder(), start, i);
      StepIO io{s.h,
                s.c,
                k.step(xproj, i),
                k.step(op.getGates(), t),
                checkpointed ? Value() : k.step(op.getCells(), t),
                k.step(op.getY(), t),
                /*updateState=*/true};
      emitStep(k, in, s, t, io);
    });
  });
  k.copy(s.h, op.getHN());
  k.copy(s.c, op.getCN());
}

void mlir::rnn::emitLSTMReplay(Operation *operation, KernelBuilder &k) {
  auto op = cast<LSTMReplayOp>(operation);
  LSTMInputs in = LSTMInputs::of(op);
  StepScratch s(k, in, in.T, op.getGates());
  Value xproj = k.projectChunk(in.x, in.weightIh, s.xproj, k.index(0), in.T);
  k.forTime(in.T, /*reverse=*/false, [&](Value t) {
    StepIO io{k.previous(op.getY(), in.h0, t),
              k.previous(op.getCells(), in.c0, t), k.step(xproj, t),
              k.step(op.getGates(), t)};
    emitStep(k, in, s, t, io);
  });
}

namespace {
/// What the backward steps read besides the layer inputs.
struct BackwardIO {
  Value y, gradY, gradX;
  Value gradWeightIh, gradWeightHh, gradBiasIh;
};

/// Scratch of the backward steps.
struct GradScratch {
  Value dh, dc, dhIn, dgates, hIn;

  GradScratch(KernelBuilder &k, const LSTMInputs &in)
      : dh(k.alloc({in.B, in.H}, "dh")), dc(k.alloc({in.B, in.H}, "dc")),
        dhIn(k.alloc({in.B, in.H}, "dh_in")),
        dgates(k.alloc({in.B, 4 * in.H}, "dgates")),
        hIn(k.alloc({in.B, in.H}, "h_in")) {}
};
} // namespace

/// One backward step t, reading the step's gates, its cell state and the
/// cell state entering it ([B, 4H], [B, H], [B, H]).
static void emitGradStep(KernelBuilder &k, const LSTMInputs &in,
                         const BackwardIO &io, const GradScratch &g, Value t,
                         Value gates, Value cells, Value cPrev) {
  int64_t B = in.B, H = in.H;
  Value hPrev = k.previous(io.y, in.h0, t);
  k.parallel({B, H}, [&](ValueRange iv) {
    Value b = iv[0];
    Value reset = k.load(in.isInit, {t, b});
    SmallVector<Value> cols, act;
    for (int64_t gate = 0; gate < 4; ++gate) {
      cols.push_back(k.addIndex(iv[1], gate * H));
      act.push_back(k.load(gates, {b, cols.back()}));
    }
    Value i = act[0], f = act[1], gg = act[2], o = act[3];
    Value one = k.scalar(1.0);
    Value dhT = k.add(k.load(g.dh, iv), k.load(io.gradY, {t, b, iv[1]}));
    Value cIn = k.zeroIf(reset, k.load(cPrev, iv));
    Value tc = k.tanh(k.load(cells, iv));
    Value dO = k.mul(dhT, tc);
    Value dcT = k.add(k.load(g.dc, iv),
                      k.mul(k.mul(dhT, o), k.sub(one, k.mul(tc, tc))));
    Value dI = k.mul(dcT, gg), dG = k.mul(dcT, i), dF = k.mul(dcT, cIn);
    Value dpre[] = {
        k.mul(dI, k.mul(i, k.sub(one, i))),
        k.mul(dF, k.mul(f, k.sub(one, f))),
        k.mul(dG, k.sub(one, k.mul(gg, gg))),
        k.mul(dO, k.mul(o, k.sub(one, o))),
    };
    for (int64_t gate = 0; gate < 4; ++gate)
      k.store(dpre[gate], g.dgates, {b, cols[gate]});
    k.store(k.zeroIf(reset, k.mul(dcT, f)), g.dc, iv);
    k.store(k.zeroIf(reset, k.load(hPrev, iv)), g.hIn, iv);
  });
  k.matmul(g.dgates, in.weightHh, g.dhIn, false, false, false);
  k.parallel({B, H}, [&](ValueRange iv) {
    Value reset = k.load(in.isInit, {t, iv[0]});
    k.store(k.zeroIf(reset, k.load(g.dhIn, iv)), g.dh, iv);
  });
  // The input and hidden projections share their pre-activations.
  k.stepGradients({g.dgates, g.dgates, k.step(in.x, t), g.hIn, in.weightIh,
                   k.step(io.gradX, t), io.gradWeightIh, io.gradWeightHh,
                   io.gradBiasIh, io.gradBiasIh});
}

/// Emits the backward of either kernel around `emitChunk(start, len)`,
/// which emits the backward steps of one chunk, last chunk first.
template <typename OpTy>
static void emitBackward(
    KernelBuilder &k, const LSTMInputs &in, OpTy op, const GradScratch &g,
    int64_t chunk, function_ref<void(Value start, int64_t len)> emitChunk) {
  k.copy(op.getGradHN(), g.dh);
  k.copy(op.getGradCN(), g.dc);
  k.zero(op.getGradWeightIh());
  k.zero(op.getGradWeightHh());
  k.zero(op.getGradBiasIh());
  k.forChunks(in.T, chunk, /*reverse=*/true, emitChunk);
  k.copy(g.dh, op.getGradH0());
  k.copy(g.dc, op.getGradC0());
  k.copy(op.getGradBiasIh(), op.getGradBiasHh());
}

template <typename OpTy>
static BackwardIO backwardIO(OpTy op) {
  return {op.getY(),          op.getGradY(),        op.getGradX(),
          op.getGradWeightIh(), op.getGradWeightHh(), op.getGradBiasIh()};
}

void mlir::rnn::emitLSTMBwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<LSTMBwdOp>(operation);
  LSTMInputs in = LSTMInputs::of(op);
  BackwardIO io = backwardIO(op);
  GradScratch g(k, in);
  emitBackward(k, in, op, g, in.T, [&](Value start, int64_t len) {
    k.forTime(len, /*reverse=*/true, [&](Value t) {
      emitGradStep(k, in, io, g, t, k.step(op.getGates(), t),
                   k.step(op.getCells(), t),
                   k.previous(op.getCells(), in.c0, t));
    });
  });
}

void mlir::rnn::emitLSTMChunkedBwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<LSTMChunkedBwdOp>(operation);
  LSTMInputs in = LSTMInputs::of(op);
  int64_t chunk = op.getChunk();
  BackwardIO io = backwardIO(op);
  // K steps of replay scratch, reused chunk after chunk.
  Value gates = k.alloc({chunk, in.B, 4 * in.H}, "gates");
  Value cells = k.alloc({chunk, in.B, in.H}, "cells");
  StepScratch s(k, in, chunk, gates);
  GradScratch g(k, in);
  emitBackward(k, in, op, g, chunk, [&](Value start, int64_t len) {
    // Replay the chunk from the cell state that entered it ...
    Value w = arith::DivUIOp::create(k.builder(), start, k.index(chunk));
    Value cEntry = k.step(op.getCells(), w);
    Value xproj = k.projectChunk(in.x, in.weightIh, s.xproj, start, len);
    k.forTime(len, /*reverse=*/false, [&](Value i) {
      Value t = arith::AddIOp::create(k.builder(), start, i);
      StepIO step{k.previous(op.getY(), in.h0, t),
                  k.previous(cells, cEntry, i), k.step(xproj, i),
                  k.step(gates, i), k.step(cells, i)};
      emitStep(k, in, s, t, step);
    });
    // ... and differentiate it.
    k.forTime(len, /*reverse=*/true, [&](Value i) {
      Value t = arith::AddIOp::create(k.builder(), start, i);
      emitGradStep(k, in, io, g, t, k.step(gates, i), k.step(cells, i),
                   k.previous(cells, cEntry, i));
    });
  });
}
