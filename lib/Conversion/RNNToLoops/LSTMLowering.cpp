//===- LSTMLowering.cpp - rnn.lstm_fwd / rnn.lstm_bwd to loops ------------===//
//
// Loops of the LSTM kernels on buffers. Forward, per layer:
//
//   xproj[T*B, 4H] = x[T*B, I] W_ih^T                      (one GEMM)
//   for t:  h, c = reset[t] ? 0 : h, c                     (state in scratch)
//           pre[B, 4H] = h W_hh^T                          (GEMM)
//           i, f, g, o = act(pre + xproj[t] + b_ih + b_hh)
//           c = f c + i g ; h = o tanh(c)
//           y[t] = h ; saved: gates[t] = (i, f, g, o), cells[t] = c
//
// The recurrent state lives in scratch buffers, not in the saved outputs, so
// that a store of a saved value is only ever read by the backward.
//
// Backward walks t downwards with dh, dc in scratch, writes the gradient of
// the gate pre-activations of every step into dgates[T, B, 4H], and after
// the loop computes grad_x, grad_weight_ih, grad_weight_hh as GEMMs over all
// steps and the bias gradients as column sums (equal for b_ih and b_hh).
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
/// What the forward steps read and write. The forward kernel keeps the
/// state in scratch and writes everything; the replay reads the state each
/// step from the saved sequences and writes only the gates. Both run the
/// same operations on the same values, so the gates agree bitwise.
struct LSTMSteps {
  Value x, isInit, h0, c0, weightIh, weightHh, biasIh, biasHh;
  Value y, cells, gates;
  Value hN, cN; // forward only
  bool replay = false;
};
} // namespace

static void emitLSTMSteps(KernelBuilder &k, const LSTMSteps &s) {
  int64_t T = dim(s.x, 0), B = dim(s.x, 1), H = dim(s.weightHh, 1);
  Value xproj = k.alloc({T, B, 4 * H}, "xproj");
  k.matmul(k.flatten(s.x), s.weightIh, k.flatten(xproj),
           /*transA=*/false, /*transB=*/true, /*accumulate=*/false);
  Value h = k.alloc({B, H}, "h"), c = k.alloc({B, H}, "c"),
        pre = k.alloc({B, 4 * H}, "preact");
  if (!s.replay) {
    k.copy(s.h0, h);
    k.copy(s.c0, c);
  }

  k.forTime(T, /*reverse=*/false, [&](Value t) {
    // The state entering step t, after the reset mask.
    Value hPrev = h, cPrev = c;
    if (s.replay) {
      hPrev = k.previous(s.y, s.h0, t);
      cPrev = k.previous(s.cells, s.c0, t);
    }
    k.parallel({B, H}, [&](ValueRange iv) {
      Value reset = k.load(s.isInit, {t, iv[0]});
      k.store(k.zeroIf(reset, k.load(hPrev, iv)), h, iv);
      k.store(k.zeroIf(reset, k.load(cPrev, iv)), c, iv);
    });
    k.matmul(h, s.weightHh, pre, false, true, false);
    k.parallel({B, H}, [&](ValueRange iv) {
      Value b = iv[0];
      SmallVector<Value> cols;
      auto preact = [&](int64_t gate) {
        Value col = k.addIndex(iv[1], gate * H);
        cols.push_back(col);
        Value sum = k.add(k.load(pre, {b, col}), k.load(xproj, {t, b, col}));
        return k.add(sum, k.add(k.load(s.biasIh, col), k.load(s.biasHh, col)));
      };
      Value i = k.sigmoid(preact(0));
      Value f = k.sigmoid(preact(1));
      Value g = k.tanh(preact(2));
      Value o = k.sigmoid(preact(3));
      Value activations[] = {i, f, g, o};
      for (auto [gate, value] : llvm::enumerate(activations))
        k.store(value, s.gates, {t, b, cols[gate]});
      if (s.replay)
        return;
      Value cNew = k.add(k.mul(f, k.load(c, iv)), k.mul(i, g));
      Value hNew = k.mul(o, k.tanh(cNew));
      k.store(cNew, c, iv);
      k.store(hNew, h, iv);
      k.store(hNew, s.y, {t, b, iv[1]});
      k.store(cNew, s.cells, {t, b, iv[1]});
    });
  });
  if (!s.replay) {
    k.copy(h, s.hN);
    k.copy(c, s.cN);
  }
  k.freeScratch();
}

