//===- HiddenProjectionCell.h - GRU-like cells' shared steps ----*- C++ -*-===//
//
// What the loops of CellLoops.h need from a cell whose only state is h and
// whose last gate n reads the hidden projection hn = W_hn h + b_hn through
// a gate (the GRU's r, the MGU's f), besides its forward and backward steps:
// scratch, block gradients, and the set-up and finish of the gradients; and
// the parts of those steps such cells share (the masked state and its
// recurrent product, the gates' pre-activations and what an element of a
// step loads and stores, the recurrent gradient).
// With G gates, the forward saves gates [T, B, G*H] and hn_proj [T, B, H];
// a backward step overwrites them with the gradients of the input
// projection dI and of the n part of the hidden projection dHn, and writes
// the masked state entering the step to h_in. Per block:
//
//   grad_x[p : p+P] = dI W_ih ; grad_W_ih += dI^T x[p : p+P]
//   grad_W_hh[0:(G-1)H] += dI[:, 0:(G-1)H]^T hIn
//   grad_W_hh[(G-1)H:G*H] += dHn^T hIn
//   grad_b_ih += ones^T dI ; grad_b_hh[(G-1)H:G*H] += ones^T dHn
//
// and at the end grad_b_hh[0:(G-1)H] = grad_b_ih[0:(G-1)H] (the gates
// before n share their pre-activations between the two projections).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_LIB_CONVERSION_RNNTOLOOPS_HIDDENPROJECTIONCELL_H
#define RNN_LIB_CONVERSION_RNNTOLOOPS_HIDDENPROJECTIONCELL_H

#include "CellLoops.h"

