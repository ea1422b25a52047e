//===- GRULowering.cpp - GRU kernels to loops -----------------------------===//
//
// The steps of the GRU kernels, on the loops of CellLoops.h. Forward step t
// (the input projection xproj of its block comes from the skeleton):
//
//   h = reset[t] ? 0 : h                                   (state in scratch)
//   pre[B, 3H] = h W_hh^T                                  (GEMM)
//   r, z = sigmoid(xproj + b_i + pre + b_h)                (gates r, z)
//   hn = pre_n + b_hn ; n = tanh(xproj_n + b_in + r hn)
//   h = (1 - z) n + z h
//   y[t] = h ; saved: gates[t] = (r, z, n), hn_proj[t] = hn
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
//
// and the block gradients of HiddenProjectionCell.h with G = 3. The only
// state is h, whose steps are y: a chunked backward replays each chunk from
// y alone.
//
//===----------------------------------------------------------------------===//

#include "HiddenProjectionCell.h"

using namespace mlir;
using namespace mlir::rnn;

namespace {
struct GRUCellSteps : HiddenProjectionCell<3> {
  /// One forward step t.
  static void emitStep(KernelBuilder &k, const LayerInputs &in,
                       const StepScratch &s, Value t, const StepIO &io) {
    Value h = s.states[0], gates = io.saved[0], hnProj = io.saved[1];
    emitRecurrentProduct(k, in, s, t, io);
    k.parallel({in.B, in.H}, [&](ValueRange iv) {
      PreActivations pre(k, in, s, io, iv);
      Value b = pre.b;
      ArrayRef<Value> cols = pre.cols;
      Value r = k.sigmoid(k.add(pre.input(0), pre.hidden(0)));
      Value z = k.sigmoid(k.add(pre.input(1), pre.hidden(1)));
      Value hn = pre.hidden(2);
      Value n = k.tanh(k.add(pre.input(2), k.mul(r, hn)));
      k.store(hn, hnProj, iv);
      Value activations[] = {r, z, n};
      for (auto [gate, value] : llvm::enumerate(activations))
        k.store(value, gates, {b, cols[gate]});
      if (!io.y)
        return;
      Value hOld = k.load(h, iv);
      Value hNew = k.add(k.mul(k.sub(k.scalar(1.0), z), n), k.mul(z, hOld));
      k.store(hNew, h, iv);
      k.store(hNew, io.y, iv);
    });
  }

  /// One backward step t, reading the step's gates and hn_proj ([B, 3H],
  /// [B, H]) and overwriting them with the gradients of the input
  /// projection and the n part of the hidden projection's; writes the
  /// masked state entering the step to `hInStep` [B, H].
  static void emitGradStep(KernelBuilder &k, const LayerInputs &in,
                           const BackwardIO &io, const GradScratch &g, Value t,
                           ArrayRef<Value> saved, ArrayRef<Value>,
                           Value hInStep) {
    int64_t B = in.B, H = in.H;
    Value gates = saved[0], hnProj = saved[1];
    Value hPrev = k.previous(io.y, in.states[0], t);
    k.parallel({B, H}, [&](ValueRange iv) {
      Value b = iv[0];
      Value reset = k.load(in.isInit, {t, b});
      SmallVector<Value> cols = gateColumns(k, H, iv[1]);
      Value r = k.load(gates, {b, cols[0]});
      Value z = k.load(gates, {b, cols[1]});
      Value n = k.load(gates, {b, cols[2]});
      Value hn = k.load(hnProj, iv);
      Value hIn = k.zeroIf(reset, k.load(hPrev, iv));
      Value one = k.scalar(1.0);
      Value dhT = k.add(k.load(g.dh, iv), k.load(io.gradY, {t, b, iv[1]}));
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
    emitRecurrentGradient(k, in, g, t);
  }
};
} // namespace

void mlir::rnn::attachGRULowering(MLIRContext &context) {
  GRUCellAttr::attachInterface<LoopLowering<GRUCellAttr, GRUCellSteps>>(
      context);
}
