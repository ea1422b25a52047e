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
      if (name == "weight_ih")
        return {rows, input};
      if (name == "weight_hh")
        return {rows, hidden};
      if (name == "bias_ih" || name == "bias_hh")
        return {rows};
      return {};
    }
  }];
}

def RNN_LayerOpInterface : OpInterface<"LayerOpInterface"> {
  let cppNamespace = "::mlir::rnn";
  let description = [{
    A model-level layer of a cell over T steps: input `x: [T, B, I]`, reset
    mask `is_init: [T, B]`, the cell's initial states and weights; results
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
  ];
  let extraClassDeclaration = [{
    /// T, B, I of x and H of weight_hh (verified static).
    int64_t getSeqLen() { return inputDim(0); }
    int64_t getBatch() { return inputDim(1); }
    int64_t getInputSize() { return inputDim(2); }
    int64_t getHiddenSize() {
      return ::llvm::cast<::mlir::ShapedType>(getWeights()[1].getType())
          .getDimSize(1);
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
    A training kernel of a cell: its phase (`fwd`, `bwd`, `chunked_bwd`,
    `replay`), its named operands, and the per-step values it saves or
    reads by their role (the cell's saved roles).
  }];
  let methods = [
    InterfaceMethod<"The kernel's cell.", "::mlir::rnn::CellAttrInterface",
                    "getCell">,
    InterfaceMethod<"fwd, bwd, chunked_bwd or replay.", "::llvm::StringRef",
                    "getPhase">,
    InterfaceMethod<"The operand of saved role `role` that the kernel "
                    "writes (fwd, replay: a destination) or reads (bwd, "
                    "chunked_bwd); null if it has none.",
                    "::mlir::OpOperand *", "getSavedOperand",
                    (ins "::llvm::StringRef":$role)>,
    InterfaceMethod<"The initial states, in the cell's state order.",
                    "::llvm::SmallVector<::mlir::Value>",
                    "getInitialStates">,
    InterfaceMethod<"bias_ih and bias_hh, or none (a backward without a "
                    "chunk does not read them).",
                    "::llvm::SmallVector<::mlir::Value>", "getBiases">,
    InterfaceMethod<"The destinations of y and the final states (fwd), in "
                    "the cell's state order; none for other phases.",
                    "::llvm::SmallVector<::mlir::OpOperand *>",
                    "getOutputOperands">,
    InterfaceMethod<"The cotangents grad_y and those of the final states "
                    "(bwd, chunked_bwd); none for other phases.",
                    "::llvm::SmallVector<::mlir::Value>", "getCotangents">,
    InterfaceMethod<"The role of each destination, in order (y, h_n, "
                    "gates, grad_x, ...).",
                    "::llvm::ArrayRef<::llvm::StringRef>",
                    "getDestinationRoles", (ins),
                    [{ return $_op.getInitRoles(); }]>,
    InterfaceMethod<"The input sequence x.", "::mlir::Value", "getInput",
                    (ins), [{ return $_op.getX(); }]>,
    InterfaceMethod<"The reset mask is_init.", "::mlir::Value",
                    "getResetMask", (ins), [{ return $_op.getIsInit(); }]>,
    InterfaceMethod<"The output sequence y (the destination of a fwd, the "
                    "saved y that other phases read).",
                    "::mlir::Value", "getOutput", (ins),
                    [{ return $_op.getY(); }]>,
    InterfaceMethod<"weight_ih.", "::mlir::Value", "getInputWeight",
                    (ins), [{ return $_op.getWeightIh(); }]>,
    InterfaceMethod<"weight_hh.", "::mlir::Value", "getRecurrentWeight",
                    (ins), [{ return $_op.getWeightHh(); }]>,
    InterfaceMethod<"The GEMM block P in steps.", "int64_t", "getBlockSteps",
                    (ins), [{ return $_op.getBlock(); }]>,
  ];
  let extraClassDeclaration = [{
    /// The value of saved role `role` (see getSavedOperand), or null.
    ::mlir::Value getSaved(::llvm::StringRef role) {
      ::mlir::OpOperand *operand = getSavedOperand(role);
      return operand ? operand->get() : ::mlir::Value();
    }
    /// Whether the kernel computes gradients (bwd or chunked_bwd).
    bool isBackward() {
      return getPhase() == "bwd" || getPhase() == "chunked_bwd";
    }
    /// T, B, I of x and H of weight_hh.
    int64_t getSeqLen() { return inputDim(0); }
    int64_t getBatch() { return inputDim(1); }
    int64_t getInputSize() { return inputDim(2); }
    int64_t getHiddenSize() {
      return ::llvm::cast<::mlir::ShapedType>(getRecurrentWeight().getType())
          .getDimSize(1);
    }

  private:
    int64_t inputDim(unsigned i) {
      return ::llvm::cast<::mlir::ShapedType>(getInput().getType())
          .getDimSize(i);
    }
  }];
}

#endif // RNN_DIALECT_RNNINTERFACES_TD
