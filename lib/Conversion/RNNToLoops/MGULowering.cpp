//===- MGULowering.cpp - minimal gated unit kernels to loops --------------===//
//
// The steps of the MGU kernels (rnn.mgu), on the loops of CellLoops.h.
// Forward step t (the input projection xproj of its block comes from the
// skeleton; h the state step t - 1 left, y[t - 1]):
//
//   pre[B, 2H] = h W_hh^T                                  (GEMM)
//   one kernel, per element (b, j), with r = is_init[t, b],
//   h_in = r ? 0 : h and hp = r ? 0 : pre:
//     f = sigmoid(xproj_f + b_if + hp_f + b_hf)
//     hn = hp_n + b_hn ; n = tanh(xproj_n + b_in + f hn)
//     y[t] = h = (1 - f) h_in + f n
//     saved: gates[t] = (f, n), hn_proj[t] = hn
//
// Backward, per block, last first:
//
//   for t in the block, downwards:
//       one kernel: dh' = (is_init[t + 1] ? 0 : dh + dh_in) + grad_y[t]
//               da_n = dh' f (1 - n^2)
//               da_f = (dh' (n - hIn) + da_n hn) f (1 - f)
//               dI[t] = (da_f, da_n)   gradients of the input projection,
//                                      written over gates[t]
//               dHn[t] = da_n f        the n part of the hidden
//                                      projection's, written over hn_proj[t]
//               hIn[t - p] = reset[t] ? 0 : h[t-1] ; dh = dh' (1 - f)
//       dh_in = (da_f, da_n f) W_hh                        (one GEMM)
//
// and the block gradients of HiddenProjectionCell.h with G = 2.
//
//===----------------------------------------------------------------------===//

#include "HiddenProjectionCell.h"

using namespace mlir;
using namespace mlir::rnn;

namespace {
struct MGUCellSteps : HiddenProjectionCell<2> {
  /// One forward step t.
  static void emitStep(KernelBuilder &k, const LayerInputs &in,
                       const StepScratch &s, const StepIO &io) {
    emitRecurrentProduct(k, in, s, io);
    k.parallel(in.stepShape(in.H), [&](ValueRange iv) {
      PreActivations pre(k, in, s, io, iv);
      Value f = k.sigmoid(k.add(pre.input(0), pre.hidden(0)));
      Value hn = pre.hidden(1);
      Value n = k.tanh(k.add(pre.input(1), k.mul(f, hn)));
      pre.finish(hn, {f, n}, [&](Value hOld) {
        return k.add(k.mul(k.sub(k.scalar(1.0), f), hOld), k.mul(f, n));
      });
    });
  }

  /// One backward step t, reading the step's gates and hn_proj ([B, 2H],
  /// [B, H]) and overwriting them with dI and dHn; writes the masked state
  /// entering the step to `hInStep` [B, H].
  static void emitGradStep(KernelBuilder &k, const LayerInputs &in,
                           const BackwardIO &io, const GradScratch &g, Value t,
                           ArrayRef<Value> saved, ArrayRef<Value>,
                           Value hInStep) {
    emitGradStepWith(
        k, in, io, g, t, saved, hInStep, [&](const GradElement &e) {
          Value f = e.gates[0], n = e.gates[1];
          Value one = e.one, dhT = e.dhT;
          Value daN = k.mul(k.mul(dhT, f), k.sub(one, k.mul(n, n)));
          Value dF = k.add(k.mul(dhT, k.sub(n, e.hIn)), k.mul(daN, e.hn));
          Value daF = k.mul(dF, k.mul(f, k.sub(one, f)));
          Value dHn = k.mul(daN, f);
          e.finish({daF, daN}, dHn, k.mul(dhT, k.sub(one, f)));
        });
  }
};
} // namespace

void mlir::rnn::attachMGULowering(MLIRContext &context) {
  MGUCellAttr::attachInterface<LoopLowering<MGUCellAttr, MGUCellSteps>>(
      context);
}
