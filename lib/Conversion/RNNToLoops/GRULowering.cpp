//===- GRULowering.cpp - GRU kernels to loops -----------------------------===//
//
// The steps of the GRU kernels, on the loops of CellLoops.h. Forward step t
// (the input projection xproj of its block comes from the skeleton; h the
// state step t - 1 left, y[t - 1]):
//
//   pre[B, 3H] = h W_hh^T                                  (GEMM)
//   one kernel, per element (b, j), with r0 = is_init[t, b],
//   h_in = r0 ? 0 : h and hp = r0 ? 0 : pre:
//     r, z = sigmoid(xproj + b_i + hp + b_h)               (gates r, z)
//     hn = hp_n + b_hn ; n = tanh(xproj_n + b_in + r hn)
//     y[t] = h = (1 - z) n + z h_in
//     saved: gates[t] = (r, z, n), hn_proj[t] = hn
//
// (With reset states a kernel before the GEMM selects them into scratch,
// CellLoops.h, and the step reads it unmasked.)
//
// Backward, per block, last first:
//
//   for t in the block, downwards:
//       one kernel: dh' = (is_init[t + 1] ? 0 : dh + dh_in) + grad_y[t]
//               dI[t] = (da_r, da_z, da_n)     gradients of the input
//                                      projection, written over gates[t]
//               dHn[t] = da_n r        the n part of the hidden
//                                      projection's, written over hn_proj[t]
//               hIn[t - p] = reset[t] ? 0 : h[t-1] ; dh = dh' z
//       dh_in = (da_r, da_z, da_n r) W_hh                  (one GEMM)
//
// (With reset states a kernel after the GEMM masks dh + dh_in, and where
// reset[t] the sum goes to the reset state.)
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
                       const StepScratch &s, const StepIO &io) {
    emitRecurrentProduct(k, in, s, io);
    k.parallel(in.stepShape(in.H), [&](ValueRange iv) {
      PreActivations pre(k, in, s, io, iv);
      Value r = k.sigmoid(k.add(pre.input(0), pre.hidden(0)));
      Value z = k.sigmoid(k.add(pre.input(1), pre.hidden(1)));
      Value hn = pre.hidden(2);
      Value n = k.tanh(k.add(pre.input(2), k.mul(r, hn)));
      pre.finish(hn, {r, z, n}, [&](Value hOld) {
        return k.add(k.mul(k.sub(k.scalar(1.0), z), n), k.mul(z, hOld));
      });
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
    emitGradStepWith(
        k, in, io, g, t, saved, hInStep, [&](const GradElement &e) {
          Value r = e.gates[0], z = e.gates[1], n = e.gates[2];
          Value one = e.one, dhT = e.dhT;
          Value dN = k.mul(dhT, k.sub(one, z));
          Value dZ = k.mul(dhT, k.sub(e.hIn, n));
          Value daN = k.mul(dN, k.sub(one, k.mul(n, n)));
          Value daR = k.mul(k.mul(daN, e.hn), k.mul(r, k.sub(one, r)));
          Value daZ = k.mul(dZ, k.mul(z, k.sub(one, z)));
          Value dHn = k.mul(daN, r);
          e.finish({daR, daZ, daN}, dHn, k.mul(dhT, z));
        });
  }
};
} // namespace

void mlir::rnn::attachGRULowering(MLIRContext &context) {
  GRUCellAttr::attachInterface<LoopLowering<GRUCellAttr, GRUCellSteps>>(
      context);
}
