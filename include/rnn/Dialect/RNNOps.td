//===- RNNOps.td - rnn dialect operations ------------------*- tablegen -*-===//
//
// Model-level ops (one per cell: rnn.lstm, rnn.gru, ...), the
// destination-style kernels that training is built from (rnn.cell_fwd,
// rnn.cell_bwd, rnn.cell_replay, each parameterized by a cell attribute),
// and the phase marker.
//
// Shapes are static and checked by one table-driven verifier (RNNOps.cpp):
// T, B, I come from x, H from weight_hh, and every other operand is checked
// against them with a message that names both sides.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNOPS_TD
#define RNN_DIALECT_RNNOPS_TD

include "rnn/Dialect/RNNDialect.td"
include "rnn/Dialect/RNNInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class RNN_Op<string mnemonic, list<Trait> traits = []>
    : Op<RNN_Dialect, mnemonic, traits>;

// Kernel operands are tensors before bufferization and memrefs after.
def RNN_TensorOrMemRef : AnyTypeOf<[AnyRankedTensor, AnyMemRef]>;

// Chunk length K of checkpointed kernels, in steps.
def RNN_ChunkAttr : ConfinedAttr<I64Attr, [IntMinValue<1>]>;

// GEMM block P of every kernel, in steps: the input projection and the
// gradients of x, the weights and the biases are GEMMs over the rows of P
// steps at a time (blocks [jP, jP + P), the last one shorter). Fixed by the
// target and the shape, never by the remat policy, so that every policy
// issues the same GEMM calls with the same shapes.
def RNN_BlockAttr : ConfinedAttr<I64Attr, [IntMinValue<1>]>;

//===----------------------------------------------------------------------===//
// Model level
//===----------------------------------------------------------------------===//

// The model ops (rnn.lstm, rnn.gru, ...) are defined with their cells in
// RNNCells.td.
include "rnn/Dialect/RNNCells.td"

