//===- LSTMSteps.h - the steps of the LSTM and CIFG kernels -----*- C++ -*-===//
//
// The steps of the LSTM kernels, on the loops of CellLoops.h, shared by the
// LSTM (LSTMLowering.cpp) and the LSTM with coupled input and forget gates
// (CIFGLowering.cpp: i = 1 - f, three gate blocks f, g, o). Forward step t
// (the input projection xproj of its block comes from the skeleton; h, c
// the states step t - 1 left, h = y[t - 1]):
//
//   pre[B, G H] = h W_hh^T                   (GEMM; G = 4, 3 for the CIFG)
//   one kernel, per element (b, j), with r = is_init[t, b]:
//     i, f, g, o = act((r ? 0 : pre) + xproj[t - p] + b_ih + b_hh)
//     c = f (r ? 0 : c) + i g ; h = o tanh(c)
//     y[t] = h ; saved: gates[t] = (i, f, g, o), cells[t] = c
//
// With reset states a kernel before the GEMM selects them into scratch
// where is_init (CellLoops.h), and the step reads that scratch unmasked.
//
// Backward, shaped like cuDNN's: per step only the recurrent chain, per
// block the rest. For each block, last first:
//
//   for t in the block, downwards:
//       one kernel: dh = (is_init[t + 1] ? 0 : dh_in) + grad_y[t]
//               dG[t] = gate gradients from gates[t], c[t], c[t-1], dh, dc
//               (written over gates[t]: each element of dG is computed from
//               the same elements of the gates)
//               hIn[t - p] = reset[t] ? 0 : h[t-1] ; dc = reset[t] ? 0 : dc f
//       dh_in = dG[t] W_hh                                 (one GEMM)
//   grad_x[p : p+P] = dG W_ih                              (one GEMM each:
//   grad_W_ih += dG^T x[p : p+P] ; grad_W_hh += dG^T hIn    P*B rows)
//   grad_b += ones^T dG                                    (a GEMV)
//
// With reset states a kernel after the GEMM masks dh_in into dh (where
// reset[t], dc f and dG[t] W_hh go to the reset states). The first and
// last kernels of the backward set up and finish every gradient at once.
//
// The cell state c is saved per step as `cells` (its checkpoint role): a
// replay reads it, a chunked backward recomputes it from the checkpoint
// entering the chunk. Forward, replay and backward share the step below.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_LIB_CONVERSION_RNNTOLOOPS_LSTMSTEPS_H
#define RNN_LIB_CONVERSION_RNNTOLOOPS_LSTMSTEPS_H

#include "CellLoops.h"

