//===- RNNInterfaces.td - cell and layer interfaces --------*- tablegen -*-===//
//
// CellAttrInterface: the IR facts of a recurrent cell (its gates, states,
// the per-step values a backward may read, the weights' shapes), held by
// the cell attributes #rnn.lstm and #rnn.gru (RNNAttrs.td), so that passes
// ask the cell instead of branching on LSTM or GRU.
//
// LayerOpInterface: the model-level ops (rnn.lstm, rnn.gru) seen as one
// layer of a cell, with named accessors for their operands and results.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNINTERFACES_TD
#define RNN_DIALECT_RNNINTERFACES_TD

include "mlir/IR/OpBase.td"

def RNN_CellAttrInterface : AttrInterface<"CellAttrInterface"> {
  let cppNamespace = "::mlir::rnn";
  let description = [{
    A recurrent cell. Its per-step recurrence has `getNumGates()` gate
    blocks of width H, PyTorch's weights (`weight_ih: [G*H, I]`,
    `weight_hh: [G*H, H]`, `bias_ih`, `bias_hh: [G*H]`), and the states
    `getStateNames()` (`h` first: the state the layer outputs as `y`), each
    `[B, H]`, given as `<name>0` and returned as `<name>_n`.

    The forward kernel writes the per-step values named by
    `getSavedRoles()` for the backward to read; `getReplayedRoles()` are
    those a replay recomputes from the saved states (and the backward
    overwrites with gradients); `getCheckpointRoles()` are the per-step
    states a chunked forward keeps only at chunk entries.
  }];
  let methods = [
    InterfaceMethod<"The cell's name in the IR and in kernel names "
                    "(`lstm`, `gru`).",
                    "::llvm::StringRef", "getCellName">,
    InterfaceMethod<"Number of gate blocks G.", "int64_t", "getNumGates">,
    InterfaceMethod<"The states, `h` first.",
                    "::llvm::ArrayRef<::llvm::StringRef>", "getStateNames">,
    InterfaceMethod<"Per-step values the forward saves for the backward.",
                    "::llvm::ArrayRef<::llvm::StringRef>", "getSavedRoles">,
    InterfaceMethod<"Saved values a replay recomputes (and the backward "
                    "overwrites with gradients).",
                    "::llvm::ArrayRef<::llvm::StringRef>",
                    "getReplayedRoles">,
    InterfaceMethod<"Per-step states a chunked forward keeps only at chunk "
                    "entries.",
                    "::llvm::ArrayRef<::llvm::StringRef>",
                    "getCheckpointRoles">,
    InterfaceMethod<"Elements per step and batch column of saved role "
                    "`role` for hidden size `hidden` (0 for a role the "
                    "cell does not save).",
                    "int64_t", "getRoleWidth",
                    (ins "::llvm::StringRef":$role, "int64_t":$hidden)>,
  ];
  let extraSharedClassDeclaration = [{
    /// Shape of weight `name` (weight_ih, weight_hh, bias_ih, bias_hh) for
    /// input size `input` and hidden size `hidden`; empty for another name.
    ::llvm::SmallVector<int64_t> getWeightShape(::llvm::StringRef name,
                                                int64_t input,
                                                int64_t hidden) {
      int64_t rows = $_attr.getNumGates() * hidden;
      if (name == ::mlir::rnn::kRoleWeightIh)
        return {rows, input};
      if (name == ::mlir::rnn::kRoleWeightHh)
        return {rows, hidden};
      if (name == ::mlir::rnn::kRoleBiasIh ||
          name == ::mlir::rnn::kRoleBiasHh)
        return {rows};
      return {};
    }
  }];
}

