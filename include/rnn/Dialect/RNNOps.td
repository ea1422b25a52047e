//===- RNNOps.td - rnn dialect operations ------------------*- tablegen -*-===//
//
// Model-level ops (rnn.lstm, rnn.gru), the destination-style kernels that
// training is built from (rnn.*_fwd, rnn.*_bwd), and the phase marker.
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

def RNN_LSTMOp : RNN_Op<"lstm", [Pure,
    DeclareOpInterfaceMethods<RNN_LayerOpInterface>]> {
  let summary = "one LSTM layer over T steps with per-step state resets";
  let description = [{
    Runs one LSTM layer over a time-major sequence. The state entering step
    `t` for batch column `b` is zero where `is_init[t, b]`, else the state
    left by step `t - 1` (`h0`/`c0` for `t = 0`). Gates follow PyTorch's
    order `i, f, g, o`; weights have PyTorch's layout
    (`weight_ih: [4H, I]`, `weight_hh: [4H, H]`, biases `[4H]`).

    ```mlir
    %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
        weights(%w_ih, %w_hh, %b_ih, %b_hh)
        : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
           tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
        -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$isInit,
      AnyRankedTensor:$h0, AnyRankedTensor:$c0, AnyRankedTensor:$weightIh,
      AnyRankedTensor:$weightHh, AnyRankedTensor:$biasIh,
      AnyRankedTensor:$biasHh);
  let results = (outs AnyRankedTensor:$y, AnyRankedTensor:$hN,
      AnyRankedTensor:$cN);
  let assemblyFormat = [{
    $x `reset` $isInit `state` `(` $h0 `,` $c0 `)`
    `weights` `(` $weightIh `,` $weightHh `,` $biasIh `,` $biasHh `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def RNN_GRUOp : RNN_Op<"gru", [Pure,
    DeclareOpInterfaceMethods<RNN_LayerOpInterface>]> {
  let summary = "one GRU layer over T steps with per-step state resets";
  let description = [{
    Runs one GRU layer over a time-major sequence with the reset rule of
    `rnn.lstm`. Gates follow PyTorch's order `r, z, n`, with
    `n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`.

    ```mlir
    %y, %h_n = rnn.gru %x reset %is_init state(%h0)
        weights(%w_ih, %w_hh, %b_ih, %b_hh)
        : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
           tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
        -> (tensor<8x4x5xf32>, tensor<4x5xf32>)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$isInit,
      AnyRankedTensor:$h0, AnyRankedTensor:$weightIh,
      AnyRankedTensor:$weightHh, AnyRankedTensor:$biasIh,
      AnyRankedTensor:$biasHh);
  let results = (outs AnyRankedTensor:$y, AnyRankedTensor:$hN);
  let assemblyFormat = [{
    $x `reset` $isInit `state` `(` $h0 `)`
    `weights` `(` $weightIh `,` $weightHh `,` $biasIh `,` $biasHh `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Training kernels (destination style)
//===----------------------------------------------------------------------===//

// Common shape of the kernels: every operand is named, the last `numInits`
// operands are the destinations, tensor form returns one result per
// destination and memref form returns nothing.
class RNN_KernelOp<string mnemonic, int numInits, string cellAttr,
                   string phase, list<Trait> traits = []>
    : RNN_Op<mnemonic, !listconcat(traits, [
        DestinationStyleOpInterface,
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
        DeclareOpInterfaceMethods<RNN_KernelOpInterface>])> {
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let hasVerifier = 1;
  // Memory effects in memref form: inputs are read, destinations written.
  // The cell and the phase come from the class parameters.
  let extraClassDefinition = [{
    void $cppClass::getEffects(
        ::llvm::SmallVectorImpl<::mlir::SideEffects::EffectInstance<
            ::mlir::MemoryEffects::Effect>> &effects) {
      addKernelEffects(*this, kNumInits, effects);
    }
    ::mlir::rnn::CellAttrInterface $cppClass::getCell() {
      return ::mlir::rnn::}] # cellAttr # [{::get(getContext());
    }
    ::llvm::StringRef $cppClass::getPhase() { return "}] # phase # [{"; }
  }];
  code kernelClassDecl = [{
    static constexpr unsigned kNumInits = }] # numInits # [{;
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(
          getOperation(), getOperation()->getNumOperands() - kNumInits,
          kNumInits);
    }
    /// True when the operands are buffers (after bufferization).
    bool hasPureBufferSemantics() {
      return ::llvm::isa<::mlir::MemRefType>(getX().getType());
    }
  }];
}

def RNN_LSTMFwdOp : RNN_KernelOp<"lstm_fwd", 5, "LSTMCellAttr", "fwd"> {
  let summary = "LSTM forward kernel that also writes what backward reads";
  let description = [{
    Forward pass of one LSTM layer (semantics of `rnn.lstm`) writing, besides
    `y`, `h_n`, `c_n`, the values the backward reads: `gates` `[T, B, 4H]`
    (activated `i, f, g, o` per step) and `cells` `[T, B, H]` (`c_t` per
    step). These saved outputs carry their role in their name; a consumer
    that does not read them leaves stores that `rnn-dse` deletes. The input
    projection is computed per GEMM block of `block` steps.

    With `chunk = K` (set by `rnn-rematerialize` under `policy=chunk:K`; a
    multiple of the block, or T), `cells` is `[ceil(T / K), B, H]`: entry
    `w` is the cell state entering chunk `w` of K steps (before the reset
    mask; `c0` for chunk 0), all the backward needs besides `y` to replay
    the chunk.

    ```mlir
    %y, %h_n, %c_n, %gates, %cells = rnn.lstm_fwd block(2)
        ins(%x, %is_init, %h0, %c0, %w_ih, %w_hh, %b_ih, %b_hh)
        outs(%y0, %hn0, %cn0) saved(gates %g0, cells %c0s)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
          tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<8x4x20xf32>, tensor<8x4x5xf32>
        -> tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
           tensor<8x4x20xf32>, tensor<8x4x5xf32>
    ```
  }];
  let arguments = (ins RNN_BlockAttr:$block,
      RNN_TensorOrMemRef:$x, RNN_TensorOrMemRef:$isInit,
      RNN_TensorOrMemRef:$h0, RNN_TensorOrMemRef:$c0,
      RNN_TensorOrMemRef:$weightIh, RNN_TensorOrMemRef:$weightHh,
      RNN_TensorOrMemRef:$biasIh, RNN_TensorOrMemRef:$biasHh,
      RNN_TensorOrMemRef:$y, RNN_TensorOrMemRef:$hN, RNN_TensorOrMemRef:$cN,
      RNN_TensorOrMemRef:$gates, RNN_TensorOrMemRef:$cells,
      OptionalAttr<RNN_ChunkAttr>:$chunk);
  let assemblyFormat = [{
    `block` `(` $block `)`
    (`chunk` `(` $chunk^ `)`)?
    `ins` `(` $x `,` $isInit `,` $h0 `,` $c0 `,` $weightIh `,` $weightHh `,`
      $biasIh `,` $biasHh `)`
    `outs` `(` $y `,` $hN `,` $cN `)`
    `saved` `(` `gates` $gates `,` `cells` $cells `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
  let extraClassDeclaration = kernelClassDecl # [{
    /// Roles of the destinations, in operand order.
    static ::llvm::ArrayRef<::llvm::StringRef> getInitRoles() {
      static const ::llvm::StringRef roles[] = {"y", "h_n", "c_n",
                                                "gates", "cells"};
      return roles;
    }
    /// Roles of the saved outputs (the last destinations).
    static ::llvm::ArrayRef<::llvm::StringRef> getSavedRoles() {
      static const ::llvm::StringRef roles[] = {"gates", "cells"};
      return roles;
    }
  }];
}

def RNN_LSTMBwdOp : RNN_KernelOp<"lstm_bwd", 7, "LSTMCellAttr", "bwd"> {
  let summary = "LSTM backward kernel";
  let description = [{
    Backward pass of one LSTM layer: from the forward inputs, the saved
    `y`, `gates` and `cells` of `rnn.lstm_fwd`, and the cotangents of `y`,
    `h_n`, `c_n`, writes the gradients of `x`, `h0`, `c0` and the weights.
    Each step's gate gradients overwrite its saved gates (`gates` is read
    and written); per block of `block` steps they become `grad_x` and the
    block's share of the weight and bias gradients in one GEMM each, so
    that only the recurrent product is left per step.

    ```mlir
    %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh = rnn.lstm_bwd block(2)
        ins(%x, %is_init, %h0, %c0, %w_ih, %w_hh)
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
  let arguments = (ins RNN_BlockAttr:$block,
      RNN_TensorOrMemRef:$x, RNN_TensorOrMemRef:$isInit,
      RNN_TensorOrMemRef:$h0, RNN_TensorOrMemRef:$c0,
      RNN_TensorOrMemRef:$weightIh, RNN_TensorOrMemRef:$weightHh,
      RNN_TensorOrMemRef:$y, RNN_TensorOrMemRef:$gates,
      RNN_TensorOrMemRef:$cells, RNN_TensorOrMemRef:$gradY,
      RNN_TensorOrMemRef:$gradHN, RNN_TensorOrMemRef:$gradCN,
      RNN_TensorOrMemRef:$gradX, RNN_TensorOrMemRef:$gradH0,
      RNN_TensorOrMemRef:$gradC0, RNN_TensorOrMemRef:$gradWeightIh,
      RNN_TensorOrMemRef:$gradWeightHh, RNN_TensorOrMemRef:$gradBiasIh,
      RNN_TensorOrMemRef:$gradBiasHh);
  let assemblyFormat = [{
    `block` `(` $block `)`
    `ins` `(` $x `,` $isInit `,` $h0 `,` $c0 `,` $weightIh `,` $weightHh `)`
    `saved` `(` `y` $y `,` `gates` $gates `,` `cells` $cells `)`
    `cotangents` `(` $gradY `,` $gradHN `,` $gradCN `)`
    `outs` `(` $gradX `,` $gradH0 `,` $gradC0 `,` $gradWeightIh `,`
      $gradWeightHh `,` $gradBiasIh `,` $gradBiasHh `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
  let extraClassDeclaration = kernelClassDecl # [{
    /// Roles of the destinations, in operand order.
    static ::llvm::ArrayRef<::llvm::StringRef> getInitRoles() {
      static const ::llvm::StringRef roles[] = {
          "grad_x", "grad_h0", "grad_c0", "grad_weight_ih", "grad_weight_hh",
          "grad_bias_ih", "grad_bias_hh"};
      return roles;
    }
  }];
}

def RNN_GRUFwdOp : RNN_KernelOp<"gru_fwd", 4, "GRUCellAttr", "fwd"> {
  let summary = "GRU forward kernel that also writes what backward reads";
  let description = [{
    Forward pass of one GRU layer (semantics of `rnn.gru`) writing, besides
    `y` and `h_n`, the saved values `gates` `[T, B, 3H]` (activated
    `r, z, n`) and `hn_proj` `[T, B, H]` (`W_hn h + b_hn` per step).
    `y` is all the backward of `rnn.gru_chunked_bwd` needs.

    ```mlir
    %y, %h_n, %gates, %hn = rnn.gru_fwd block(2)
        ins(%x, %is_init, %h0, %w_ih, %w_hh, %b_ih, %b_hh)
        outs(%y0, %hn0) saved(gates %g0, hn_proj %p0)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
          tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>,
          tensor<8x4x5xf32>, tensor<4x5xf32>,
          tensor<8x4x15xf32>, tensor<8x4x5xf32>
        -> tensor<8x4x5xf32>, tensor<4x5xf32>,
           tensor<8x4x15xf32>, tensor<8x4x5xf32>
    ```
  }];
  let arguments = (ins RNN_BlockAttr:$block,
      RNN_TensorOrMemRef:$x, RNN_TensorOrMemRef:$isInit,
      RNN_TensorOrMemRef:$h0, RNN_TensorOrMemRef:$weightIh,
      RNN_TensorOrMemRef:$weightHh, RNN_TensorOrMemRef:$biasIh,
      RNN_TensorOrMemRef:$biasHh, RNN_TensorOrMemRef:$y,
      RNN_TensorOrMemRef:$hN, RNN_TensorOrMemRef:$gates,
      RNN_TensorOrMemRef:$hnProj);
  let assemblyFormat = [{
    `block` `(` $block `)`
    `ins` `(` $x `,` $isInit `,` $h0 `,` $weightIh `,` $weightHh `,`
      $biasIh `,` $biasHh `)`
    `outs` `(` $y `,` $hN `)`
    `saved` `(` `gates` $gates `,` `hn_proj` $hnProj `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
  let extraClassDeclaration = kernelClassDecl # [{
    /// Roles of the destinations, in operand order.
    static ::llvm::ArrayRef<::llvm::StringRef> getInitRoles() {
      static const ::llvm::StringRef roles[] = {"y", "h_n", "gates", "hn_proj"};
      return roles;
    }
    /// Roles of the saved outputs (the last destinations).
    static ::llvm::ArrayRef<::llvm::StringRef> getSavedRoles() {
      static const ::llvm::StringRef roles[] = {"gates", "hn_proj"};
      return roles;
    }
  }];
}

def RNN_GRUBwdOp : RNN_KernelOp<"gru_bwd", 6, "GRUCellAttr", "bwd"> {
  let summary = "GRU backward kernel";
  let description = [{
    Backward pass of one GRU layer from the saved `y`, `gates` and `hn_proj`
    of `rnn.gru_fwd` and the cotangents of `y` and `h_n`. Each step's
    gradients of the input projection overwrite its saved gates, and the
    `n` part of those of the hidden projection its saved `hn_proj` (both
    are read and written); per block of `block` steps they become `grad_x`
    and the block's share of the weight and bias gradients.

    ```mlir
    %gx, %gh0, %gwi, %gwh, %gbi, %gbh = rnn.gru_bwd block(2)
        ins(%x, %is_init, %h0, %w_ih, %w_hh)
        saved(y %y, gates %gates, hn_proj %hn)
        cotangents(%dy, %dhn)
        outs(%o0, %o1, %o2, %o3, %o4, %o5)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
          tensor<15x3xf32>, tensor<15x5xf32>,
          tensor<8x4x5xf32>, tensor<8x4x15xf32>, tensor<8x4x5xf32>,
          tensor<8x4x5xf32>, tensor<4x5xf32>,
          tensor<8x4x3xf32>, tensor<4x5xf32>,
          tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
        -> tensor<8x4x3xf32>, tensor<4x5xf32>,
           tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
    ```
  }];
  let arguments = (ins RNN_BlockAttr:$block,
      RNN_TensorOrMemRef:$x, RNN_TensorOrMemRef:$isInit,
      RNN_TensorOrMemRef:$h0, RNN_TensorOrMemRef:$weightIh,
      RNN_TensorOrMemRef:$weightHh, RNN_TensorOrMemRef:$y,
      RNN_TensorOrMemRef:$gates, RNN_TensorOrMemRef:$hnProj,
      RNN_TensorOrMemRef:$gradY, RNN_TensorOrMemRef:$gradHN,
      RNN_TensorOrMemRef:$gradX, RNN_TensorOrMemRef:$gradH0,
      RNN_TensorOrMemRef:$gradWeightIh, RNN_TensorOrMemRef:$gradWeightHh,
      RNN_TensorOrMemRef:$gradBiasIh, RNN_TensorOrMemRef:$gradBiasHh);
  let assemblyFormat = [{
    `block` `(` $block `)`
    `ins` `(` $x `,` $isInit `,` $h0 `,` $weightIh `,` $weightHh `)`
    `saved` `(` `y` $y `,` `gates` $gates `,` `hn_proj` $hnProj `)`
    `cotangents` `(` $gradY `,` $gradHN `)`
    `outs` `(` $gradX `,` $gradH0 `,` $gradWeightIh `,` $gradWeightHh `,`
      $gradBiasIh `,` $gradBiasHh `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
  let extraClassDeclaration = kernelClassDecl # [{
    /// Roles of the destinations, in operand order.
    static ::llvm::ArrayRef<::llvm::StringRef> getInitRoles() {
      static const ::llvm::StringRef roles[] = {
          "grad_x", "grad_h0", "grad_weight_ih", "grad_weight_hh",
          "grad_bias_ih", "grad_bias_hh"};
      return roles;
    }
  }];
}

def RNN_LSTMChunkedBwdOp
    : RNN_KernelOp<"lstm_chunked_bwd", 7, "LSTMCellAttr", "chunked_bwd"> {
  let summary = "LSTM backward kernel that replays each chunk of K steps";
  let description = [{
    Backward pass of one LSTM layer whose forward ran with `chunk = K` and
    saved only `y` and the cell state entering each chunk (`cells`,
    `[ceil(T / K), B, H]`). Chunks are taken last to first; each is replayed
    from its checkpoint into K-step scratch (gates, cells), with the
    forward's operations and GEMM blocks, and then differentiated block by
    block as `rnn.lstm_bwd` does. The scratch is reused chunk after chunk,
    so the backward holds K steps of gates instead of T. K is a multiple
    of the block (or T). Gradients are bitwise those of `rnn.lstm_bwd` on
    the saved values.

    ```mlir
    %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh = rnn.lstm_chunked_bwd
        block(1) chunk(3)
        ins(%x, %is_init, %h0, %c0, %w_ih, %w_hh, %b_ih, %b_hh)
        saved(y %y, cells %ck)
        cotangents(%dy, %dhn, %dcn)
        outs(%o0, %o1, %o2, %o3, %o4, %o5, %o6)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
          tensor<8x4x5xf32>, tensor<3x4x5xf32>,
          tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
        -> tensor<8x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
           tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>
    ```
  }];
  let arguments = (ins RNN_BlockAttr:$block, RNN_ChunkAttr:$chunk,
      RNN_TensorOrMemRef:$x,
      RNN_TensorOrMemRef:$isInit, RNN_TensorOrMemRef:$h0,
      RNN_TensorOrMemRef:$c0, RNN_TensorOrMemRef:$weightIh,
      RNN_TensorOrMemRef:$weightHh, RNN_TensorOrMemRef:$biasIh,
      RNN_TensorOrMemRef:$biasHh, RNN_TensorOrMemRef:$y,
      RNN_TensorOrMemRef:$cells, RNN_TensorOrMemRef:$gradY,
      RNN_TensorOrMemRef:$gradHN, RNN_TensorOrMemRef:$gradCN,
      RNN_TensorOrMemRef:$gradX, RNN_TensorOrMemRef:$gradH0,
      RNN_TensorOrMemRef:$gradC0, RNN_TensorOrMemRef:$gradWeightIh,
      RNN_TensorOrMemRef:$gradWeightHh, RNN_TensorOrMemRef:$gradBiasIh,
      RNN_TensorOrMemRef:$gradBiasHh);
  let assemblyFormat = [{
    `block` `(` $block `)`
    `chunk` `(` $chunk `)`
    `ins` `(` $x `,` $isInit `,` $h0 `,` $c0 `,` $weightIh `,` $weightHh `,`
      $biasIh `,` $biasHh `)`
    `saved` `(` `y` $y `,` `cells` $cells `)`
    `cotangents` `(` $gradY `,` $gradHN `,` $gradCN `)`
    `outs` `(` $gradX `,` $gradH0 `,` $gradC0 `,` $gradWeightIh `,`
      $gradWeightHh `,` $gradBiasIh `,` $gradBiasHh `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
  let extraClassDeclaration = kernelClassDecl # [{
    static ::llvm::ArrayRef<::llvm::StringRef> getInitRoles() {
      static const ::llvm::StringRef roles[] = {
          "grad_x", "grad_h0", "grad_c0", "grad_weight_ih", "grad_weight_hh",
          "grad_bias_ih", "grad_bias_hh"};
      return roles;
    }
  }];
}

def RNN_GRUChunkedBwdOp
    : RNN_KernelOp<"gru_chunked_bwd", 6, "GRUCellAttr", "chunked_bwd"> {
  let summary = "GRU backward kernel that replays each chunk of K steps";
  let description = [{
    Backward pass of one GRU layer from `y` alone: chunks of K steps are
    taken last to first, replayed into K-step scratch (`gates`, `hn_proj`,
    input projection) from the state `y` holds, and differentiated block by
    block as `rnn.gru_bwd` does. K is a multiple of the block (or T).
    Gradients are bitwise those of `rnn.gru_bwd` on the saved values.

    ```mlir
    %gx, %gh0, %gwi, %gwh, %gbi, %gbh = rnn.gru_chunked_bwd
        block(1) chunk(3)
        ins(%x, %is_init, %h0, %w_ih, %w_hh, %b_ih, %b_hh)
        saved(y %y)
        cotangents(%dy, %dhn)
        outs(%o0, %o1, %o2, %o3, %o4, %o5)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
          tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>,
          tensor<8x4x5xf32>,
          tensor<8x4x5xf32>, tensor<4x5xf32>,
          tensor<8x4x3xf32>, tensor<4x5xf32>,
          tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
        -> tensor<8x4x3xf32>, tensor<4x5xf32>,
           tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>
    ```
  }];
  let arguments = (ins RNN_BlockAttr:$block, RNN_ChunkAttr:$chunk,
      RNN_TensorOrMemRef:$x,
      RNN_TensorOrMemRef:$isInit, RNN_TensorOrMemRef:$h0,
      RNN_TensorOrMemRef:$weightIh, RNN_TensorOrMemRef:$weightHh,
      RNN_TensorOrMemRef:$biasIh, RNN_TensorOrMemRef:$biasHh,
      RNN_TensorOrMemRef:$y, RNN_TensorOrMemRef:$gradY,
      RNN_TensorOrMemRef:$gradHN, RNN_TensorOrMemRef:$gradX,
      RNN_TensorOrMemRef:$gradH0, RNN_TensorOrMemRef:$gradWeightIh,
      RNN_TensorOrMemRef:$gradWeightHh, RNN_TensorOrMemRef:$gradBiasIh,
      RNN_TensorOrMemRef:$gradBiasHh);
  let assemblyFormat = [{
    `block` `(` $block `)`
    `chunk` `(` $chunk `)`
    `ins` `(` $x `,` $isInit `,` $h0 `,` $weightIh `,` $weightHh `,`
      $biasIh `,` $biasHh `)`
    `saved` `(` `y` $y `)`
    `cotangents` `(` $gradY `,` $gradHN `)`
    `outs` `(` $gradX `,` $gradH0 `,` $gradWeightIh `,` $gradWeightHh `,`
      $gradBiasIh `,` $gradBiasHh `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
  let extraClassDeclaration = kernelClassDecl # [{
    static ::llvm::ArrayRef<::llvm::StringRef> getInitRoles() {
      static const ::llvm::StringRef roles[] = {
          "grad_x", "grad_h0", "grad_weight_ih", "grad_weight_hh",
          "grad_bias_ih", "grad_bias_hh"};
      return roles;
    }
  }];
}

def RNN_LSTMReplayOp : RNN_KernelOp<"lstm_replay", 1, "LSTMCellAttr", "replay"> {
  let summary = "LSTM gates recomputed from the saved states";
  let description = [{
    Recomputes the activated gates `[T, B, 4H]` of every step from the
    states the forward left (`y` and `cells`), with the same operations in
    the same order as `rnn.lstm_fwd`, so the result is bitwise what the
    forward computed. `rnn-rematerialize` places it before the backward
    when the policy does not save the gates.

    ```mlir
    %gates = rnn.lstm_replay block(2)
        ins(%x, %is_init, %h0, %c0, %w_ih, %w_hh, %b_ih, %b_hh)
        states(%y, %cells) outs(%g0)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
          tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
          tensor<8x4x5xf32>, tensor<8x4x5xf32>, tensor<8x4x20xf32>
        -> tensor<8x4x20xf32>
    ```
  }];
  let arguments = (ins RNN_BlockAttr:$block,
      RNN_TensorOrMemRef:$x, RNN_TensorOrMemRef:$isInit,
      RNN_TensorOrMemRef:$h0, RNN_TensorOrMemRef:$c0,
      RNN_TensorOrMemRef:$weightIh, RNN_TensorOrMemRef:$weightHh,
      RNN_TensorOrMemRef:$biasIh, RNN_TensorOrMemRef:$biasHh,
      RNN_TensorOrMemRef:$y, RNN_TensorOrMemRef:$cells,
      RNN_TensorOrMemRef:$gates);
  let assemblyFormat = [{
    `block` `(` $block `)`
    `ins` `(` $x `,` $isInit `,` $h0 `,` $c0 `,` $weightIh `,` $weightHh `,`
      $biasIh `,` $biasHh `)`
    `states` `(` $y `,` $cells `)` `outs` `(` $gates `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
  let extraClassDeclaration = kernelClassDecl # [{
    static ::llvm::ArrayRef<::llvm::StringRef> getInitRoles() {
      static const ::llvm::StringRef roles[] = {"gates"};
      return roles;
    }
  }];
}

def RNN_GRUReplayOp : RNN_KernelOp<"gru_replay", 2, "GRUCellAttr", "replay"> {
  let summary = "GRU gates recomputed from the saved states";
  let description = [{
    Recomputes `gates` `[T, B, 3H]` and `hn_proj` `[T, B, H]` of every step
    from `y`, bitwise as `rnn.gru_fwd` computed them.

    ```mlir
    %gates, %hn = rnn.gru_replay block(2)
        ins(%x, %is_init, %h0, %w_ih, %w_hh, %b_ih, %b_hh)
        states(%y) outs(%g0, %p0)
        : tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
          tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>,
          tensor<8x4x5xf32>, tensor<8x4x15xf32>, tensor<8x4x5xf32>
        -> tensor<8x4x15xf32>, tensor<8x4x5xf32>
    ```
  }];
  let arguments = (ins RNN_BlockAttr:$block,
      RNN_TensorOrMemRef:$x, RNN_TensorOrMemRef:$isInit,
      RNN_TensorOrMemRef:$h0, RNN_TensorOrMemRef:$weightIh,
      RNN_TensorOrMemRef:$weightHh, RNN_TensorOrMemRef:$biasIh,
      RNN_TensorOrMemRef:$biasHh, RNN_TensorOrMemRef:$y,
      RNN_TensorOrMemRef:$gates, RNN_TensorOrMemRef:$hnProj);
  let assemblyFormat = [{
    `block` `(` $block `)`
    `ins` `(` $x `,` $isInit `,` $h0 `,` $weightIh `,` $weightHh `,`
      $biasIh `,` $biasHh `)`
    `states` `(` $y `)` `outs` `(` $gates `,` $hnProj `)`
    attr-dict `:` type(operands) (`->` type($results)^)?
  }];
  let extraClassDeclaration = kernelClassDecl # [{
    static ::llvm::ArrayRef<::llvm::StringRef> getInitRoles() {
      static const ::llvm::StringRef roles[] = {"gates", "hn_proj"};
      return roles;
    }
  }];
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
  }];
  let assemblyFormat = "attr-dict";
}

#endif // RNN_DIALECT_RNNOPS_TD
