//===- RNNDialect.td - rnn dialect definition --------------*- tablegen -*-===//
//
// The rnn dialect: multi-layer recurrent networks (the cells of RNNCells.td)
// over time with a per-step state reset mask, and the forward/backward
// kernels that the compiler derives from them for training.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNDIALECT_TD
#define RNN_DIALECT_RNNDIALECT_TD

include "mlir/IR/OpBase.td"

def RNN_Dialect : Dialect {
  let name = "rnn";
  let summary = "Recurrent networks with mid-sequence state resets";
  let description = [{
    One op per recurrent layer, time-major. `rnn.lstm` and `rnn.gru` are the
    model level: value semantics, PyTorch weight layout and gate order, and
    the reset mask `is_init` (state entering step t is zero where
    `is_init[t, b]`). `rnn-autodiff` turns them into destination-style
    kernels generic over the cell (`rnn.cell_fwd #rnn.lstm`, `rnn.cell_bwd`,
    `rnn.cell_replay`) whose extra outputs are
    the values the backward reads, each with a named role, so that later
    passes decide what is saved and what is recomputed.
  }];
  let cppNamespace = "::mlir::rnn";
  let useDefaultAttributePrinterParser = 1;
  // rnn.block_steps folds to an index constant (arith.constant).
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  // The discardable attributes the compiler reads and writes, with generated
  // helpers (RNNDialect::<Name>AttrHelper): the names PyTorch gives arrays
  // and the layer (on arguments and results), what lowering records for the
  // memory report (buffer role, kernel, layer), the remat plan, and the
  // memory plan's figures (rnn-plan-memory, rnn-split-training), on a
  // kernel's argument that the kernel writes it (rnn-read-only-kernel-args),
  // and on the functions of a module whose budget fits only with the layers
  // in sequence (rnn-rematerialize; convert-rnn-to-loops forms no wavefront
  // there); and on an argument of dynamic size that is not a model value
  // (the arena, the saved region), the function (T, B) -> bytes that gives
  // its size (rnn-place-in-arena, rnn-split-training). Under a budget for
  // every T and B, each variant of a training function carries its plan's
  // index and the cost model's figures (rnn-rematerialize) and its peak in
  // closed form (rnn-plan-memory), which rnn-dispatch-remat reads.
  let discardableAttrs = (ins
    "::mlir::StringAttr":$name,
    "::mlir::IntegerAttr":$layer,
    "::mlir::StringAttr":$role,
    "::mlir::StringAttr":$kernel,
    "::mlir::StringAttr":$remat,
    "::mlir::IntegerAttr":$remat_budget,
    "::mlir::DictionaryAttr":$remat_variant,
    "::mlir::DictionaryAttr":$symbolic_peak,
    "::mlir::UnitAttr":$sequential_layers,
    "::mlir::IntegerAttr":$offset,
    "::mlir::IntegerAttr":$arena_bytes,
    "::mlir::IntegerAttr":$predicted_peak_bytes,
    "::mlir::IntegerAttr":$predicted_fwd_peak_bytes,
    "::mlir::IntegerAttr":$predicted_bwd_peak_bytes,
    "::mlir::IntegerAttr":$predicted_saved_bytes,
    "::mlir::ArrayAttr":$saved,
    "::mlir::IntegerAttr":$saved_bytes,
    "::mlir::DictionaryAttr":$kernel_signatures,
    "::mlir::UnitAttr":$written,
    "::mlir::FlatSymbolRefAttr":$size
  );
  let extraClassDeclaration = [{
    /// Registers the cell attributes (RNNAttrs.cpp).
    void registerAttributes();
  }];
}

#endif // RNN_DIALECT_RNNDIALECT_TD
