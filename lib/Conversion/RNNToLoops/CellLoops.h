//===- CellLoops.h - the loop skeleton every cell's kernels share -*- C++
//-*-===//
//
// The loops of the training kernels on buffers, written once for every
// cell: the chunks, the GEMM blocks of P steps (the kernel's `block`, the
// same whatever the remat policy, so that forward, replays and backward
// issue the same GEMM calls), the input projection of each block, and the
// steps, forward and backward. A cell supplies only what happens in one
// step and one block (a `Cell` type, see LSTMLowering.cpp):
//
//   Cell::StepScratch(k, in, replay)   scratch of the forward steps
//   Cell::emitStep(k, in, s, io)       one forward step (StepIO)
//   Cell::GradScratch(k, in)           scratch of the backward steps
//   Cell::emitGradStep(k, in, io, g, t, saved, prev, hIn)
//                                      one backward step: reads the saved
//                                      values of the step, overwrites the
//                                      replayed ones with the gradients of
//                                      their pre-activations
//   Cell::emitBlockGradients(k, in, io, g, start, len, saved, offset)
//                                      the block's share of the gradients
//   Cell::beginBackward / endBackward  set up and finish the gradients
//   Cell::kStateRoles                  the saved role holding each state
//                                      after `h` (whose steps are `y`)
//
// Forward (chunks only when checkpointed):
//
//   for each chunk [s, s + K):   checkpoints[s / K] = the checkpointed states
//     for each block [p, p + P) in it:
//       xproj = x[p : p+P] W_ih^T                          (one GEMM)
//       for t in the block: step t (saved values written)
//
// Backward, per chunk last first (one chunk of T steps without a chunk):
// replay the chunk into K-step scratch when chunked, then per block, last
// first, the steps downwards and the block's gradients.
//
// In a wavefront (ConvertRNNToLoops) a forward block waits, before its
// projection, for the block of x the layer below wrote, and signals when
// its own y is written; a backward block waits, before its steps, for the
// block of grad_y the layer above wrote, and signals once its grad_x is.
//
// A step is one recurrent GEMM and one elementwise kernel in each
// direction. A reset that enters zero is per batch row, so the recurrent
// product of the masked state is the masked product of the state,
// (reset ? 0 : h) W = reset ? 0 : h W: the forward's GEMM reads the state
// step t - 1 left (y[t - 1], or h0) and its gate kernel selects zero for
// the recurrent term and the incoming states where is_init[t, b]; the
// backward's gate kernel of step t masks the recurrent gradient that step
// t + 1's GEMM produced with is_init[t + 1, b]. Resets that enter given
// states (`reset_states`) cannot be moved past the GEMM: there a kernel
// of its own selects them into scratch before it, and one masks the
// recurrent gradient after the backward's GEMM.
//
// h is carried in y (a step reads y[t - 1]); the other states in scratch
// buffers, not in the saved outputs, so that a store of a saved value is
// only ever read by the backward.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_LIB_CONVERSION_RNNTOLOOPS_CELLLOOPS_H
#define RNN_LIB_CONVERSION_RNNTOLOOPS_CELLLOOPS_H

#include "CellLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir {
namespace rnn {

struct BackwardIO;

/// The inputs of a layer, shared by every kernel of a cell: x, is_init, the
/// initial states in the cell's order, the states a reset enters (none for
/// zero; [T, B, H] or [B, H] each), the weights (null biases for a backward
/// that reads none), and T, B, H, P. The weights are GEMM operands as they
/// stand (KernelBuilder::gemmOperand): they are read by GEMMs only.
struct LayerInputs {
  Value x, isInit, weightIh, weightHh, biasIh, biasHh;
  SmallVector<Value> states, resetStates;
  /// T, B and P: constants, or values where T or B are dynamic.
  OpFoldResult T, B;
  int64_t H = 0;
  OpFoldResult P;
  /// The steps of a chunk: the kernel's `chunk`, rounded per call
  /// (rnn.chunk_steps) where T or B is dynamic; T when not checkpointed.
  OpFoldResult K;
  /// Whether a replay computes the gates in place of their input
  /// projection: not when the gates are stored narrower than the element
  /// type, where the projection must stay in the element type as it does in
  /// the forward.
  bool replaysInPlace = true;

  LayerInputs(KernelOpInterface op, KernelBuilder &k);

  /// [B, width], a step's rows, and [P, B, width], a block's.
  Shape stepShape(int64_t width) const;
  Shape blockShape(int64_t width) const;