def RNN_DropoutOp : RNN_Op<"dropout", [Pure, AllTypesMatch<["x", "y"]>]> {
  let summary = "dropout between layers with a counter-based mask";
  let description = [{
    In a training function (`rnn-autodiff`), zeroes each element of the
    sequence `x: [T, B, H]` with probability `p` and scales the others by
    `1 / (1 - p)`, as `torch.nn.LSTM`'s `dropout` does between layers; its
    gradient applies the same mask to the cotangent. Everywhere else
    (inference, `rnn-expand-forward`) it is the identity.

    No mask is stored: element `n = (t * B + b) * H + h` is dropped when
    word `n mod 4` of Philox4x32-10 (Salmon et al., SC'11; Random123's
    round function and constants) on

        key     = (seed mod 2^32, seed div 2^32)
        counter = (n div 4, layer, offset mod 2^32, offset div 2^32)

    is below `floor(p * 2^32)`, where `rng = [seed, offset]` (two i64
    read as unsigned) is a runtime argument. The forward, the backward and
    every replay regenerate the same mask, and a captured step replays with
    new masks when the caller advances the offset. `layer` tells apart the
    sites of one call; T * B * H is at most 2^34.

    ```mlir
    %x1 = rnn.dropout %y0 rng(%rng) {p = 2.5e-01 : f64, layer = 0 : i64}
        : tensor<8x4x5xf32>, tensor<2xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$rng,
      F64Attr:$p, ConfinedAttr<I64Attr, [IntMinValue<0>]>:$layer);
  let results = (outs AnyRankedTensor:$y);
  let assemblyFormat = [{
    $x `rng` `(` $rng `)` attr-dict `:` type($x) `,` type($rng)
  }];
  let extraClassDeclaration = [{
    /// Words below this are dropped: floor(p * 2^32).
    uint64_t getThreshold();
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$x, "::mlir::Value":$rng, "double":$p,
                   "int64_t":$layer), [{
      build($_builder, $_state, x.getType(), x, rng,
            $_builder.getF64FloatAttr(p), $_builder.getI64IntegerAttr(layer));
    }]>];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Training kernels (destination style), generic over the cell
//===----------------------------------------------------------------------===//

// The operand groups of the kernels, each with its keyword (in the
// assembly and in messages), the name of its accessor and of its index
// constant (`k<name>Group`), and whether it holds one operand or a list.
// A kernel lists its groups once, in order; kernelOperandGroups
// (RNNAttrs.h) gives the roles of each group by its keyword.
class RNN_OperandGroup<string keywordArg, string accessorArg, string nameArg,
                       bit variadic = 1> {
  string keyword = keywordArg;
  string accessor = accessorArg;
  string name = nameArg;
  TypeConstraint constraint =
      !if(variadic, Variadic<RNN_TensorOrMemRef>, RNN_TensorOrMemRef);
}
def RNN_XGroup : RNN_OperandGroup<"x", "x", "X", 0>;
def RNN_IsInitGroup : RNN_OperandGroup<"is_init", "isInit", "IsInit", 0>;
def RNN_StatesGroup : RNN_OperandGroup<"states", "states", "States">;
def RNN_ResetStatesGroup
    : RNN_OperandGroup<"reset_states", "resetStates", "ResetStates">;
def RNN_WeightsGroup : RNN_OperandGroup<"weights", "weights", "Weights">;
def RNN_SavedGroup : RNN_OperandGroup<"saved", "savedValues", "Saved">;
def RNN_CotangentsGroup
    : RNN_OperandGroup<"cotangents", "cotangents", "Cotangents">;
def RNN_OutsGroup : RNN_OperandGroup<"outs", "outputs", "Outs">;

// The groups every kernel starts with.
defvar RNN_KernelInputGroups = [RNN_XGroup, RNN_IsInitGroup, RNN_StatesGroup,
                                RNN_ResetStatesGroup, RNN_WeightsGroup];

// Common shape of the kernels: the cell attribute, the GEMM block (`block`
// P steps where T and B are static; `rows` R where either is dynamic, each
// call taking the block gemmBlockSteps gives its shape, so that it issues
// the GEMMs a kernel of that static shape does), the attributes `attrs`, then the operand `groups` in order, whose sizes and
// roles the cell fixes (`reset_states` is empty or one per state, as on
// the model op); the last `numInits` groups are the destinations. Tensor
// form returns one result per destination and memref form returns
// nothing. The saved values are printed with their roles, which the
// parser checks against the cell.
class RNN_KernelOp<string mnemonic, string kind, dag attrs,
                   list<RNN_OperandGroup> groups, int numInits,
                   code extraDecl = [{}], list<Trait> traits = []>
    : RNN_Op<mnemonic, !listconcat(traits, [AttrSizedOperandSegments,
        DestinationStyleOpInterface,
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
        DeclareOpInterfaceMethods<RNN_KernelOpInterface>])> {
  let arguments = !con(
      (ins RNN_CellAttrInterface:$cell, OptionalAttr<RNN_BlockAttr>:$block,
           OptionalAttr<RNN_BlockAttr>:$rows), attrs,
      !dag(ins, !foreach(group, groups, group.constraint),
           !foreach(group, groups, group.accessor)));
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let hasVerifier = 1;
  let extraClassDefinition = [{
    void $cppClass::getEffects(
        ::llvm::SmallVectorImpl<::mlir::SideEffects::EffectInstance<
            ::mlir::MemoryEffects::Effect>> &effects) {
      addKernelEffects(*this, effects);
    }
    ::mlir::MutableOperandRange $cppClass::getDpsInitsMutable() {
      return kernelInits(*this);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyKernel(*this);
    }
  }];
  let extraClassDeclaration = [{
    static constexpr ::mlir::rnn::KernelKind kKind =
        ::mlir::rnn::KernelKind::}] # kind # [{;
    /// The keywords of the operand groups, in order.
    static constexpr ::llvm::StringLiteral kOperandGroups[] = {
        }] # !interleave(!foreach(group, groups,
                                  "\"" # group.keyword # "\""), ", ") # [{};
    /// The index of each operand group.
    }] # !interleave(!foreach(i, !range(groups),
        "static constexpr unsigned k" # groups[i].name # "Group = " # i
        # ";"), "\n") # [{
    /// The destinations are the last kNumInitGroups groups.
    static constexpr unsigned kNumInitGroups = }] # numInits # [{;
    ::mlir::MutableOperandRange getDpsInitsMutable();
    /// True when the operands are buffers (after bufferization).
    bool hasPureBufferSemantics() {
      return ::llvm::isa<::mlir::MemRefType>(getX().getType());
    }
  }] # extraDecl;
}

def RNN_CellFwdOp : RNN_KernelOp<"cell_fwd", "Fwd",
    (ins OptionalAttr<RNN_ChunkAttr>:$chunk, OptionalAttr<TypeAttr>:$storage),
    !listconcat(RNN_KernelInputGroups, [RNN_OutsGroup, RNN_SavedGroup]), 2> {
  let summary = "forward kernel of a cell that also writes what backward reads";
  let description = [{
    Forward pass of one layer of cell `cell` (semantics of its model op)
    writing, besides `y` and the final states, the per-step values the
    backward reads: one `[T, B, width]` sequence per saved role of the cell
    (LSTM: `gates` `[T, B, 4H]`, the activated `i, f, g, o`, and `cells`
    `[T, B, H]`, `c_t`; GRU: `gates` `[T, B, 3H]` and `hn_proj`
    `[T, B, H]`, `W_hn h + b_hn`). A consumer that does not read them leaves
    stores that `rnn-dse` deletes. The input projection is computed per GEMM
    block of `block` steps. With `reset_states` (one per state of the cell,
    each `[T, B, H]` or `[B, H]`), a step where `is_init` is set enters the
    given state instead of zero, as on the model op; every kernel of the
    layer reads them.

    With `chunk = K` (set by `rnn-rematerialize` under `policy=chunk:K`; a
    multiple of the block, or T), each checkpoint role of the cell (LSTM:
    `cells`) is `[ceil(T / K), B, width]`: entry `w` is the state entering
    chunk `w` of K steps (before the reset mask), all the backward needs
    besides `y` to replay the chunk.

    ```mlir
    %y, %h_n, %c_n, %gates, %cells = rnn.cell_fwd #rnn.lstm block(2)
        ins(%x, %is_init) states(%h0, %c0)
        weights(%w_ih, %w_hh, %b_ih, %b_hh)
        outs(%y0, %hn0, %cn0) saved(gates %g0, cells %c0s)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
          tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<8x4x20xf32>, tensor<8x4x5xf32>
        -> tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
           tensor<8x4x20xf32>, tensor<8x4x5xf32>
    ```
  }];
  let assemblyFormat = [{
    $cell (`block` `(` $block^ `)`)? (`rows` `(` $rows^ `)`)?
    (`chunk` `(` $chunk^ `)`)?
    `ins` `(` $x `,` $isInit `)` `states` `(` $states `)`
    (`reset_states` `(` $resetStates^ `)`)?
    `weights` `(` $weights `)` `outs` `(` $outputs `)`
    `saved` `(` custom<RoleOperands>(ref($cell), ref($chunk), "kKind",
                                     "kSavedGroup", $savedValues) `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
}

def RNN_CellBwdOp : RNN_KernelOp<"cell_bwd", "Bwd",
    (ins OptionalAttr<RNN_ChunkAttr>:$chunk, OptionalAttr<TypeAttr>:$storage),
    !listconcat(RNN_KernelInputGroups,
                [RNN_SavedGroup, RNN_CotangentsGroup, RNN_OutsGroup]), 1> {
  let summary = "backward kernel of a cell, replaying chunks when chunked";
  let description = [{
    Backward pass of one layer of cell `cell`: from the forward inputs, `y`
    and the saved values of `rnn.cell_fwd`, and the cotangents of `y` and
    the final states, writes the gradients of `x`, the initial states and
    the weights (with `reset_states`, also theirs, `grad_<state>_reset`
    after the initial states'). Each step's gradients of the
    pre-activations overwrite the saved values the cell replays (they are
    read and written); per block of `block` steps they become `grad_x` and the block's share of the weight
    and bias gradients in one GEMM each, so that only the recurrent product
    is left per step. Without a chunk it reads every saved value and not
    the biases.

    With `chunk = K` (a multiple of the block, or T) it reads only `y` and
    the checkpoint roles of the cell at chunk entries, and the biases:
    chunks are taken last to first, each replayed from its checkpoint into
    K-step scratch with the forward's operations and GEMM blocks, then
    differentiated block by block. Gradients are bitwise those without a
    chunk on the saved values.

    ```mlir
    %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh = rnn.cell_bwd #rnn.lstm block(2)
        ins(%x, %is_init) states(%h0, %c0) weights(%w_ih, %w_hh)
        saved(y %y, gates %gates, cells %cells)
        cotangents(%dy, %dhn, %dcn)
        outs(%o0, %o1, %o2, %o3, %o4, %o5, %o6)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<20x3xf32>, tensor<20x5xf32>,
          tensor<8x4x5xf32>, tensor<8x4x20xf32>, tensor<8x4x5xf32>,
          tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
        -> tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
           tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
    ```
  }];
  let assemblyFormat = [{
    $cell (`block` `(` $block^ `)`)? (`rows` `(` $rows^ `)`)?
    (`chunk` `(` $chunk^ `)`)?
    `ins` `(` $x `,` $isInit `)` `states` `(` $states `)`
    (`reset_states` `(` $resetStates^ `)`)?
    `weights` `(` $weights `)`
    `saved` `(` custom<RoleOperands>(ref($cell), ref($chunk), "kKind",
                                     "kSavedGroup", $savedValues) `)`
    `cotangents` `(` $cotangents `)` `outs` `(` $outputs `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
}

def RNN_CellReplayOp : RNN_KernelOp<"cell_replay", "Replay",
    (ins OptionalAttr<TypeAttr>:$storage),
    !listconcat(RNN_KernelInputGroups, [RNN_SavedGroup, RNN_OutsGroup]), 1, [{
    /// A replay covers the whole sequence: no chunk.
    ::std::optional<uint64_t> getChunk() { return ::std::nullopt; }
  }]> {
  let summary = "a cell's replayed values recomputed from the saved states";
  let description = [{
    Recomputes the replayed roles of cell `cell` (LSTM: `gates`; GRU:
    `gates` and `hn_proj`) for every step from `y` and the saved values the
    cell does not replay (LSTM: `cells`), with the same operations in the
    same order as `rnn.cell_fwd`, so the result is bitwise what the forward
    computed. `rnn-rematerialize` places it before the backward when the
    policy does not save the gates.

    ```mlir
    %gates = rnn.cell_replay #rnn.lstm block(2)
        ins(%x, %is_init) states(%h0, %c0)
        weights(%w_ih, %w_hh, %b_ih, %b_hh)
        saved(y %y, cells %cells) outs(gates %g0)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
          tensor<8x4x5xf32>, tensor<8x4x5xf32>, tensor<8x4x20xf32>
        -> tensor<8x4x20xf32>
    ```
  }];
  let assemblyFormat = [{
    $cell (`block` `(` $block^ `)`)? (`rows` `(` $rows^ `)`)?
    `ins` `(` $x `,` $isInit `)` `states` `(` $states `)`
    (`reset_states` `(` $resetStates^ `)`)?
    `weights` `(` $weights `)`
    `saved` `(` custom<RoleOperands>(ref($cell), "nullptr", "kKind",
                                     "kSavedGroup", $savedValues) `)`
    `outs` `(` custom<RoleOperands>(ref($cell), "nullptr", "kKind",
                                    "kOutsGroup", $outputs) `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
}

//===----------------------------------------------------------------------===//
// The GEMM block of a dynamic shape
//===----------------------------------------------------------------------===//

def RNN_BlockStepsOp : RNN_Op<"block_steps", [Pure]> {
  let summary = "the GEMM block of a kernel whose T or B is dynamic";
  let description = [{
    The steps P of a GEMM block of a kernel with `rows(R)` at sequence
    length `steps` and batch size `batch`: the smallest power of two whose
    rows (P * B) reach R, at most T (and at least 1) — the `block` a kernel
    of that static shape has, so that a library for any T and B issues the
    GEMMs of the library specialized to the call's shape.
    `convert-rnn-to-loops` makes it for each kernel of dynamic shape; the
    memory plan reads it as a size of its own (the sizes of the block's
    scratch are multiples of P and P * B); `rnn-expand-block-steps` lowers
    it at the start of each target's lowering. It folds where T and B are
    constants.

    ```mlir
    %p = rnn.block_steps %t, %b rows(256)
    ```
  }];
  let arguments = (ins Index:$steps, Index:$batch, RNN_BlockAttr:$rows);
  let results = (outs Index:$result);
  let assemblyFormat = "$steps `,` $batch `rows` `(` $rows `)` attr-dict";
  let hasFolder = 1;
}

def RNN_ChunkStepsOp : RNN_Op<"chunk_steps", [Pure]> {
  let summary = "the chunk of a checkpointed kernel whose T or B is dynamic";
  let description = [{
    The steps K' a chunk of `chunk(K)` steps runs at sequence length
    `steps` in GEMM blocks of `block` (an `rnn.block_steps`): K rounded up
    to whole blocks, at most T — the `chunk` a kernel of that static shape
    has, so that a replayed chunk issues the forward's GEMM blocks. The
    checkpoints of such a kernel are `arith.ceildivui %t, %k` per call.
    `rnn-rematerialize` and `convert-rnn-to-loops` make it for each
    chunked kernel of dynamic shape; the memory plan reads it (K) and the
    checkpoint count (N) as sizes of their own; `rnn-expand-block-steps`
    lowers it. It folds where T and the block are constants.

    ```mlir
    %k = rnn.chunk_steps %t, %p chunk(8)
    ```
  }];
  let arguments = (ins Index:$steps, Index:$block, RNN_ChunkAttr:$chunk);
  let results = (outs Index:$result);
  let assemblyFormat = "$steps `,` $block `chunk` `(` $chunk `)` attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Phase marker
//===----------------------------------------------------------------------===//

def RNN_BeginBackwardOp : RNN_Op<"begin_backward",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "marks the boundary between forward and backward";
  let description = [{
    Placed by `rnn-autodiff` after the last forward kernel. The runtime
    times the phases and measures their memory peaks from it, and
    `saved_bytes` is what is allocated (results excluded) when it runs.

    ```mlir
    rnn.begin_backward
    ```

    It stands directly in a function's body, at most once per function.
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Lanes: a wavefront of kernels on streams of their own.
//===----------------------------------------------------------------------===//

// The lane ops order device work across the lanes of a wavefront (see
// `rnn.fork`). They read and write no buffer but order work that does, so
// they are given a write effect that keeps every pass from moving or
// deleting them.
class RNN_LaneOp<string mnemonic, list<Trait> traits = []>
    : RNN_Op<mnemonic, !listconcat(traits, [MemoryEffects<[MemWrite]>])>;

def RNN_ForkOp : RNN_LaneOp<"fork"> {
  let summary = "starts a wavefront: lanes that may run at once";
  let description = [{
    In the body of a function, the ops from `rnn.fork` to the next
    `rnn.join` of the same block run on lanes: `rnn.lane n` puts the ops after it on lane n, which on a GPU is a
    stream of its own. Lane 0 goes on with the step's own stream; a lane
    n > 0 starts after everything issued before the fork, and the join
    waits for every lane. Between the two, work on different lanes is
    ordered only by `rnn.signal` and `rnn.wait`. On the CPU the ops after
    the fork run in program order, as written, which is a valid order of
    the lanes.

    No buffer is freed between a fork and its join, so that no lane reuses
    memory another lane may still read (rnn-early-free keeps the frees
    after the join).

    ```mlir
    rnn.fork
    rnn.lane 0
    ... // layer 0: rnn.signal after each block
    rnn.lane 1
    ... // layer 1: rnn.wait before each block
    rnn.join
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def RNN_LaneSwitchOp : RNN_LaneOp<"lane"> {
  let summary = "puts the ops after it on a lane";
  let description = [{
    The ops after it, up to the next `rnn.lane` or `rnn.join`, run on lane
    `lane` of the enclosing fork.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative, IntMaxValue<64>]>:$lane);
  let assemblyFormat = "$lane attr-dict";
  let hasVerifier = 1;
}

def RNN_SignalOp : RNN_LaneOp<"signal"> {
  let summary = "marks the work of the lane so far as done to waiters";
  let description = [{
    Records signal `slot`: an `rnn.wait` of the same slot on another lane
    orders the work after it behind everything this lane issued before the
    signal.
  }];
  let arguments = (ins Index:$slot);
  let assemblyFormat = "$slot attr-dict";
  let hasVerifier = 1;
}

def RNN_WaitOp : RNN_LaneOp<"wait"> {
  let summary = "waits for a signal of another lane";
  let description = [{
    The lane's work after it starts once the work before `rnn.signal` of
    `slot` is done. The slot must have been signalled since the fork.
  }];
  let arguments = (ins Index:$slot);
  let assemblyFormat = "$slot attr-dict";
  let hasVerifier = 1;
}

def RNN_JoinOp : RNN_LaneOp<"join"> {
  let summary = "ends a wavefront";
  let description = [{
    Everything after it runs after the work of every lane of the fork.
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

#endif // RNN_DIALECT_RNNOPS_TD
