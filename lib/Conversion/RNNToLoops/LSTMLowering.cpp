//===- LSTMLowering.cpp - LSTM kernels to loops ---------------------------===//
//
// Loops of the LSTM kernels on buffers. Every GEMM whose result a remat
// policy could change is issued per GEMM block of P steps (the kernel's
// `block`), blocks [jP, jP + P) of the whole sequence, so that forward,
// replays and backward issue the same calls whatever the policy. Forward,
// per layer (chunks of K steps only when checkpointed; K is a multiple of P
// or T):
//
//   for each chunk [s, s + K):     (saved: cells[s / K] = c, if checkpointed)
//     for each block [p, p + P) in it:
//       xproj[P*B, 4H] = x[p : p+P] W_ih^T                 (one GEMM)
//       for t in the block:
//           h, c = reset[t] ? 0 : h, c                     (state in scratch)
//           pre[B, 4H] = h W_hh^T                          (GEMM)
//           i, f, g, o = act(pre + xproj[t - p] + b_ih + b_hh)
//           c = f c + i g ; h = o tanh(c)
//           y[t] = h ; saved: gates[t] = (i, f, g, o), cells[t] = c
//
// The recurrent state lives in scratch buffers, not in the saved outputs, so
// that a store of a saved value is only ever read by the backward.
//
// Backward, shaped like cuDNN's: per step only the recurrent chain, per
// block the rest. For each block, last first:
//
//   for t in the block, downwards:
//       dG[t] = gate gradients from gates[t], c[t], c[t-1], dh, dc
//               (written over gates[t]: each element of dG is computed from
//               the same elements of the gates)
//       hIn[t - p] = reset[t] ? 0 : h[t-1] ; dc = reset[t] ? 0 : dc f
//       dh = reset[t] ? 0 : dG[t] W_hh                     (one GEMM)
//   grad_x[p : p+P] = dG W_ih                              (one GEMM each:
//   grad_W_ih += dG^T x[p : p+P] ; grad_W_hh += dG^T hIn    P*B rows)
//   grad_b += ones^T dG                                    (a GEMV)
//
// The gates come from the forward (rnn.lstm_bwd) or from replaying each
// chunk from its checkpoint into K-step scratch, last chunk first
// (rnn.lstm_chunked_bwd); either way the gate gradients take the place of
// the gates, so no policy holds a gradient buffer besides them. Forward,
// replay and backward share the step code below.
//
//===----------------------------------------------------------------------===//

#include "CellLowering.h"

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
  int64_t T = 0, B = 0, H = 0, P = 0;

  template <typename OpTy> static LSTMInputs of(OpTy op) {
    LSTMInputs in{op.getX(),  op.getIsInit(),   op.getH0(),
                  op.getC0(), op.getWeightIh(), op.getWeightHh()};
    // The backward of saved values needs no bias.
    if constexpr (!std::is_same_v<OpTy, LSTMBwdOp>) {
      in.biasIh = op.getBiasIh();
      in.biasHh = op.getBiasHh();
    }
    in.T = dim(in.x, 0);
    in.B = dim(in.x, 1);
    in.H = dim(in.weightHh, 1);
    in.P = op.getBlock();
    return in;
  }
};

/// Scratch of the forward steps: reset-masked state, recurrent
/// pre-activations, and the input projection of one block. A replay
/// computes the gates in place of the projection they are made from (each
/// element of the gates is computed from the same element of the
/// projection alone), so it passes no projection scratch.
struct StepScratch {
  Value h, c, pre, xproj;

  StepScratch(KernelBuilder &k, const LSTMInputs &in, bool replay)
      : h(k.alloc({in.B, in.H}, "h")), c(k.alloc({in.B, in.H}, "c")),
        pre(k.alloc({in.B, 4 * in.H}, "preact")),
        xproj(replay ? Value() : k.alloc({in.P, in.B, 4 * in.H}, "xproj")) {}
};

