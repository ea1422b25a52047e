//===- GRULowering.cpp - rnn.gru_fwd / rnn.gru_bwd to loops ---------------===//
//
// Loops of the GRU kernels on buffers. Forward, per layer:
//
//   xproj[T*B, 3H] = x[T*B, I] W_ih^T                      (one GEMM)
//   for t:  h = reset[t] ? 0 : h                           (state in scratch)
//           pre[B, 3H] = h W_hh^T                          (GEMM)
//           r, z = sigmoid(xproj + b_i + pre + b_h)        (gates r, z)
//           hn = pre_n + b_hn ; n = tanh(xproj_n + b_in + r hn)
//           h = (1 - z) n + z h
//           y[t] = h ; saved: gates[t] = (r, z, n), hn_proj[t] = hn
//
// Backward walks t downwards with dh in scratch and writes two gradient
// sequences: d(input projection) [T, B, 3H] for grad_x, grad_weight_ih and
// grad_bias_ih, and d(hidden projection) [T, B, 3H] (whose n part is scaled
// by r) for grad_weight_hh, grad_bias_hh and the recurrent gradient.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "rnn/Dialect/RNNOps.h"

using namespace mlir;
using namespace mlir::rnn;

static int64_t dim(Value v, unsigned i) {
  return cast<MemRefType>(v.getType()).getDimSize(i);
}

namespace {
/// What the forward steps read and write; see LSTMSteps in LSTMLowering.cpp.
struct GRUSteps {
  Value x, isInit, h0, weightIh, weightHh, biasIh, biasHh;
  Value y, gates, hnProj;
  Value hN; // forward only
  bool replay = false;
};
} // namespace

static void emitGRUSteps(KernelBuilder &k, const GRUSteps &s) {
  int64_t T = dim(s.x, 0), B = dim(s.x, 1), H = dim(s.weightHh, 1);
  Value xproj = k.alloc({T, B, 3 * H}, "xproj");
  k.matmul(k.flatten(s.x), s.weightIh, k.flatten(xproj),
           /*transA=*/false, /*transB=*/true, /*accumulate=*/false);
  Value h = k.alloc({B, H}, "h"), pre = k.alloc({B, 3 * H}, "preact");
  if (!s.replay)
    k.copy(s.h0, h);

  k.forTime(T, /*reverse=*/false, [&](Value t) {
    Value hPrev = s.replay ? k.previous(s.y, s.h0, t) : h;
    k.parallel({B, H}, [&](ValueRange iv) {
      Value reset = k.load(s.isInit, {t, iv[0]});
      k.store(k.zeroIf(reset, k.load(hPrev, iv)), h, iv);
    });
    k.matmul(h, s.weightHh, pre, false, true, false);
    k.parallel({B, H}, [&](ValueRange iv) {
      Value b = iv[0];
      Value cols[] = {iv[1], k.addIndex(iv[1], H), k.addIndex(iv[1], 2 * H)};
      auto inputPart = [&](int gate) {
        return k.add(k.load(xproj, {t, b, cols[gate]}),
                     k.load(s.biasIh, cols[gate]));
      };
      auto hiddenPart = [&](int gate) {
        return k.add(k.load(pre, {b, cols[gate]}),
                     k.load(s.biasHh, cols[gate]));
      };
      Value r = k.sigmoid(k.add(inputPart(0), hiddenPart(0)));
      Value z = k.sigmoid(k.add(inputPart(1), hiddenPart(1)));
      Value hn = hiddenPart(2);
      Value n = k.tanh(k.add(inputPart(2), k.mul(r, hn)));
      k.store(hn, s.hnProj, {t, b, iv[1]});
      Value activations[] = {r, z, n};
      for (auto [gate, value] : llvm::enumerate(activations))
        k.store(value, s.gates, {t, b, cols[gate]});
      if (s.replay)
        return;
      Value hOld = k.load(h, iv);
      Value hNew = k.add(k.mul(k.sub(k.scalar(1.0), z), n), k.mul(z, hOld));
      k.store(hNew, h, iv);
      k.store(hNew, s.y, {t, b, iv[1]});
    });
  });
  if (!s.replay)
    k.copy(h, s.hN);
  k.freeScratch();
}