def RNN_LayerOpInterface : OpInterface<"LayerOpInterface"> {
  let cppNamespace = "::mlir::rnn";
  let description = [{
    A model-level layer of a cell over T steps: input `x: [T, B, I]`, reset
    mask `is_init: [T, B]`, the cell's initial states, optionally the states
    a reset enters (`[T, B, H]` or `[B, H]` each), and its weights; results
    `y: [T, B, H]` and the final states, in the cell's state order.
  }];
  let methods = [
    InterfaceMethod<"The layer's cell.", "::mlir::rnn::CellAttrInterface",
                    "getCell">,
    InterfaceMethod<"The input sequence x.", "::mlir::Value", "getInput",
                    (ins), [{ return $_op.getX(); }]>,
    InterfaceMethod<"The reset mask is_init.", "::mlir::Value",
                    "getResetMask", (ins), [{ return $_op.getIsInit(); }]>,
    InterfaceMethod<"The initial states, in the cell's state order.",
                    "::llvm::SmallVector<::mlir::Value>",
                    "getInitialStates">,
    InterfaceMethod<"The states a reset step enters (`to(...)`), in the "
                    "cell's state order, or none for zero.",
                    "::llvm::SmallVector<::mlir::Value>", "getResetStates",
                    (ins), [{
      return ::llvm::SmallVector<::mlir::Value>($_op.getResetStates());
    }]>,
    InterfaceMethod<"weight_ih, weight_hh, bias_ih and bias_hh.",
                    "::llvm::SmallVector<::mlir::Value>", "getWeights",
                    (ins), [{
      return {$_op.getWeightIh(), $_op.getWeightHh(), $_op.getBiasIh(),
              $_op.getBiasHh()};
    }]>,
    InterfaceMethod<"The output sequence y.", "::mlir::Value", "getOutput",
                    (ins), [{ return $_op.getY(); }]>,
    InterfaceMethod<"The final states, in the cell's state order.",
                    "::llvm::SmallVector<::mlir::Value>", "getFinalStates">,
    InterfaceMethod<"The element type of the saved values that are not "
                    "states and of the GEMM operands: `storage`, else the "
                    "element type of x.",
                    "::mlir::Type", "getStorageType", (ins), [{
      if (::std::optional<::mlir::Type> storage = $_op.getStorage())
        return *storage;
      return ::llvm::cast<::mlir::ShapedType>($_op.getX().getType())
          .getElementType();
    }]>,
  ];
  let extraClassDeclaration = [{
    /// T, B, I of x and H of weight_hh (T and B ShapedType::kDynamic
    /// where dynamic; the others verified static).
    int64_t getSeqLen() { return inputDim(0); }
    int64_t getBatch() { return inputDim(1); }
    int64_t getInputSize() { return inputDim(2); }
    int64_t getHiddenSize() {
      return ::llvm::cast<::mlir::ShapedType>(getWeights()[1].getType())
          .getDimSize(1);
    }
    /// Whether T or B is dynamic.
    bool hasDynamicShape() {
      return ::mlir::ShapedType::isDynamic(getSeqLen()) ||
             ::mlir::ShapedType::isDynamic(getBatch());
    }

  private:
    int64_t inputDim(unsigned i) {
      return ::llvm::cast<::mlir::ShapedType>(getInput().getType())
          .getDimSize(i);
    }
  }];
}

