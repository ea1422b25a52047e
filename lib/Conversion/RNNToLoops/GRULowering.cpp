//===- GRULowering.cpp - GRU kernels to loops -----------------------------===//
//
// Loops of the GRU kernels on buffers. Forward, per layer, in chunks of K
// steps (K = T unless the kernel is checkpointed):
//
//   for each chunk [s, s + K):
//     xproj[K*B, 3H] = x[s : s+K] W_ih^T                   (one GEMM)
//     for t in the chunk:
//           h = reset[t] ? 0 : h                           (state in scratch)
//           pre[B, 3H] = h W_hh^T                          (GEMM)
//           r, z = sigmoid(xproj + b_i + pre + b_h)        (gates r, z)
//           hn = pre_n + b_hn ; n = tanh(xproj_n + b_in + r hn)
//           h = (1 - z) n + z h
//           y[t] = h ; saved: gates[t] = (r, z, n), hn_proj[t] = hn
//
// Backward walks t downwards with dh in scratch. Each step writes two
// gradients: of the input projection [B, 3H] (for grad_x, grad_weight_ih,
// grad_bias_ih) and of the hidden projection [B, 3H] (whose n part is scaled
// by r; for grad_weight_hh, grad_bias_hh and the recurrent gradient), and
// turns them at once into the step's share of every gradient. The gates
// and hn_proj it reads come from the forward (rnn.gru_bwd) or, for
// rnn.gru_chunked_bwd, from replaying each chunk from `y` into K-step
// scratch, last chunk first.
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
/// The inputs of a layer, shared by every GRU kernel.
struct GRUInputs {
  Value x, isInit, h0, weightIh, weightHh, biasIh, biasHh;
  int64_t T = 0, B = 0, H = 0;

  template <typename OpTy>
  static GRUInputs of(OpTy op) {
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
    return in;
  }
};

/// Scratch of the forward steps: reset-masked state, recurrent
/// pre-activations, and the input projection of one chunk. A replay passes
/// the buffer it recomputes the gates into as `xproj` (see the LSTM's).
struct StepScratch {
  Value h, pre, xproj;

  StepScratch(KernelBuilder &k, const GRUInputs &in, int64_t chunk,
              Value gates = {})
      : h(k.alloc({in.B, in.H}, "h")),
        pre(k.alloc({in.B, 3 * in.H}, "preact")),
        xproj(gates ? gates : k.alloc({chunk, in.B, 3 * in.H}, "xproj")) {}
};

/// Where one forward step reads its state and writes its results; `y` is
/// null when the step only recomputes the saved values.
struct StepIO {
  Value hPrev;          // [B, H] state entering the step, before the mask
  Value xproj;          // [B, 3H]
  Value gates;          // [B, 3H]
  Value hnProj;         // [B, H]
  Value y;              // [B, H]
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

void mlir::rnn::emitGRUFwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<GRUFwdOp>(operation);
  GRUInputs in = GRUInputs::of(op);
  int64_t chunk = op.getChunk().value_or(in.T);
  StepScratch s(k, in, chunk);
  k.copy(in.h0, s.h);
  k.forChunks(in.T, chunk, /*reverse=*/false, [&](Value start, int64_t len) {
    Value xproj = k.projectChunk(in.x, in.weightIh, s.xproj, start, len);
    k.forTime(len, /*reverse=*/false, [&](Value i) {
      Value t = arith::AddIOp::create(k.builder(), start, i);
      emitStep(k, in, s, t,
               {s.h, k.step(xproj, i), k.step(op.getGates(), t),
                k.step(op.getHnProj(), t), k.step(op.getY(), t)});
    });
  });
  k.copy(s.h, op.getHN());
}

void mlir::rnn::emitGRUReplay(Operation *operation, KernelBuilder &k) {
  auto op = cast<GRUReplayOp>(operation);
  GRUInputs in = GRUInputs::of(op);
  StepScratch s(k, in, in.T, op.getGates());
  Value xproj = k.projectChunk(in.x, in.weightIh, s.xproj, k.index(0), in.T);
  k.forTime(in.T, /*reverse=*/false, [&](Value t) {
    emitStep(k, in, s, t,
             {k.previous(op.getY(), in.h0, t), k.step(xproj, t),
              k.step(op.getGates(), t), k.step(op.getHnProj(), t)});
  });
}

namespace {
/// Scratch of the backward steps.
struct GradScratch {
  Value dh, dhIn, dInput, dHidden, hIn;

