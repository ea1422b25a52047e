//===- GRULowering.cpp - GRU kernels to loops -----------------------------===//
//
// Loops of the GRU kernels on buffers, with the GEMM blocks of
// LSTMLowering.cpp (P steps of the whole sequence per input-projection and
// gradient GEMM, whatever the policy). Forward, per layer:
//
//   for each block [p, p + P):
//     xproj[P*B, 3H] = x[p : p+P] W_ih^T                   (one GEMM)
//     for t in the block:
//           h = reset[t] ? 0 : h                           (state in scratch)
//           pre[B, 3H] = h W_hh^T                          (GEMM)
//           r, z = sigmoid(xproj + b_i + pre + b_h)        (gates r, z)
//           hn = pre_n + b_hn ; n = tanh(xproj_n + b_in + r hn)
//           h = (1 - z) n + z h
//           y[t] = h ; saved: gates[t] = (r, z, n), hn_proj[t] = hn
//
// Backward, per block, last first:
//
//   for t in the block, downwards:
//       dI[t] = (da_r, da_z, da_n)     gradients of the input projection,
//                                      written over gates[t]
//       dHn[t] = da_n r                the n part of the hidden
//                                      projection's, written over hn_proj[t]
//       hIn[t - p] = reset[t] ? 0 : h[t-1]
//       dh = reset[t] ? 0 : dh z + (da_r, da_z, da_n r) W_hh   (one GEMM)
//   grad_x[p : p+P] = dI W_ih ; grad_W_ih += dI^T x[p : p+P]
//   grad_W_hh[0:2H] += dI[:, 0:2H]^T hIn ; grad_W_hh[2H:3H] += dHn^T hIn
//   grad_b_ih += ones^T dI ; grad_b_hh[2H:3H] += ones^T dHn (GEMVs)
//
// and at the end grad_b_hh[0:2H] = grad_b_ih[0:2H] (the r and z parts of
// the two projections share their pre-activations). The gates and hn_proj
// come from the forward (rnn.gru_bwd) or from replaying each chunk from `y`
// into K-step scratch, last chunk first (rnn.gru_chunked_bwd).
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
/// The inputs of a layer, shared by every GRU kernel.
struct GRUInputs {
  Value x, isInit, h0, weightIh, weightHh, biasIh, biasHh;
  int64_t T = 0, B = 0, H = 0, P = 0;