def RNN_KernelOpInterface : OpInterface<"KernelOpInterface"> {
  let cppNamespace = "::mlir::rnn";
  let description = [{
    A training kernel of a cell (rnn.cell_fwd, rnn.cell_bwd,
    rnn.cell_replay): its phase (`fwd`, `bwd`, `chunked_bwd`, `replay`),
    and its operands by role. The roles of a kernel's operands follow from
    its cell and phase (kernelOperandRoles): `x`, `is_init`, `<state>0`,
    `weight_ih`, ..., `y`, the cell's saved roles, `grad_y`, ..., so that
    passes ask for an operand by what it is, never by its position.
  }];
  let methods = [
    InterfaceMethod<"The kernel's cell.", "::mlir::rnn::CellAttrInterface",
                    "getCell", (ins), [{ return $_op.getCell(); }]>,
    InterfaceMethod<"What the kernel computes.", "::mlir::rnn::KernelPhase",
                    "getPhase", (ins), [{
      return ::mlir::rnn::kernelPhase($_op.kKind,
                                      $_op.getChunk().has_value());
    }]>,
    InterfaceMethod<"The states a reset step enters (`<state>_reset`), "
                    "or none when it enters zero.",
                    "::llvm::SmallVector<::mlir::Value>", "getResetStates",
                    (ins), [{
      return ::llvm::SmallVector<::mlir::Value>($_op.getResetStates());
    }]>,
    InterfaceMethod<"The element type of the saved values that are not "
                    "states and of the GEMM operands: `storage`, else the "
                    "element type of x.",
                    "::mlir::Type", "getStorageType", (ins), [{
      if (::std::optional<::mlir::Type> storage = $_op.getStorage())
        return *storage;
      return ::llvm::cast<::mlir::ShapedType>($_op.getX().getType())
          .getElementType();
    }]>,
    InterfaceMethod<"The GEMM block: P steps, or R rows per call.",
                    "::mlir::rnn::GemmBlock", "getGemmBlock", (ins), [{
      if (auto rows = $_op.getRows())
        return ::mlir::rnn::GemmBlock::ofRows(*rows);
      return ::mlir::rnn::GemmBlock::ofSteps($_op.getBlock().value_or(0));
    }]>,
    InterfaceMethod<"The chunk K in steps of a checkpointed kernel.",
                    "::std::optional<int64_t>", "getChunkSteps", (ins), [{
      if (auto chunk = $_op.getChunk())
        return static_cast<int64_t>(*chunk);
      return ::std::nullopt;
    }]>,
  ];
  let extraClassDeclaration = [{
    /// The role of each operand, in operand order.
    ::llvm::SmallVector<::std::string> getOperandRoles() {
      return ::mlir::rnn::kernelOperandRoles(getCell(), getPhase(),
                                             hasResetStates());
    }
    /// Whether a reset step enters given states (`reset_states`).
    bool hasResetStates() { return !getResetStates().empty(); }

    /// The operand of role `role`, or null if the kernel has none.
    ::mlir::OpOperand *getOperandOf(::llvm::StringRef role);
    /// The value of role `role`, or null.
    ::mlir::Value get(::llvm::StringRef role) {
      ::mlir::OpOperand *operand = getOperandOf(role);
      return operand ? operand->get() : ::mlir::Value();
    }
    /// The operand of saved role `role` (one of the cell's saved roles)
    /// that the kernel writes (fwd, replay: a destination) or reads (bwd,
    /// chunked_bwd); null if it has none.
    ::mlir::OpOperand *getSavedOperand(::llvm::StringRef role) {
      return getOperandOf(role);
    }
    ::mlir::Value getSaved(::llvm::StringRef role) { return get(role); }
    /// The initial states, in the cell's state order.
    ::llvm::SmallVector<::mlir::Value> getInitialStates();
    /// bias_ih and bias_hh, or none (a backward without a chunk does not
    /// read them).
    ::llvm::SmallVector<::mlir::Value> getBiases();
    /// The destinations of y and the final states (fwd), in the cell's
    /// state order; none for other phases.
    ::llvm::SmallVector<::mlir::OpOperand *> getOutputOperands();
    /// The cotangents grad_y and those of the final states (bwd,
    /// chunked_bwd); none for other phases.
    ::llvm::SmallVector<::mlir::Value> getCotangents();
    /// The role of each destination, in order (y, h_n, gates, grad_x, ...).
    ::llvm::SmallVector<::std::string> getDestinationRoles();
    /// The input sequence x, the reset mask is_init, the weights.
    ::mlir::Value getInput() { return get(::mlir::rnn::kRoleX); }
    ::mlir::Value getResetMask() { return get(::mlir::rnn::kRoleIsInit); }
    ::mlir::Value getInputWeight() {
      return get(::mlir::rnn::kRoleWeightIh);
    }
    ::mlir::Value getRecurrentWeight() {
      return get(::mlir::rnn::kRoleWeightHh);
    }
    /// The output sequence y (the destination of a fwd, the saved y that
    /// other phases read).
    ::mlir::Value getOutput() { return get(::mlir::rnn::kRoleY); }
    /// Whether the kernel computes gradients (bwd or chunked_bwd).
    bool isBackward() {
      return getPhase() == ::mlir::rnn::KernelPhase::Bwd ||
             getPhase() == ::mlir::rnn::KernelPhase::ChunkedBwd;
    }
    /// T, B, I of x and H of weight_hh (T and B ShapedType::kDynamic
    /// where dynamic).
    int64_t getSeqLen() { return inputDim(0); }
    int64_t getBatch() { return inputDim(1); }
    int64_t getInputSize() { return inputDim(2); }
    int64_t getHiddenSize() {
      return ::llvm::cast<::mlir::ShapedType>(getRecurrentWeight().getType())
          .getDimSize(1);
    }
    /// Whether T or B is dynamic.
    bool hasDynamicShape() {
      return ::mlir::ShapedType::isDynamic(getSeqLen()) ||
             ::mlir::ShapedType::isDynamic(getBatch());
    }
    /// The GEMM block P of a kernel of static shape.
    int64_t getBlockSteps() { return getGemmBlock().steps; }

  private:
    int64_t inputDim(unsigned i) {
      return ::llvm::cast<::mlir::ShapedType>(getInput().getType())
          .getDimSize(i);
    }
  }];
}

#endif // RNN_DIALECT_RNNINTERFACES_TD