/// Where one forward step reads its state and writes its results. Null
/// outputs are not written.
struct StepIO {
  Value hPrev, cPrev;       // [B, H] state entering the step, before the mask
  Value xproj;              // [B, 4H] input projection of the step
  Value gates;              // [B, 4H] activated gates
  Value cells, y;           // [B, H] new c and h
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

static void emitLSTMFwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<LSTMFwdOp>(operation);
  LSTMInputs in = LSTMInputs::of(op);
  int64_t chunk = op.getChunk().value_or(in.T);
  bool checkpointed = op.getChunk().has_value();
  StepScratch s(k, in, /*replay=*/false);
  k.copy(in.h0, s.h);
  k.copy(in.c0, s.c);
  k.forChunks(in.T, chunk, /*reverse=*/false, [&](Value first, int64_t len) {
    if (checkpointed) {
      Value w = arith::DivUIOp::create(k.builder(), first, k.index(chunk));
      k.copy(s.c, k.step(op.getCells(), w));
    }
    k.forBlocks(first, len, in.P, /*reverse=*/false,
                [&](Value start, Value, int64_t blockLen) {
                  Value xproj = k.leading(s.xproj, blockLen);
                  k.project(k.steps(in.x, start, blockLen), in.weightIh, xproj);
                  k.forTime(blockLen, /*reverse=*/false, [&](Value i) {
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
  });
  k.copy(s.h, op.getHN());
  k.copy(s.c, op.getCN());
}

/// Replays steps [first, first + len) into `gates` and `cells` ([len, B, X]
/// views, or null cells), block by block: the projection of a block into
/// its gates, then the steps. The state entering step t comes from
/// `hPrev(t)`, `cPrev(i)` (i = t - first).
static void emitReplay(KernelBuilder &k, const LSTMInputs &in,
                       const StepScratch &s, Value first, int64_t len,
                       Value gates, Value cells,
                       function_ref<Value(Value t)> hPrev,
                       function_ref<Value(Value i)> cPrev) {
  k.forBlocks(
      first, len, in.P, /*reverse=*/false,
      [&](Value start, Value offset, int64_t blockLen) {
        Value blockGates = k.steps(gates, offset, blockLen);
        k.project(k.steps(in.x, start, blockLen), in.weightIh, blockGates);
        k.forBlockSteps(start, offset, blockLen, /*reverse=*/false,
                        [&](Value t, Value j, Value i) {
                          StepIO io{hPrev(t), cPrev(j), k.step(blockGates, i),
                                    k.step(gates, j),
                                    cells ? k.step(cells, j) : Value()};
                          emitStep(k, in, s, t, io);
                        });
      });
}

static void emitLSTMReplay(Operation *operation, KernelBuilder &k) {
  auto op = cast<LSTMReplayOp>(operation);
  LSTMInputs in = LSTMInputs::of(op);
  StepScratch s(k, in, /*replay=*/true);
  emitReplay(
      k, in, s, k.index(0), in.T, op.getGates(), Value(),
      [&](Value t) { return k.previous(op.getY(), in.h0, t); },
      [&](Value t) { return k.previous(op.getCells(), in.c0, t); });
}

namespace {
/// What the backward steps read besides the layer inputs.
struct BackwardIO {
  Value y, gradY, gradX;
  Value gradWeightIh, gradWeightHh, gradBiasIh;
};

/// Scratch of the backward steps: the recurrent gradients, and the masked
/// states entering the steps of one block.
struct GradScratch {
  Value dh, dc, dhIn, hIn, ones;

  GradScratch(KernelBuilder &k, const LSTMInputs &in)
      : dh(k.alloc({in.B, in.H}, "dh")), dc(k.alloc({in.B, in.H}, "dc")),
        dhIn(k.alloc({in.B, in.H}, "dh_in")),
        hIn(k.alloc({in.P, in.B, in.H}, "h_in")), ones(k.ones(in.P * in.B)) {}
};
} // namespace

/// One backward step t, reading the step's gates (overwritten with their
/// gradients), its cell state and the cell state entering it ([B, 4H],
/// [B, H], [B, H]); writes the masked state entering it to `hIn` [B, H].
static void emitGradStep(KernelBuilder &k, const LSTMInputs &in,
                         const BackwardIO &io, const GradScratch &g, Value t,
                         Value gates, Value cells, Value cPrev, Value hIn) {
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
      k.store(dpre[gate], gates, {b, cols[gate]});
    k.store(k.zeroIf(reset, k.mul(dcT, f)), g.dc, iv);
    k.store(k.zeroIf(reset, k.load(hPrev, iv)), hIn, iv);
  });
  k.matmul(gates, in.weightHh, g.dhIn, false, false, false);
  k.parallel({B, H}, [&](ValueRange iv) {
    Value reset = k.load(in.isInit, {t, iv[0]});
    k.store(k.zeroIf(reset, k.load(g.dhIn, iv)), g.dh, iv);
  });
}

/// The block's share of the gradients, from its gate gradients `dGates`
/// ([len, B, 4H]) and the masked states entering its steps.
static void emitBlockGradients(KernelBuilder &k, const LSTMInputs &in,
                               const BackwardIO &io, const GradScratch &g,
                               Value start, int64_t len, Value dGates) {
  Value dG = k.flatten(dGates);
  Value hIn = k.flatten(k.leading(g.hIn, len));
  Value gradX = k.flatten(k.steps(io.gradX, start, len));
  Value x = k.flatten(k.steps(in.x, start, len));
  Value gradBias = k.row(io.gradBiasIh);
  k.matmul(dG, in.weightIh, gradX, false, false, false);
  k.matmul(dG, x, io.gradWeightIh, true, false, true);
  k.matmul(dG, hIn, io.gradWeightHh, true, false, true);
  k.addColumnSums(dG, g.ones, gradBias);
}

/// Differentiates steps [first, first + len), block by block, last first.
/// `gates` and `cells` hold those steps ([len, B, X]: the saved values, or
/// the replay scratch of a chunk); `cPrev(j)` is the cell state entering
/// step first + j.
static void emitGradSteps(KernelBuilder &k, const LSTMInputs &in,
                          const BackwardIO &io, const GradScratch &g,
                          Value first, int64_t len, Value gates, Value cells,
                          function_ref<Value(Value j)> cPrev) {
  k.forBlocks(first, len, in.P, /*reverse=*/true,
              [&](Value start, Value offset, int64_t blockLen) {
                k.forBlockSteps(start, offset, blockLen, /*reverse=*/true,
                                [&](Value t, Value j, Value i) {
                                  emitGradStep(k, in, io, g, t,
                                               k.step(gates, j),
                                               k.step(cells, j), cPrev(j),
                                               k.step(g.hIn, i));
                                });
                emitBlockGradients(k, in, io, g, start, blockLen,
                                   k.steps(gates, offset, blockLen));
              });
}

/// Emits the backward of either kernel around `emitChunk(first, len)`,
/// which emits the backward of one chunk, last chunk first.
template <typename OpTy>
static void
emitBackward(KernelBuilder &k, const LSTMInputs &in, OpTy op,
             const GradScratch &g, int64_t chunk,
             function_ref<void(Value first, int64_t len)> emitChunk) {
  k.copy(op.getGradHN(), g.dh);
  k.copy(op.getGradCN(), g.dc);
  k.zero(op.getGradWeightIh());
  k.zero(op.getGradWeightHh());
  k.zero(op.getGradBiasIh());
  k.forChunks(in.T, chunk, /*reverse=*/true, emitChunk);
  k.copy(g.dh, op.getGradH0());
  k.copy(g.dc, op.getGradC0());
  // The input and hidden projections share their pre-activations.
  k.copy(op.getGradBiasIh(), op.getGradBiasHh());
}

template <typename OpTy> static BackwardIO backwardIO(OpTy op) {
  return {op.getY(),
          op.getGradY(),
          op.getGradX(),
          op.getGradWeightIh(),
          op.getGradWeightHh(),
          op.getGradBiasIh()};
}

static void emitLSTMBwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<LSTMBwdOp>(operation);
  LSTMInputs in = LSTMInputs::of(op);
  BackwardIO io = backwardIO(op);
  GradScratch g(k, in);
  emitBackward(k, in, op, g, in.T, [&](Value first, int64_t len) {
    emitGradSteps(k, in, io, g, first, len, op.getGates(), op.getCells(),
                  [&](Value t) { return k.previous(op.getCells(), in.c0, t); });
  });
}

static void emitLSTMChunkedBwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<LSTMChunkedBwdOp>(operation);
  LSTMInputs in = LSTMInputs::of(op);
  int64_t chunk = op.getChunk();
  BackwardIO io = backwardIO(op);
  // K steps of replay scratch, reused chunk after chunk.
  Value gates = k.alloc({chunk, in.B, 4 * in.H}, "gates");
  Value cells = k.alloc({chunk, in.B, in.H}, "cells");
  StepScratch s(k, in, /*replay=*/true);
  GradScratch g(k, in);
  emitBackward(k, in, op, g, chunk, [&](Value first, int64_t len) {
    // Replay the chunk from the cell state that entered it ...
    Value w = arith::DivUIOp::create(k.builder(), first, k.index(chunk));
    Value cEntry = k.step(op.getCells(), w);
    auto cPrev = [&](Value j) { return k.previous(cells, cEntry, j); };
    emitReplay(
        k, in, s, first, len, gates, cells,
        [&](Value t) { return k.previous(op.getY(), in.h0, t); }, cPrev);
    // ... and differentiate it.
    emitGradSteps(k, in, io, g, first, len, gates, cells, cPrev);
  });
}

void mlir::rnn::attachLSTMLowering(MLIRContext &context) {
  LSTMCellAttr::attachInterface<
      PhaseLowering<LSTMCellAttr, emitLSTMFwd, emitLSTMBwd, emitLSTMChunkedBwd,
                    emitLSTMReplay>>(context);
}
