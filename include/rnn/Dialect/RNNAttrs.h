//===- RNNAttrs.h - rnn cell attributes and interfaces ----------*- C++ -*-===//
//
// The cell interface (CellAttrInterface), the cells' attributes (#rnn.lstm,
// ...: RNNCells.td), and the model-level layer interface
// (LayerOpInterface).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNATTRS_H
#define RNN_DIALECT_RNNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

#include "rnn/Dialect/RNNEnums.h"
#include "rnn/Dialect/RNNRoles.h"

#include "rnn/Dialect/RNNAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "rnn/Dialect/RNNAttrs.h.inc"

#include <optional>
#include <string>

namespace mlir {
class OpBuilder;
namespace rnn {
/// Every cell of the dialect (each attribute of RNNAttrs.td), in the
/// order they are defined.
SmallVector<CellAttrInterface> getCells(MLIRContext *context);

/// The cell whose name (getCellName) is `name`, or null.
CellAttrInterface lookupCell(MLIRContext *context, StringRef name);

/// The cells' names for messages, each after `prefix`, separated by ", "
/// and `last` before the last one: ("rnn.", " or ") gives the model ops,
/// "rnn.lstm, rnn.gru or rnn.mgu".
std::string listCells(MLIRContext *context, StringRef prefix, StringRef last);

/// `prefix` + each state name of `cell` + `suffix`: the roles of one kind
/// of state value (`stateRoles(cell, "", kResetStateSuffix)`: `h_reset`,
/// `c_reset` for the LSTM).
SmallVector<std::string> stateRoles(CellAttrInterface cell, StringRef prefix,
                                    StringRef suffix);

/// Every kernel phase (KernelPhase, RNNEnums.td), in the enum's order; its
/// name in messages, kernel names and test output is
/// stringifyKernelPhase's.
inline constexpr KernelPhase kKernelPhases[] = {
    KernelPhase::Fwd, KernelPhase::Bwd, KernelPhase::ChunkedBwd,
    KernelPhase::Replay};

/// The phase of a kernel of `kind`: Bwd is ChunkedBwd if `chunked`.
KernelPhase kernelPhase(KernelKind kind, bool chunked);

/// The keywords of the operand groups of a kernel of `kind`, in operand
/// order, as its op lists them (RNNOps.td).
ArrayRef<StringLiteral> kernelOperandGroupNames(KernelKind kind);

/// The roles of the operands of a kernel of `cell` in `phase`, per operand
/// group of its op (kernelOperandGroupNames). By keyword:
///   x, is_init:   `x`, `is_init`
///   states:       the initial states (`h0`, ...)
///   reset_states: the reset states (`h_reset`, ...; empty without
///                 `resetStates`)
///   weights:      `weight_ih`, `weight_hh`, and `bias_ih`, `bias_hh` but
///                 for bwd
///   saved:        fwd: the saved roles; bwd: y and the saved roles;
///                 chunked_bwd: y and the checkpoint roles; replay: y and
///                 the saved roles the cell does not replay
///   cotangents:   `grad_y` and the final states' (`grad_h_n`, ...)
///   outs:         fwd: y and the final states (`h_n`, ...); bwd: the
///                 gradients (`grad_x`, `grad_h0`, ..., `grad_h_reset`,
///                 ... with `resetStates`, `grad_weight_ih`, ...,
///                 `grad_bias_hh`); replay: the replayed roles.
SmallVector<SmallVector<std::string>>
kernelOperandGroups(CellAttrInterface cell, KernelPhase phase,
                    bool resetStates);

/// Whether saved role `role` of `cell` is stored in a layer's storage type
/// (LayerOpInterface::getStorageType): the saved roles that are not
/// checkpoint roles (states, which stay in the element type of x).
bool isStoredRole(CellAttrInterface cell, StringRef role);

/// kernelOperandGroups, flattened.
SmallVector<std::string>
kernelOperandRoles(CellAttrInterface cell, KernelPhase phase, bool resetStates);

/// A kernel's GEMM block: `steps` P where T and B are static, or, where
/// either is dynamic, the `rows` R from which each call takes the block
/// gemmBlockSteps(T, B, R) gives its shape. Exactly one is set.
struct GemmBlock {
  int64_t steps = 0, rows = 0;

  static GemmBlock ofSteps(int64_t steps) { return {steps, 0}; }
  static GemmBlock ofRows(int64_t rows) { return {0, rows}; }
  bool isPerCall() const { return rows != 0; }
};

/// The GEMM block P of the kernels of a layer of `steps` steps and `batch`
/// columns (their `block`): the smallest power of two with
/// P * batch >= gemmRows, at most `steps`.
int64_t gemmBlockSteps(int64_t steps, int64_t batch, int64_t gemmRows);

/// The steps K' of a chunk of `chunk` steps asked for, at `steps` steps
/// in GEMM blocks of `block`: K rounded up to whole blocks, at most
/// `steps` (written so that no product can overflow).
int64_t chunkStepsFor(int64_t steps, int64_t block, int64_t chunk);

/// The GEMM block of a kernel of `steps` x `batch` (either may be
/// ShapedType::kDynamic) whose blocks reach `gemmRows` rows.
GemmBlock gemmBlockFor(int64_t steps, int64_t batch, int64_t gemmRows);
} // namespace rnn
} // namespace mlir

#include "rnn/Dialect/RNNOpInterfaces.h.inc"

namespace mlir {
namespace rnn {
/// Creates the kernel of `cell` for `phase` with the operands in the order of
/// their roles (kernelOperandRoles, with reset states if `resetStates`), and
/// `storage` when it is not the element type of x.
KernelOpInterface createKernel(OpBuilder &builder, Location loc,
                               CellAttrInterface cell, KernelPhase phase,
                               bool resetStates, TypeRange types,
                               ValueRange operands, GemmBlock block,
                               std::optional<int64_t> chunk, Type storage);
} // namespace rnn
} // namespace mlir

#endif // RNN_DIALECT_RNNATTRS_H