  GradScratch(KernelBuilder &k, const GRUInputs &in)
      : dh(k.alloc({in.B, in.H}, "dh")), dhIn(k.alloc({in.B, in.H}, "dh_in")),
        dInput(k.alloc({in.B, 3 * in.H}, "dxproj")),
        dHidden(k.alloc({in.B, 3 * in.H}, "dhproj")),
        hIn(k.alloc({in.B, in.H}, "h_in")) {}
};
} // namespace

/// One backward step t of `op`, reading the step's gates and hn_proj
/// ([B, 3H], [B, H]).
template <typename OpTy>
static void emitGradStep(KernelBuilder &k, const GRUInputs &in, OpTy op,
                         const GradScratch &g, Value t, Value gates,
                         Value hnProj) {
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
    k.store(daR, g.dInput, {b, cols[0]});
    k.store(daZ, g.dInput, {b, cols[1]});
    k.store(daN, g.dInput, {b, cols[2]});
    k.store(daR, g.dHidden, {b, cols[0]});
    k.store(daZ, g.dHidden, {b, cols[1]});
    k.store(k.mul(daN, r), g.dHidden, {b, cols[2]});
    k.store(k.mul(dhT, z), g.dh, iv);
    k.store(hIn, g.hIn, iv);
  });
  k.matmul(g.dHidden, in.weightHh, g.dhIn, false, false, false);
  k.parallel({B, H}, [&](ValueRange iv) {
    Value reset = k.load(in.isInit, {t, iv[0]});
    Value sum = k.add(k.load(g.dh, iv), k.load(g.dhIn, iv));
    k.store(k.zeroIf(reset, sum), g.dh, iv);
  });
  k.stepGradients({g.dInput, g.dHidden, k.step(in.x, t), g.hIn, in.weightIh,
                   k.step(op.getGradX(), t), op.getGradWeightIh(),
                   op.getGradWeightHh(), op.getGradBiasIh(),
                   op.getGradBiasHh()});
}

/// Emits the backward of either kernel around `emitChunk(start, len)`,
/// which emits the backward steps of one chunk, last chunk first.
template <typename OpTy>
static void emitBackward(
    KernelBuilder &k, const GRUInputs &in, OpTy op, const GradScratch &g,
    int64_t chunk, function_ref<void(Value start, int64_t len)> emitChunk) {
  k.copy(op.getGradHN(), g.dh);
  k.zero(op.getGradWeightIh());
  k.zero(op.getGradWeightHh());
  k.zero(op.getGradBiasIh());
  k.zero(op.getGradBiasHh());
  k.forChunks(in.T, chunk, /*reverse=*/true, emitChunk);
  k.copy(g.dh, op.getGradH0());
}

void mlir::rnn::emitGRUBwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<GRUBwdOp>(operation);
  GRUInputs in = GRUInputs::of(op);
  GradScratch g(k, in);
  emitBackward(k, in, op, g, in.T, [&](Value start, int64_t len) {
    k.forTime(len, /*reverse=*/true, [&](Value t) {
      emitGradStep(k, in, op, g, t, k.step(op.getGates(), t),
                   k.step(op.getHnProj(), t));
    });
  });
}

void mlir::rnn::emitGRUChunkedBwd(Operation *operation, KernelBuilder &k) {
  auto op = cast<GRUChunkedBwdOp>(operation);
  GRUInputs in = GRUInputs::of(op);
  int64_t chunk = op.getChunk();
  // K steps of replay scratch, reused chunk after chunk.
  Value gates = k.alloc({chunk, in.B, 3 * in.H}, "gates");
  Value hnProj = k.alloc({chunk, in.B, in.H}, "hn_proj");
  StepScratch s(k, in, chunk, gates);
  GradScratch g(k, in);
  emitBackward(k, in, op, g, chunk, [&](Value start, int64_t len) {
    // Replay the chunk from the states in y ...
    Value xproj = k.projectChunk(in.x, in.weightIh, s.xproj, start, len);
    k.forTime(len, /*reverse=*/false, [&](Value i) {
      Value t = arith::AddIOp::create(k.builder(), start, i);
      emitStep(k, in, s, t,
               {k.previous(op.getY(), in.h0, t), k.step(xproj, i),
                k.step(gates, i), k.step(hnProj, i)});
    });
    // ... and differentiate it.
    k.forTime(len, /*reverse=*/true, [&](Value i) {
      Value t = arith::AddIOp::create(k.builder(), start, i);
      emitGradStep(k, in, op, g, t, k.step(gates, i), k.step(hnProj, i));
    });
  });
}