  /// Whether a reset enters zero (no reset states), so that the steps
  /// apply it inside their elementwise kernels.
  bool resetsToZero() const { return resetStates.empty(); }
  /// is_init[t + 1, b] as the backward step t reads it: whether the
  /// gradient reaching h from step t + 1 stops there (false at T - 1);
  /// with a null `t`, is_init[0, b], whether it reaches the initial state.
  Value resetAfter(KernelBuilder &k, Value t, Value b) const;

  /// Element iv = (b, j) of state `state` entering step t, from `carried`,
  /// what step t - 1 left, and `reset` = is_init[t, b]: where an episode
  /// starts, the reset state (zero without one).
  Value enterState(KernelBuilder &k, unsigned state, Value reset, Value t,
                   ValueRange iv, Value carried) const;
  /// The adjoint of enterState: of `gradient`, the gradient reaching
  /// element iv of state `state` entering step t, returns what reaches step
  /// t - 1 (zero where an episode starts) and, with reset states, gives the
  /// rest to grad_<state>_reset: stored at [t, b, j] (zero where no episode
  /// starts), or added at [b, j] for a reset state per batch column.
  Value carryGradient(KernelBuilder &k, const BackwardIO &io, unsigned state,
                      Value reset, Value t, ValueRange iv,
                      Value gradient) const;
};

/// Where one forward step t reads its state and writes its results. Null
/// outputs are not written; without `y` the step only recomputes saved
/// values and writes no state.
struct StepIO {
  Value t;
  /// [B, H] per state entering the step: as step t - 1 left it, or with
  /// `masked` as the reset made it (reset states, selected by a kernel of
  /// their own before the step).
  SmallVector<Value> prev;
  bool masked = false;
  Value xproj;              // [B, G*H] input projection of the step
  SmallVector<Value> saved; // [B, width] per saved role of the cell
  Value y;                  // [B, H]
  /// [B, H] per state after h: where the step leaves it (with `y`).
  SmallVector<Value> next;
  /// Under a narrower storage type, with resets that enter zero, in a
  /// forward: h entering the step rounded to it, the recurrent GEMM's
  /// operand, which the step overwrites with the h it leaves (rounded in
  /// the step's kernel rather than by a loop of its own before the next
  /// GEMM). Null otherwise: the GEMM rounds prev[0] itself.
  Value gemmState;

  /// The recurrent GEMM's operand: gemmState, or prev[0].
  Value recurrentOperand() const { return gemmState ? gemmState : prev[0]; }
  /// Element iv of the h the step leaves: into y, and into gemmState.
  void storeH(KernelBuilder &k, Value h, ValueRange iv) const;

  /// For element (b, .) of the step's kernel: is_init[t, b] if the kernel
  /// applies the reset, else null.
  Value reset(KernelBuilder &k, const LayerInputs &in, Value b) const;
  /// Element iv of state `state` entering the step.
  Value enter(KernelBuilder &k, unsigned state, Value reset,
              ValueRange iv) const;
  /// `value`, a term computed from the unmasked state (an element of
  /// prev[0] W_hh^T, or of prev itself), as the step sees it: zero where
  /// `reset` (non-null when the step applies the reset).
  Value afterReset(KernelBuilder &k, Value reset, Value value) const;
};

/// What the backward steps read and write besides the layer inputs.
struct BackwardIO {
  Value y, gradY, gradX;
  Value gradWeightIh, gradWeightHh, gradBiasIh, gradBiasHh;
  /// grad_<state>_reset per state, with reset states.
  SmallVector<Value> gradResetStates;

  explicit BackwardIO(KernelOpInterface op);
};

/// Scratch of the forward steps of a cell of `Gates` gates: the recurrent
/// pre-activations and the input projection of one block. A replay
/// computes the gates in place of the projection they are made from (each
/// element of the gates is computed from the same element of the
/// projection alone), so it allocates no projection scratch (unless the
/// gates are stored narrower, LayerInputs::replaysInPlace).
template <int64_t Gates> struct GateStepScratch {
  Value pre, xproj;

  GateStepScratch(KernelBuilder &k, const LayerInputs &in, bool replay)
      : pre(k.alloc(in.stepShape(Gates * in.H), "preact")),
        xproj(replay && in.replaysInPlace
                  ? Value()
                  : k.alloc(in.blockShape(Gates * in.H), "xproj")) {}
};

/// The states of forward steps outside the saved values: where the
/// forward carries each state after h from step to step (h is carried in
/// y), and with reset states the masked states entering a step.
struct StateScratch {
  SmallVector<Value> carried; // [B, H] per state; null for h
  SmallVector<Value> masked;  // [B, H] per state, with reset states