/// Lowers rnn.lstm_fwd or rnn.lstm_replay, which share their operands up
/// to the forward's extra destinations.
template <typename OpTy>
static LogicalResult lowerSteps(Operation *operation, PatternRewriter &rewriter,
                                int64_t vectorWidth) {
  auto op = cast<OpTy>(operation);
  LSTMSteps steps{op.getX(),        op.getIsInit(),   op.getH0(),
                  op.getC0(),       op.getWeightIh(), op.getWeightHh(),
                  op.getBiasIh(),   op.getBiasHh(),   op.getY(),
                  op.getCells(),    op.getGates()};
  if constexpr (std::is_same_v<OpTy, LSTMFwdOp>) {
    steps.hN = op.getHN();
    steps.cN = op.getCN();
  } else {
    steps.replay = true;
  }
  rewriter.setInsertionPoint(op);
  KernelBuilder k(rewriter, op.getLoc(), vectorWidth);
  emitLSTMSteps(k, steps);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult mlir::rnn::lowerLSTMFwd(Operation *op, PatternRewriter &rewriter,
                                      int64_t vectorWidth) {
  return lowerSteps<LSTMFwdOp>(op, rewriter, vectorWidth);
}

LogicalResult mlir::rnn::lowerLSTMReplay(Operation *op,
                                         PatternRewriter &rewriter,
                                         int64_t vectorWidth) {
  return lowerSteps<LSTMReplayOp>(op, rewriter, vectorWidth);
}

LogicalResult mlir::rnn::lowerLSTMBwd(Operation *operation,
                                      PatternRewriter &rewriter,
                                      int64_t vectorWidth) {
  auto op = cast<LSTMBwdOp>(operation);
  int64_t T = dim(op.getX(), 0), B = dim(op.getX(), 1);
  int64_t H = dim(op.getWeightHh(), 1);
  rewriter.setInsertionPoint(op);
  KernelBuilder k(rewriter, op.getLoc(), vectorWidth);
  Value isInit = op.getIsInit(), gates = op.getGates(), cells = op.getCells(),
        gradY = op.getGradY();

  Value dgates = k.alloc({T, B, 4 * H}, "dgates");
  Value dh = k.alloc({B, H}, "dh"), dc = k.alloc({B, H}, "dc"),
        dhIn = k.alloc({B, H}, "dh_in");
  k.copy(op.getGradHN(), dh);
  k.copy(op.getGradCN(), dc);

  k.forTime(T, /*reverse=*/true, [&](Value t) {
    Value cPrev = k.previous(cells, op.getC0(), t);
    k.parallel({B, H}, [&](ValueRange iv) {
      Value b = iv[0];
      Value reset = k.load(isInit, {t, b});
      SmallVector<Value> cols, act;
      for (int64_t gate = 0; gate < 4; ++gate) {
        cols.push_back(k.addIndex(iv[1], gate * H));
        act.push_back(k.load(gates, {t, b, cols.back()}));
      }
      Value i = act[0], f = act[1], g = act[2], o = act[3];
      Value one = k.scalar(1.0);
      Value dhT = k.add(k.load(dh, iv), k.load(gradY, {t, b, iv[1]}));
      Value cIn = k.zeroIf(reset, k.load(cPrev, iv));
      Value tc = k.tanh(k.load(cells, {t, b, iv[1]}));
      Value dO = k.mul(dhT, tc);
      Value dcT = k.add(k.load(dc, iv),
                        k.mul(k.mul(dhT, o), k.sub(one, k.mul(tc, tc))));
      Value dI = k.mul(dcT, g), dG = k.mul(dcT, i), dF = k.mul(dcT, cIn);
      Value dpre[] = {
          k.mul(dI, k.mul(i, k.sub(one, i))),
          k.mul(dF, k.mul(f, k.sub(one, f))),
          k.mul(dG, k.sub(one, k.mul(g, g))),
          k.mul(dO, k.mul(o, k.sub(one, o))),
      };
      for (int64_t gate = 0; gate < 4; ++gate)
        k.store(dpre[gate], dgates, {t, b, cols[gate]});
      k.store(k.zeroIf(reset, k.mul(dcT, f)), dc, iv);
    });
    k.matmul(k.step(dgates, t), op.getWeightHh(), dhIn, false, false, false);
    k.parallel({B, H}, [&](ValueRange iv) {
      Value reset = k.load(isInit, {t, iv[0]});
      k.store(k.zeroIf(reset, k.load(dhIn, iv)), dh, iv);
    });
  });
  k.copy(dh, op.getGradH0());
  k.copy(dc, op.getGradC0());

  // The input and hidden projections share their pre-activations.
  k.projectionGradients({dgates, dgates, op.getX(), op.getWeightIh(),
                         op.getY(), op.getH0(), isInit, op.getGradX(),
                         op.getGradWeightIh(), op.getGradWeightHh(),
                         op.getGradBiasIh(), op.getGradBiasHh()});
  k.freeScratch();
  rewriter.eraseOp(op);
  return success();
}