/// Lowers rnn.gru_fwd or rnn.gru_replay (see lowerSteps of the LSTM).
template <typename OpTy>
static LogicalResult lowerSteps(Operation *operation, PatternRewriter &rewriter,
                                int64_t vectorWidth) {
  auto op = cast<OpTy>(operation);
  GRUSteps steps{op.getX(),      op.getIsInit(), op.getH0(),
                 op.getWeightIh(), op.getWeightHh(), op.getBiasIh(),
                 op.getBiasHh(), op.getY(),      op.getGates(),
                 op.getHnProj()};
  if constexpr (std::is_same_v<OpTy, GRUFwdOp>)
    steps.hN = op.getHN();
  else
    steps.replay = true;
  rewriter.setInsertionPoint(op);
  KernelBuilder k(rewriter, op.getLoc(), vectorWidth);
  emitGRUSteps(k, steps);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult mlir::rnn::lowerGRUFwd(Operation *op, PatternRewriter &rewriter,
                                     int64_t vectorWidth) {
  return lowerSteps<GRUFwdOp>(op, rewriter, vectorWidth);
}

LogicalResult mlir::rnn::lowerGRUReplay(Operation *op,
                                        PatternRewriter &rewriter,
                                        int64_t vectorWidth) {
  return lowerSteps<GRUReplayOp>(op, rewriter, vectorWidth);
}

LogicalResult mlir::rnn::lowerGRUBwd(Operation *operation,
                                     PatternRewriter &rewriter,
                                      int64_t vectorWidth) {
  auto op = cast<GRUBwdOp>(operation);
  int64_t T = dim(op.getX(), 0), B = dim(op.getX(), 1);
  int64_t H = dim(op.getWeightHh(), 1);
  rewriter.setInsertionPoint(op);
  KernelBuilder k(rewriter, op.getLoc(), vectorWidth);
  Value isInit = op.getIsInit(), gates = op.getGates(),
        hnProj = op.getHnProj(), gradY = op.getGradY();

  Value dInput = k.alloc({T, B, 3 * H}, "dxproj"),
        dHidden = k.alloc({T, B, 3 * H}, "dhproj");
  Value dh = k.alloc({B, H}, "dh"), dhIn = k.alloc({B, H}, "dh_in");
  k.copy(op.getGradHN(), dh);

  k.forTime(T, /*reverse=*/true, [&](Value t) {
    Value hPrev = k.previous(op.getY(), op.getH0(), t);
    k.parallel({B, H}, [&](ValueRange iv) {
      Value b = iv[0];
      Value reset = k.load(isInit, {t, b});
      Value cols[] = {iv[1], k.addIndex(iv[1], H), k.addIndex(iv[1], 2 * H)};
      Value r = k.load(gates, {t, b, cols[0]});
      Value z = k.load(gates, {t, b, cols[1]});
      Value n = k.load(gates, {t, b, cols[2]});
      Value hn = k.load(hnProj, {t, b, iv[1]});
      Value hIn = k.zeroIf(reset, k.load(hPrev, iv));
      Value one = k.scalar(1.0);
      Value dhT = k.add(k.load(dh, iv), k.load(gradY, {t, b, iv[1]}));
      Value dN = k.mul(dhT, k.sub(one, z));
      Value dZ = k.mul(dhT, k.sub(hIn, n));
      Value daN = k.mul(dN, k.sub(one, k.mul(n, n)));
      Value daR = k.mul(k.mul(daN, hn), k.mul(r, k.sub(one, r)));
      Value daZ = k.mul(dZ, k.mul(z, k.sub(one, z)));
      k.store(daR, dInput, {t, b, cols[0]});
      k.store(daZ, dInput, {t, b, cols[1]});
      k.store(daN, dInput, {t, b, cols[2]});
      k.store(daR, dHidden, {t, b, cols[0]});
      k.store(daZ, dHidden, {t, b, cols[1]});
      k.store(k.mul(daN, r), dHidden, {t, b, cols[2]});
      k.store(k.mul(dhT, z), dh, iv);
    });
    k.matmul(k.step(dHidden, t), op.getWeightHh(), dhIn, false, false, false);
    k.parallel({B, H}, [&](ValueRange iv) {
      Value reset = k.load(isInit, {t, iv[0]});
      Value sum = k.add(k.load(dh, iv), k.load(dhIn, iv));
      k.store(k.zeroIf(reset, sum), dh, iv);
    });
  });
  k.copy(dh, op.getGradH0());

  k.projectionGradients({dInput, dHidden, op.getX(), op.getWeightIh(),
                         op.getY(), op.getH0(), isInit, op.getGradX(),
                         op.getGradWeightIh(), op.getGradWeightHh(),
                         op.getGradBiasIh(), op.getGradBiasHh()});
  k.freeScratch();
  rewriter.eraseOp(op);
  return success();
}