  StateScratch(KernelBuilder &k, const LayerInputs &in, CellAttrInterface cell,
               bool carries);

  /// The step's IO for states `prev` entering step t (as step t - 1 left
  /// them): with reset states, a kernel selects them into `masked`.
  StepIO enter(KernelBuilder &k, const LayerInputs &in, Value t,
               ArrayRef<Value> prev) const;
};

template <typename Cell> struct CellLoops {
  /// The index of `role` in the cell's saved roles.
  static int64_t roleIndex(CellAttrInterface cell, StringRef role) {
    ArrayRef<StringRef> roles = cell.getSavedRoles();
    return llvm::find(roles, role) - roles.begin();
  }

  /// The kernel's operand of each saved role of its cell (null where it
  /// has none).
  static SmallVector<Value> savedOperands(KernelOpInterface op) {
    return llvm::map_to_vector(op.getCell().getSavedRoles(),
                               [&](StringRef role) { return op.get(role); });
  }

  /// The state `state` > 0 entering step t, from `saved` (every step's
  /// saved values, per saved role): step t - 1 of its role, or the initial
  /// state at t = 0.
  static Value savedStatePrev(KernelBuilder &k, const LayerInputs &in,
                              CellAttrInterface cell, ArrayRef<Value> saved,
                              unsigned state, Value t) {
    Value steps = saved[roleIndex(cell, Cell::kStateRoles[state - 1])];
    return k.previous(steps, in.states[state], t);
  }

  static void emitFwd(KernelOpInterface op, KernelBuilder &k) {
    LayerInputs in(op, k);
    CellAttrInterface cell = op.getCell();
    std::optional<int64_t> chunk = op.getChunkSteps();
    // The sequences written every step: each saved role but, when
    // checkpointed, the checkpoint roles (written once per chunk).
    SmallVector<Value> saved = savedOperands(op);
    SmallVector<Value> perStep(saved);
    for (auto [role, value] : llvm::zip(cell.getSavedRoles(), perStep))
      if (chunk && llvm::is_contained(cell.getCheckpointRoles(), role))
        value = Value();
    typename Cell::StepScratch s(k, in, /*replay=*/false);
    StateScratch states(k, in, cell, /*carries=*/true);
    Value y = op.getOutput();
    // Under a narrower storage type each step rounds the h it leaves for
    // the next step's GEMM (with resets that enter zero, the GEMM reads h
    // unmasked), starting from the initial state rounded here.
    Value gemmState = in.resetsToZero() && k.roundsGemmOperands()
                          ? k.allocGemmOperand(in.stepShape(in.H), "h_gemm")
                          : Value();
    if (gemmState)
      k.convertInto(in.states[0], gemmState);
    // The states entering step t as step t - 1 left them.
    auto statesBefore = [&](Value t) {
      SmallVector<Value> prev = {k.previous(y, in.states[0], t)};
      for (unsigned i = 1; i < in.states.size(); ++i)
        prev.push_back(k.initialOr(in.states[i], states.carried[i], t));
      return prev;
    };
    k.forChunks(
        in.T, in.K, /*reverse=*/false,
        [&](Value first, OpFoldResult len) {
          if (chunk) {
            Value w = arith::DivUIOp::create(k.builder(), first, k.index(in.K));
            SmallVector<Value> prev = statesBefore(first);
            for (auto [i, role] : llvm::enumerate(Cell::kStateRoles))
              k.copy(prev[i + 1], k.step(saved[roleIndex(cell, role)], w));
          }
          k.forBlocks(
              first, len, in.P, /*reverse=*/false,
              [&](Value start, Value, OpFoldResult blockLen) {
                k.waitBlock(start);
                Value xproj = k.leading(s.xproj, blockLen);
                k.project(k.steps(in.x, start, blockLen), in.weightIh, xproj);
                k.forTime(blockLen, /*reverse=*/false, [&](Value i) {
                  Value t = arith::AddIOp::create(k.builder(), start, i);
                  StepIO io = states.enter(k, in, t, statesBefore(t));
                  io.xproj = k.step(xproj, i);
                  for (Value value : perStep)
                    io.saved.push_back(value ? k.step(value, t) : Value());
                  io.y = k.step(y, t);
                  io.next = states.carried;
                  io.gemmState = gemmState;
                  Cell::emitStep(k, in, s, io);
                });
                k.signalBlock(start);
              });
        });
    // The outputs are y, then the final states: h is y's last step.
    SmallVector<OpOperand *> outputs = op.getOutputOperands();
    SmallVector<Value> last(states.carried);
    last[0] = k.step(y, k.index(k.subSize(in.T, 1)));
    SmallVector<Shape> shapes(last.size(), in.stepShape(in.H));
    k.parallelEach(shapes, [&](unsigned i, ValueRange iv) {
      k.store(k.load(last[i], iv), outputs[i + 1]->get(), iv);
    });
  }

  /// Replays steps [first, first + len) into `saved` ([len, B, width] views
  /// per saved role, null for those not recomputed), block by block: the
  /// projection of a block into its gates (the first saved role, computed
  /// in place of the projection they are made from, or into the step
  /// scratch's projection when it has one), then the steps. The
  /// state i > 0 entering step t is `statePrev(i, j)` (j = t - first).
  static void
  emitReplay(KernelBuilder &k, const LayerInputs &in,
             const typename Cell::StepScratch &s, const StateScratch &states,
             Value y, Value first, OpFoldResult len, ArrayRef<Value> saved,
             function_ref<Value(unsigned state, Value j)> statePrev) {
    k.forBlocks(
        first, len, in.P, /*reverse=*/false,
        [&](Value start, Value offset, OpFoldResult blockLen) {
          Value blockGates = s.xproj ? k.leading(s.xproj, blockLen)
                                     : k.steps(saved.front(), offset, blockLen);
          k.project(k.steps(in.x, start, blockLen), in.weightIh, blockGates);
          k.forBlockSteps(
              start, offset, blockLen, /*reverse=*/false,
              [&](Value t, Value j, Value i) {
                SmallVector<Value> prev = {k.previous(y, in.states[0], t)};
                for (unsigned state = 1; state < in.states.size(); ++state)
                  prev.push_back(statePrev(state, j));
                StepIO io = states.enter(k, in, t, prev);
                io.xproj = k.step(blockGates, i);
                for (Value value : saved)
                  io.saved.push_back(value ? k.step(value, j) : Value());
                Cell::emitStep(k, in, s, io);
              });
        });
  }

  static void emitReplayKernel(KernelOpInterface op, KernelBuilder &k) {
    LayerInputs in(op, k);
    CellAttrInterface cell = op.getCell();
    typename Cell::StepScratch s(k, in, /*replay=*/true);
    StateScratch states(k, in, cell, /*carries=*/false);
    // The replayed roles are written; the states it reads are not.
    SmallVector<Value> saved = savedOperands(op);
    SmallVector<Value> written(saved);
    for (auto [role, value] : llvm::zip(cell.getSavedRoles(), written))
      if (!llvm::is_contained(cell.getReplayedRoles(), role))
        value = Value();
    emitReplay(k, in, s, states, op.getOutput(), k.index(0), in.T, written,
               [&](unsigned state, Value t) {
                 return savedStatePrev(k, in, cell, saved, state, t);
               });
  }

  /// Differentiates steps [first, first + len), block by block, last first.
  /// `saved` holds those steps ([len, B, width] per saved role: the saved
  /// values, or the replay scratch of a chunk); the state i > 0 entering
  /// step first + j is `statePrev(i, j)`.
  static void
  emitGradSteps(KernelBuilder &k, const LayerInputs &in, const BackwardIO &io,
                const typename Cell::GradScratch &g, Value first,
                OpFoldResult len,
                ArrayRef<Value> saved,
                function_ref<Value(unsigned state, Value j)> statePrev) {
    k.forBlocks(first, len, in.P, /*reverse=*/true,
                [&](Value start, Value offset, OpFoldResult blockLen) {
                  k.waitBlock(start);
                  k.forBlockSteps(
                      start, offset, blockLen, /*reverse=*/true,
                      [&](Value t, Value j, Value i) {
                        // The views, last first: h_in, the states
                        // entering the step, the saved values.
                        Value hIn = k.step(g.hIn, i);
                        size_t numStates = in.states.size();
                        SmallVector<Value> prev(numStates - 1),
                            steps(saved.size());
                        for (size_t state = numStates - 1; state > 0; --state)
                          prev[state - 1] = statePrev(state, j);
                        for (size_t r = saved.size(); r > 0; --r)
                          steps[r - 1] = k.step(saved[r - 1], j);
                        Cell::emitGradStep(k, in, io, g, t, steps, prev, hIn);
                      });
                  Cell::emitBlockGradients(k, in, io, g, start, blockLen, saved,
                                           offset);
                  k.signalBlock(start);
                });
  }

  /// The backward around `emitChunk(first, len)`, which emits the backward
  /// of one chunk, last chunk first.
  static void
  emitBackward(KernelOpInterface op, KernelBuilder &k, const LayerInputs &in,
               const BackwardIO &io, const typename Cell::GradScratch &g,
               OpFoldResult chunk,
               function_ref<void(Value first, OpFoldResult len)> emitChunk) {
    // Gradients of reset states per batch column are sums over the steps.
    for (Value grad : io.gradResetStates)
      if (cast<MemRefType>(grad.getType()).getRank() == 2)
        k.zero(grad);
    Cell::beginBackward(k, in, op, g);
    k.forChunks(in.T, chunk, /*reverse=*/true, emitChunk);
    Cell::endBackward(k, in, op, g);
  }

  static void emitBwd(KernelOpInterface op, KernelBuilder &k) {
    LayerInputs in(op, k);
    BackwardIO io(op);
    typename Cell::GradScratch g(k, in);
    SmallVector<Value> saved = savedOperands(op);
    emitBackward(op, k, in, io, g, in.T, [&](Value first, OpFoldResult len) {
      emitGradSteps(
          k, in, io, g, first, len, saved, [&](unsigned state, Value t) {
            return savedStatePrev(k, in, op.getCell(), saved, state, t);
          });
    });
  }

  static void emitChunkedBwd(KernelOpInterface op, KernelBuilder &k) {
    LayerInputs in(op, k);
    CellAttrInterface cell = op.getCell();
    BackwardIO io(op);
    // K steps of replay scratch per saved role, reused chunk after chunk.
    SmallVector<Value> saved;
    for (StringRef role : cell.getSavedRoles())
      saved.push_back(
          k.alloc({in.K, in.B,
                   k.size(cell.getRoleWidth(role, in.H))},
                  role,
                  isStoredRole(cell, role) ? op.getStorageType() : Type()));
    typename Cell::StepScratch s(k, in, /*replay=*/true);
    StateScratch states(k, in, cell, /*carries=*/false);
    typename Cell::GradScratch g(k, in);
    emitBackward(op, k, in, io, g, in.K,
                 [&](Value first, OpFoldResult len) {
      // Replay the chunk from the states that entered it ...
      SmallVector<Value> entries;
      if (!Cell::kStateRoles.empty()) {
        Value w = arith::DivUIOp::create(k.builder(), first, k.index(in.K));
        for (StringRef role : Cell::kStateRoles)
          entries.push_back(k.step(op.get(role), w));
      }
      auto statePrev = [&](unsigned state, Value j) {
        Value steps = saved[roleIndex(cell, Cell::kStateRoles[state - 1])];
        return k.previous(steps, entries[state - 1], j);
      };
      emitReplay(k, in, s, states, op.getOutput(), first, len, saved,
                 statePrev);
      // ... and differentiate it.
      emitGradSteps(k, in, io, g, first, len, saved, statePrev);
    });
  }

  static void emitKernel(KernelOpInterface op, KernelBuilder &k) {
    switch (op.getPhase()) {
    case KernelPhase::Fwd:
      return emitFwd(op, k);
    case KernelPhase::Bwd:
      return emitBwd(op, k);
    case KernelPhase::ChunkedBwd:
      return emitChunkedBwd(op, k);
    case KernelPhase::Replay:
      return emitReplayKernel(op, k);
    }
  }
};

/// The lowering of cell attribute `CellAttr` through the loops of
/// CellLoops<Cell>.
template <typename CellAttr, typename Cell>
struct LoopLowering : public CellLoweringAttrInterface::ExternalModel<
                          LoopLowering<CellAttr, Cell>, CellAttr> {
  void emitKernel(Attribute, KernelOpInterface kernel, KernelBuilder &k) const {
    CellLoops<Cell>::emitKernel(kernel, k);
  }
};

} // namespace rnn
} // namespace mlir

#endif // RNN_LIB_CONVERSION_RNNTOLOOPS_CELLLOOPS_H