namespace mlir {
namespace rnn {

template <int64_t G> struct HiddenProjectionCell {
  static constexpr int64_t kNumGates = G;

  /// No state besides h.
  static constexpr std::array<StringLiteral, 0> kStateRoles = {};

  using StepScratch = GateStepScratch<G>;

  /// Column `col` of each of the G gates: col, col + H, ..., col + (G-1)H.
  static SmallVector<Value> gateColumns(KernelBuilder &k, int64_t hidden,
                                        Value col) {
    SmallVector<Value> cols = {col};
    for (int64_t gate = 1; gate < G; ++gate)
      cols.push_back(k.addIndex(col, gate * hidden));
    return cols;
  }

  /// The first part of a forward step: its recurrent pre-activations
  /// pre = h W_hh^T of the state entering it.
  static void emitRecurrentProduct(KernelBuilder &k, const LayerInputs &in,
                                   const StepScratch &s, const StepIO &io) {
    k.matmul(io.recurrentOperand(), in.weightHh, s.pre, false, true, false);
  }

  /// The pre-activations of one element (b, j) of a forward step, per gate:
  /// the input part xproj + b_ih and the hidden part pre + b_hh (pre
  /// zero where the step applies a reset).
  struct PreActivations {
    KernelBuilder &k;
    const LayerInputs &in;
    const StepScratch &s;
    const StepIO &io;
    SmallVector<Value> iv;
    Value b, reset;
    SmallVector<Value> cols;

    PreActivations(KernelBuilder &k, const LayerInputs &in,
                   const StepScratch &s, const StepIO &io, ValueRange iv)
        : k(k), in(in), s(s), io(io), iv(iv), b(iv[0]),
          reset(io.reset(k, in, b)), cols(gateColumns(k, in.H, iv[1])) {}

    Value input(int gate) const {
      return k.add(k.load(io.xproj, {b, cols[gate]}),
                   k.load(in.biasIh, cols[gate]));
    }
    Value hidden(int gate) const {
      return k.add(io.afterReset(k, reset, k.load(s.pre, {b, cols[gate]})),
                   k.load(in.biasHh, cols[gate]));
    }

    /// Saves the element's hidden projection `hn` and its G activated
    /// gates and, unless the step is a replay (no y), sets h and y to
    /// `update(h)`.
    void finish(Value hn, ArrayRef<Value> activations,
                function_ref<Value(Value)> update) const {
      k.store(hn, io.saved[1], iv);
      for (auto [gate, value] : llvm::enumerate(activations))
        k.store(value, io.saved[0], {b, cols[gate]});
      if (!io.y)
        return;
      io.storeH(k, update(io.enter(k, 0, reset, iv)), iv);
    }
  };

  /// Scratch of the backward steps: the recurrent gradients (dh through the
  /// state update, dh_in the GEMM's), the hidden projection's gradients of
  /// one step (a GEMM operand, rounded by the step's kernel under a
  /// narrower storage type), and the masked states entering the steps of
  /// one block.
  struct GradScratch {
    Value dh, dhIn, dHidden, hIn, ones;

    GradScratch(KernelBuilder &k, const LayerInputs &in)
        : dh(k.alloc(in.stepShape(in.H), "dh")),
          dhIn(k.alloc(in.stepShape(in.H), "dh_in")),
          dHidden(k.allocGemmOperand(in.stepShape(G * in.H), "dhproj")),
          hIn(k.alloc(in.blockShape(in.H), "h_in")),
          ones(k.allocOnes(k.mulSize(in.P, in.B))) {}
  };

  /// One element (b, j) of backward step t: the step's saved gates and hn,
  /// the masked state entering it, and the gradient reaching its h.
  struct GradElement {
    KernelBuilder &k;
    const GradScratch &g;
    ArrayRef<Value> saved;
    Value hInStep;
    SmallVector<Value> iv;
    Value b;
    SmallVector<Value> cols;
    SmallVector<Value> gates;
    Value hn, hIn, one, dhT;

    GradElement(KernelBuilder &k, const LayerInputs &in, const BackwardIO &io,
                const GradScratch &g, Value t, ArrayRef<Value> saved,
                Value hPrev, Value hInStep, Value gradY, ValueRange iv)
        : k(k), g(g), saved(saved), hInStep(hInStep), iv(iv), b(iv[0]) {
      Value reset = k.load(in.isInit, {t, b});
      cols = gateColumns(k, in.H, iv[1]);
      for (int64_t gate = 0; gate < G; ++gate)
        gates.push_back(k.load(saved[0], {b, cols[gate]}));
      hn = k.load(saved[1], iv);
      hIn = in.enterState(k, 0, reset, t, iv, k.load(hPrev, iv));
      one = k.scalar(1.0);
      // The gradient reaching h from step t + 1.
      Value dh = k.load(g.dh, iv);
      if (in.resetsToZero())
        dh = k.zeroIf(in.resetAfter(k, t, b), k.add(dh, k.load(g.dhIn, iv)));
      dhT = k.add(dh, k.load(gradY, iv));
    }

    /// Overwrites the saved gates with dI (the G gates' input-projection
    /// gradients) and hn with dHn, sets the hidden projection's gradient
    /// (dI of the gates before n, then dHn), the gradient through the
    /// state update `dh`, and the masked state entering the step.
    void finish(ArrayRef<Value> dI, Value dHn, Value dh) const {
      for (auto [gate, value] : llvm::enumerate(dI))
        k.store(value, saved[0], {b, cols[gate]});
      k.store(dHn, saved[1], iv);
      // dHidden is only the recurrent GEMM's operand: rounded here.
      for (int64_t gate = 0; gate + 1 < G; ++gate)
        k.storeGemmOperand(dI[gate], g.dHidden, {b, cols[gate]});
      k.storeGemmOperand(dHn, g.dHidden, {b, cols[G - 1]});
      k.store(dh, g.dh, iv);
      k.store(hIn, hInStep, iv);
    }
  };

  /// Backward step t of the cell, `element` giving each element's
  /// gradients (GradElement::finish), then the recurrent gradient.
  static void
  emitGradStepWith(KernelBuilder &k, const LayerInputs &in,
                   const BackwardIO &io, const GradScratch &g, Value t,
                   ArrayRef<Value> saved, Value hInStep,
                   function_ref<void(const GradElement &)> element) {
    Value hPrev = k.previous(io.y, in.states[0], t);
    Value gradY = k.step(io.gradY, t);
    k.parallel(in.stepShape(in.H), [&](ValueRange iv) {
      element(GradElement(k, in, io, g, t, saved, hPrev, hInStep, gradY, iv));
    });
    emitRecurrentGradient(k, in, io, g, t);
  }

  /// The last part of backward step t, once g.dh holds the gradient
  /// through the state update and g.dHidden the hidden projection's:
  /// dh_in = dHidden W_hh, and with reset states dh = reset[t] ? 0 : dh +
  /// dh_in (where reset[t], the sum goes to the reset state); otherwise
  /// the next step's kernel masks dh + dh_in.
  static void emitRecurrentGradient(KernelBuilder &k, const LayerInputs &in,
                                    const BackwardIO &io, const GradScratch &g,
                                    Value t) {
    k.matmul(g.dHidden, in.weightHh, g.dhIn, false, false, false);
    if (in.resetsToZero())
      return;
    k.parallel(in.stepShape(in.H), [&](ValueRange iv) {
      Value reset = k.load(in.isInit, {t, iv[0]});
      Value sum = k.add(k.load(g.dh, iv), k.load(g.dhIn, iv));
      k.store(in.carryGradient(k, io, 0, reset, t, iv, sum), g.dh, iv);
    });
  }

  /// The block's share of the gradients, from dI and dHn of steps
  /// [offset, offset + len) of the saved gates and hn_proj and the masked
  /// states entering them.
  static void emitBlockGradients(KernelBuilder &k, const LayerInputs &in,
                                 const BackwardIO &io, const GradScratch &g,
                                 Value start, OpFoldResult len,
                                 ArrayRef<Value> saved, Value offset) {
    int64_t gated = (G - 1) * in.H;
    Value dI = k.flatten(k.steps(saved[0], offset, len));
    Value dN = k.flatten(k.steps(saved[1], offset, len));
    Value hIn = k.flatten(k.leading(g.hIn, len));
    Value gradX = k.flatten(k.steps(io.gradX, start, len));
    Value x = k.flatten(k.steps(in.x, start, len));
    k.matmul(dI, in.weightIh, gradX, false, false, false);
    k.matmul(dI, x, io.gradWeightIh, true, false, true);
    Value dIGated = k.columns(dI, 0, gated);
    Value gradWhhGated = k.rows(io.gradWeightHh, 0, gated);
    Value gradWhhN = k.rows(io.gradWeightHh, gated, in.H);
    k.matmul(dIGated, hIn, gradWhhGated, true, false, true);
    k.matmul(dN, hIn, gradWhhN, true, false, true);
    Value gradBiasIh = k.row(io.gradBiasIh);
    Value gradBiasHhN = k.columns(k.row(io.gradBiasHh), gated, in.H);
    k.addColumnSums(dI, g.ones, gradBiasIh);
    k.addColumnSums(dN, g.ones, gradBiasHhN);
  }

  /// One kernel: the gradient reaching the last step, the weight and bias
  /// gradients zeroed (they are sums over the blocks), the ones.
  static void beginBackward(KernelBuilder &k, const LayerInputs &,
                            KernelOpInterface op, const GradScratch &g) {
    Value dst[] = {g.dh,
                   g.dhIn,
                   op.get(kRoleGradWeightIh),
                   op.get(kRoleGradWeightHh),
                   op.get(kRoleGradBiasIh),
                   op.get(kRoleGradBiasHh),
                   g.ones};
    Value gradHn = op.get("grad_h_n");
    k.parallelEach(k.shapesOf(dst), [&](unsigned i, ValueRange iv) {
      k.store(i == 0 ? k.load(gradHn, iv) : k.scalar(i == 6 ? 1.0 : 0.0),
              dst[i], iv);
    });
  }

  /// One kernel: the gradient of the initial state, and the part of
  /// grad_b_hh the gates before n share with grad_b_ih.
  static void endBackward(KernelBuilder &k, const LayerInputs &in,
                          KernelOpInterface op, const GradScratch &g) {
    int64_t gated = (G - 1) * in.H;
    Value biasIh = k.columns(k.row(op.get(kRoleGradBiasIh)), 0, gated);
    Value biasHh = k.columns(k.row(op.get(kRoleGradBiasHh)), 0, gated);
    Value gradH0 = op.get("grad_h0");
    k.parallelEach(k.shapesOf({gradH0, biasHh}), [&](unsigned i,
                                                     ValueRange iv) {
      if (i == 1)
        return k.store(k.load(biasIh, iv), biasHh, iv);
      Value dh = k.load(g.dh, iv);
      if (in.resetsToZero())
        dh = k.zeroIf(in.resetAfter(k, Value(), iv[0]),
                      k.add(dh, k.load(g.dhIn, iv)));
      k.store(dh, gradH0, iv);
    });
  }
};

} // namespace rnn
} // namespace mlir

#endif // RNN_LIB_CONVERSION_RNNTOLOOPS_HIDDENPROJECTIONCELL_H