namespace mlir {
namespace rnn {
/// The steps of an LSTM; with `CoupledInputGate`, of the CIFG LSTM.
template <bool CoupledInputGate> struct LSTMCellSteps {
  /// Gate blocks: i, f, g, o, or f, g, o with i = 1 - f.
  static constexpr int64_t kGates = CoupledInputGate ? 3 : 4;
  /// The block of each gate (kNoGate: none).
  static constexpr int64_t kNoGate = -1;
  static constexpr int64_t kI = CoupledInputGate ? kNoGate : 0, kF = kGates - 3,
                           kG = kGates - 2, kO = kGates - 1;

  /// The saved role holding c.
  static constexpr std::array<StringLiteral, 1> kStateRoles = {"cells"};

  using StepScratch = GateStepScratch<kGates>;

  /// One forward step: the recurrent GEMM, then one kernel.
  static void emitStep(KernelBuilder &k, const LayerInputs &in,
                       const StepScratch &s, const StepIO &io) {
    int64_t H = in.H;
    Value gates = io.saved[0], cells = io.saved[1];
    k.matmul(io.recurrentOperand(), in.weightHh, s.pre, false, true, false);
    k.parallel(in.stepShape(H), [&](ValueRange iv) {
      Value b = iv[0];
      Value reset = io.reset(k, in, b);
      SmallVector<Value> cols;
      auto preact = [&](int64_t gate) {
        Value col = k.addIndex(iv[1], gate * H);
        cols.push_back(col);
        Value sum = k.add(io.afterReset(k, reset, k.load(s.pre, {b, col})),
                          k.load(io.xproj, {b, col}));
        return k.add(sum,
                     k.add(k.load(in.biasIh, col), k.load(in.biasHh, col)));
      };
      SmallVector<Value, 4> activations;
      for (int64_t gate = 0; gate < kGates; ++gate)
        activations.push_back(gate == kG ? k.tanh(preact(gate))
                                         : k.sigmoid(preact(gate)));
      for (auto [gate, value] : llvm::enumerate(activations))
        k.store(value, gates, {b, cols[gate]});
      Value f = activations[kF], g = activations[kG], o = activations[kO];
      Value i = CoupledInputGate ? k.sub(k.scalar(1.0), f) : activations[kI];
      if (!cells && !io.y)
        return;
      Value cNew = k.add(k.mul(f, io.enter(k, 1, reset, iv)), k.mul(i, g));
      if (cells)
        k.store(cNew, cells, iv);
      if (!io.y)
        return;
      k.store(cNew, io.next[1], iv);
      io.storeH(k, k.mul(o, k.tanh(cNew)), iv);
    });
  }

  /// Scratch of the backward steps: the recurrent gradients (dh_in the
  /// GEMM's; dh the masked one, with reset states only), and the masked
  /// states entering the steps of one block.
  struct GradScratch {
    Value dh, dc, dhIn, hIn, ones;

    GradScratch(KernelBuilder &k, const LayerInputs &in)
        : dh(in.resetsToZero() ? Value()
                               : k.alloc(in.stepShape(in.H), "dh")),
          dc(k.alloc(in.stepShape(in.H), "dc")),
          dhIn(k.alloc(in.stepShape(in.H), "dh_in")),
          hIn(k.alloc(in.blockShape(in.H), "h_in")),
          ones(k.allocOnes(k.mulSize(in.P, in.B))) {}
  };

  /// One backward step t, reading the step's gates (overwritten with their
  /// gradients) and cell state ([B, 4H], [B, H]) and the cell state
  /// entering it; writes the masked state entering it to `hIn` [B, H].
  static void emitGradStep(KernelBuilder &k, const LayerInputs &in,
                           const BackwardIO &io, const GradScratch &g, Value t,
                           ArrayRef<Value> saved, ArrayRef<Value> prev,
                           Value hIn) {
    int64_t H = in.H;
    Value gates = saved[0], cells = saved[1], cPrev = prev[0];
    Value hPrev = k.previous(io.y, in.states[0], t);
    // Step t's view of grad_y: the kernel touches those bytes only.
    Value gradY = k.step(io.gradY, t);
    k.parallel(in.stepShape(H), [&](ValueRange iv) {
      Value b = iv[0];
      Value reset = k.load(in.isInit, {t, b});
      SmallVector<Value> cols, act;
      for (int64_t gate = 0; gate < kGates; ++gate) {
        cols.push_back(k.addIndex(iv[1], gate * H));
        act.push_back(k.load(gates, {b, cols.back()}));
      }
      Value one = k.scalar(1.0);
      Value f = act[kF], gg = act[kG], o = act[kO];
      Value i = CoupledInputGate ? k.sub(one, f) : act[kI];
      // The gradient reaching h from step t + 1.
      Value dh = in.resetsToZero()
                     ? k.zeroIf(in.resetAfter(k, t, b), k.load(g.dhIn, iv))
                     : k.load(g.dh, iv);
      Value dhT = k.add(dh, k.load(gradY, iv));
      Value cIn = in.enterState(k, 1, reset, t, iv, k.load(cPrev, iv));
      Value tc = k.tanh(k.load(cells, iv));
      Value dO = k.mul(dhT, tc);
      Value dcT = k.add(k.load(g.dc, iv),
                        k.mul(k.mul(dhT, o), k.sub(one, k.mul(tc, tc))));
      Value dI = k.mul(dcT, gg), dG = k.mul(dcT, i), dF = k.mul(dcT, cIn);
      // With i = 1 - f, f's pre-activation also reaches c through i.
      if (CoupledInputGate)
        dF = k.sub(dF, dI);
      Value dpre[4];
      if constexpr (!CoupledInputGate)
        dpre[kI] = k.mul(dI, k.mul(i, k.sub(one, i)));
      dpre[kF] = k.mul(dF, k.mul(f, k.sub(one, f)));
      dpre[kG] = k.mul(dG, k.sub(one, k.mul(gg, gg)));
      dpre[kO] = k.mul(dO, k.mul(o, k.sub(one, o)));
      for (int64_t gate = 0; gate < kGates; ++gate)
        k.store(dpre[gate], gates, {b, cols[gate]});
      k.store(in.carryGradient(k, io, 1, reset, t, iv, k.mul(dcT, f)), g.dc,
              iv);
      k.store(in.enterState(k, 0, reset, t, iv, k.load(hPrev, iv)), hIn, iv);
    });
    k.matmul(gates, in.weightHh, g.dhIn, false, false, false);
    if (in.resetsToZero())
      return;
    k.parallel(in.stepShape(H), [&](ValueRange iv) {
      Value reset = k.load(in.isInit, {t, iv[0]});
      k.store(in.carryGradient(k, io, 0, reset, t, iv, k.load(g.dhIn, iv)),
              g.dh, iv);
    });
  }

  /// The block's share of the gradients, from its gate gradients (steps
  /// [offset, offset + len) of the saved gates) and the masked states
  /// entering its steps.
  static void emitBlockGradients(KernelBuilder &k, const LayerInputs &in,
                                 const BackwardIO &io, const GradScratch &g,
                                 Value start, OpFoldResult len,
                                 ArrayRef<Value> saved, Value offset) {
    Value dG = k.flatten(k.steps(saved[0], offset, len));
    Value hIn = k.flatten(k.leading(g.hIn, len));
    Value gradX = k.flatten(k.steps(io.gradX, start, len));
    Value x = k.flatten(k.steps(in.x, start, len));
    Value gradBias = k.row(io.gradBiasIh);
    k.matmul(dG, in.weightIh, gradX, false, false, false);
    k.matmul(dG, x, io.gradWeightIh, true, false, true);
    k.matmul(dG, hIn, io.gradWeightHh, true, false, true);
    k.addColumnSums(dG, g.ones, gradBias);
  }

  /// One kernel: the gradients reaching the last step, the weight and bias
  /// gradients zeroed (they are sums over the blocks), the ones.
  static void beginBackward(KernelBuilder &k, const LayerInputs &in,
                            KernelOpInterface op, const GradScratch &g) {
    Value dst[] = {in.resetsToZero() ? g.dhIn : g.dh, g.dc,
                   op.get(kRoleGradWeightIh),         op.get(kRoleGradWeightHh),
                   op.get(kRoleGradBiasIh),           g.ones};
    Value src[] = {op.get("grad_h_n"), op.get("grad_c_n")};
    k.parallelEach(k.shapesOf(dst), [&](unsigned i, ValueRange iv) {
      k.store(i < 2 ? k.load(src[i], iv) : k.scalar(i == 5 ? 1.0 : 0.0), dst[i],
              iv);
    });
  }

  /// One kernel: the gradients of the initial states, and grad_b_hh.
  static void endBackward(KernelBuilder &k, const LayerInputs &in,
                          KernelOpInterface op, const GradScratch &g) {
    // The input and hidden projections share their pre-activations.
    Value dst[] = {op.get("grad_h0"), op.get("grad_c0"),
                   op.get(kRoleGradBiasHh)};
    Value src[] = {in.resetsToZero() ? g.dhIn : g.dh, g.dc,
                   op.get(kRoleGradBiasIh)};
    k.parallelEach(k.shapesOf(dst), [&](unsigned i, ValueRange iv) {
      Value value = k.load(src[i], iv);
      if (i == 0 && in.resetsToZero())
        value = k.zeroIf(in.resetAfter(k, Value(), iv[0]), value);
      k.store(value, dst[i], iv);
    });
  }
};
} // namespace rnn
} // namespace mlir

#endif // RNN_LIB_CONVERSION_RNNTOLOOPS_LSTMSTEPS_H