  template <typename OpTy> static GRUInputs of(OpTy op) {
    GRUInputs in{op.getX(), op.getIsInit(), op.getH0(), op.getWeightIh(),
                 op.getWeightHh()};
    // The backward of saved values needs no bias.
    if constexpr (!std::is_same_v<OpTy, GRUBwdOp>) {
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
/// pre-activations, and the input projection of one block (none for a
/// replay, which computes the gates in place of their projection; see the
/// LSTM's).
struct StepScratch {
  Value h, pre, xproj;

  StepScratch(KernelBuilder &k, const GRUInputs &in, bool replay)
      : h(k.alloc({in.B, in.H}, "h")), pre(k.alloc({in.B, 3 * in.H}, "preact")),
        xproj(replay ? Value() : k.alloc({in.P, in.B, 3 * in.H}, "xproj")) {}
};

/// Where one forward step reads its state and writes its results; `y` is
/// null when the step only recomputes the saved values.
struct StepIO {
  Value hPrev;  // [B, H] state entering the step, before the mask
  Value xproj;  // [B, 3H]
  Value gates;  // [B, 3H]
  Value hnProj; // [B, H]
  Value y;      // [B, H]
};
} // namespace

/// One forward step t.
static void emitStep(KernelBuilder &k, const GRUInputs &in,
                     const StepScratch &s, Value t, const StepIO &io) {
  int64_t B = in.B, H = in.H;
  k.parallel({B, H}, [&](ValueRange iv) {
    Value reset = k.load(in.isInit, {t, iv[0]});
    k.store(k.zeroIf(reset, k.load(io.hPrev, iv)), s.h, iv);
  });
  k.matmul(s.h, in.weightHh, s.pre, false, true, false);
  k.parallel({B, H}, [&](ValueRange iv) {
    Value b = iv[0];
    Value cols[] = {iv[1], k.addIndex(iv[1], H), k.addIndex(iv[1], 2 * H)};
    auto inputPart = [&](int gate) {
      return k.add(k.load(io.xproj, {b, cols[gate]}),
                   k.load(in.biasIh, cols[gate]));
    };
    auto hiddenPart = [&](int gate) {
      return k.add(k.load(s.pre, {b, cols[gate]}),
                   k.load(in.biasHh, cols[gate]));
    };
    Value r = k.sigmoid(k.add(inputPart(0), hiddenPart(0)));
    Value z = k.sigmoid(k.add(inputPart(1), hiddenPart(1)));
    Value hn = hiddenPart(2);
    Value n = k.tanh(k.add(inputPart(2), k.mul(r, hn)));
    k.store(hn, io.hnProj, iv);
    Value activations[] = {r, z, n};
    for (auto [gate, value] : llvm::enumerate(activations))
      k.store(value, io.gates, {b, cols[gate]});
    if (!io.y)
      return;
    Value hOld = k.load(s.h, iv);
    Value hNew = k.add(k.mul(k.sub(k.scalar(1.0), z), n), k.mul(z, hOld));
    k.store(hNew, s.h, iv);
    k.store(hNew, io.y, iv);
  });
}

static void emitGRUFwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<GRUFwdOp>(operation);
  GRUInputs in = GRUInputs::of(op);
  StepScratch s(k, in, /*replay=*/false);
  k.copy(in.h0, s.h);
  k.forBlocks(k.index(0), in.T, in.P, /*reverse=*/false,
              [&](Value start, Value, int64_t len) {
                Value xproj = k.leading(s.xproj, len);
                k.project(k.steps(in.x, start, len), in.weightIh, xproj);
                k.forTime(len, /*reverse=*/false, [&](Value i) {
                  Value t = arith::AddIOp::create(k.builder(), start, i);
                  emitStep(k, in, s, t,
                           {s.h, k.step(xproj, i), k.step(op.getGates(), t),
                            k.step(op.getHnProj(), t), k.step(op.getY(), t)});
                });
              });
  k.copy(s.h, op.getHN());
}

/// Replays steps [first, first + len) from the states in `y` into `gates`
/// and `hnProj` ([len, B, X] views), block by block: the projection of a
/// block into its gates, then the steps.
static void emitReplay(KernelBuilder &k, const GRUInputs &in,
                       const StepScratch &s, Value y, Value first, int64_t len,
                       Value gates, Value hnProj) {
  k.forBlocks(first, len, in.P, /*reverse=*/false,
              [&](Value start, Value offset, int64_t blockLen) {
                Value blockGates = k.steps(gates, offset, blockLen);
                k.project(k.steps(in.x, start, blockLen), in.weightIh,
                          blockGates);
                k.forBlockSteps(
                    start, offset, blockLen, /*reverse=*/false,
                    [&](Value t, Value j, Value i) {
                      emitStep(k, in, s, t,
                               {k.previous(y, in.h0, t), k.step(blockGates, i),
                                k.step(gates, j), k.step(hnProj, j)});
                    });
              });
}

static void emitGRUReplay(Operation *operation, KernelBuilder &k) {
  auto op = cast<GRUReplayOp>(operation);
  GRUInputs in = GRUInputs::of(op);
  StepScratch s(k, in, /*replay=*/true);
  emitReplay(k, in, s, op.getY(), k.index(0), in.T, op.getGates(),
             op.getHnProj());
}

namespace {
/// Scratch of the backward steps: the recurrent gradients, the hidden
/// projection's gradients of one step, and the masked states entering the
/// steps of one block.
struct GradScratch {
  Value dh, dhIn, dHidden, hIn, ones;

  GradScratch(KernelBuilder &k, const GRUInputs &in)
      : dh(k.alloc({in.B, in.H}, "dh")), dhIn(k.alloc({in.B, in.H}, "dh_in")),
        dHidden(k.alloc({in.B, 3 * in.H}, "dhproj")),
        hIn(k.alloc({in.P, in.B, in.H}, "h_in")), ones(k.ones(in.P * in.B)) {}
};
} // namespace

/// One backward step t of `op`, reading the step's gates and hn_proj
/// ([B, 3H], [B, H]) and overwriting them with the gradients of the input
/// projection and the n part of the hidden projection's; writes the masked
/// state entering the step to `hIn` [B, H].
template <typename OpTy>
static void emitGradStep(KernelBuilder &k, const GRUInputs &in, OpTy op,
                         const GradScratch &g, Value t, Value gates,
                         Value hnProj, Value hInStep) {
  int64_t B = in.B, H = in.H;
  Value hPrev = k.previous(op.getY(), in.h0, t);
  k.parallel({B, H}, [&](ValueRange iv) {
    Value b = iv[0];
    Value reset = k.load(in.isInit, {t, b});
    Value cols[] = {iv[1], k.addIndex(iv[1], H), k.addIndex(iv[1], 2 * H)};
    Value r = k.load(gates, {b, cols[0]});
    Value z = k.load(gates, {b, cols[1]});
    Value n = k.load(gates, {b, cols[2]});
    Value hn = k.load(hnProj, iv);
    Value hIn = k.zeroIf(reset, k.load(hPrev, iv));
    Value one = k.scalar(1.0);
    Value dhT = k.add(k.load(g.dh, iv), k.load(op.getGradY(), {t, b, iv[1]}));
    Value dN = k.mul(dhT, k.sub(one, z));
    Value dZ = k.mul(dhT, k.sub(hIn, n));
    Value daN = k.mul(dN, k.sub(one, k.mul(n, n)));
    Value daR = k.mul(k.mul(daN, hn), k.mul(r, k.sub(one, r)));
    Value daZ = k.mul(dZ, k.mul(z, k.sub(one, z)));
    Value dHn = k.mul(daN, r);
    k.store(daR, gates, {b, cols[0]});
    k.store(daZ, gates, {b, cols[1]});
    k.store(daN, gates, {b, cols[2]});
    k.store(dHn, hnProj, iv);
    k.store(daR, g.dHidden, {b, cols[0]});
    k.store(daZ, g.dHidden, {b, cols[1]});
    k.store(dHn, g.dHidden, {b, cols[2]});
    k.store(k.mul(dhT, z), g.dh, iv);
    k.store(hIn, hInStep, iv);
  });
  k.matmul(g.dHidden, in.weightHh, g.dhIn, false, false, false);
  k.parallel({B, H}, [&](ValueRange iv) {
    Value reset = k.load(in.isInit, {t, iv[0]});
    Value sum = k.add(k.load(g.dh, iv), k.load(g.dhIn, iv));
    k.store(k.zeroIf(reset, sum), g.dh, iv);
  });
}

/// The block's share of the gradients, from the gradients of its input
/// projection `dInput` ([len, B, 3H]), of the n part of its hidden
/// projection `dHn` ([len, B, H]) and the masked states entering its steps.
template <typename OpTy>
static void emitBlockGradients(KernelBuilder &k, const GRUInputs &in, OpTy op,
                               const GradScratch &g, Value start, int64_t len,
                               Value dInput, Value dHn) {
  int64_t H = in.H;
  Value dI = k.flatten(dInput);
  Value dN = k.flatten(dHn);
  Value hIn = k.flatten(k.leading(g.hIn, len));
  Value gradX = k.flatten(k.steps(op.getGradX(), start, len));
  Value x = k.flatten(k.steps(in.x, start, len));
  k.matmul(dI, in.weightIh, gradX, false, false, false);
  k.matmul(dI, x, op.getGradWeightIh(), true, false, true);
  Value dIrz = k.columns(dI, 0, 2 * H);
  Value gradWhhRz = k.rows(op.getGradWeightHh(), 0, 2 * H);
  Value gradWhhN = k.rows(op.getGradWeightHh(), 2 * H, H);
  k.matmul(dIrz, hIn, gradWhhRz, true, false, true);
  k.matmul(dN, hIn, gradWhhN, true, false, true);
  Value gradBiasIh = k.row(op.getGradBiasIh());
  Value gradBiasHhN = k.columns(k.row(op.getGradBiasHh()), 2 * H, H);
  k.addColumnSums(dI, g.ones, gradBiasIh);
  k.addColumnSums(dN, g.ones, gradBiasHhN);
}

/// Differentiates steps [first, first + len), block by block, last first;
/// `gates` and `hnProj` hold those steps ([len, B, X]: the saved values, or
/// the replay scratch of a chunk).
template <typename OpTy>
static void emitGradSteps(KernelBuilder &k, const GRUInputs &in, OpTy op,
                          const GradScratch &g, Value first, int64_t len,
                          Value gates, Value hnProj) {
  k.forBlocks(first, len, in.P, /*reverse=*/true,
              [&](Value start, Value offset, int64_t blockLen) {
                k.forBlockSteps(start, offset, blockLen, /*reverse=*/true,
                                [&](Value t, Value j, Value i) {
                                  emitGradStep(
                                      k, in, op, g, t, k.step(gates, j),
                                      k.step(hnProj, j), k.step(g.hIn, i));
                                });
                emitBlockGradients(k, in, op, g, start, blockLen,
                                   k.steps(gates, offset, blockLen),
                                   k.steps(hnProj, offset, blockLen));
              });
}

/// Emits the backward of either kernel around `emitChunk(first, len)`,
/// which emits the backward of one chunk, last chunk first.
template <typename OpTy>
static void
emitBackward(KernelBuilder &k, const GRUInputs &in, OpTy op,
             const GradScratch &g, int64_t chunk,
             function_ref<void(Value first, int64_t len)> emitChunk) {
  k.copy(op.getGradHN(), g.dh);
  k.zero(op.getGradWeightIh());
  k.zero(op.getGradWeightHh());
  k.zero(op.getGradBiasIh());
  k.zero(op.getGradBiasHh());
  k.forChunks(in.T, chunk, /*reverse=*/true, emitChunk);
  k.copy(g.dh, op.getGradH0());
  // The r and z parts of the two projections share their pre-activations.
  Value biasIhRz = k.columns(k.row(op.getGradBiasIh()), 0, 2 * in.H);
  Value biasHhRz = k.columns(k.row(op.getGradBiasHh()), 0, 2 * in.H);
  k.copy(biasIhRz, biasHhRz);
}

static void emitGRUBwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<GRUBwdOp>(operation);
  GRUInputs in = GRUInputs::of(op);
  GradScratch g(k, in);
  emitBackward(k, in, op, g, in.T, [&](Value first, int64_t len) {
    emitGradSteps(k, in, op, g, first, len, op.getGates(), op.getHnProj());
  });
}

static void emitGRUChunkedBwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<GRUChunkedBwdOp>(operation);
  GRUInputs in = GRUInputs::of(op);
  int64_t chunk = op.getChunk();
  // K steps of replay scratch, reused chunk after chunk.
  Value gates = k.alloc({chunk, in.B, 3 * in.H}, "gates");
  Value hnProj = k.alloc({chunk, in.B, in.H}, "hn_proj");
  StepScratch s(k, in, /*replay=*/true);
  GradScratch g(k, in);
  emitBackward(k, in, op, g, chunk, [&](Value first, int64_t len) {
    // Replay the chunk from the states in y ...
    emitReplay(k, in, s, op.getY(), first, len, gates, hnProj);
    // ... and differentiate it.
    emitGradSteps(k, in, op, g, first, len, gates, hnProj);
  });
}

void mlir::rnn::attachGRULowering(MLIRContext &context) {
  GRUCellAttr::attachInterface<PhaseLowering<
      GRUCellAttr, emitGRUFwd, emitGRUBwd, emitGRUChunkedBwd, emitGRUReplay>>(
      context);
}
