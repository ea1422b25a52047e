//===- RNNCells.td - the cells and their model ops ---------*- tablegen -*-===//
//
// Each cell of the dialect is defined here once: its attribute (#rnn.<cell>,
// implementing CellAttrInterface with facts generated from the record) and
// its model op (rnn.<cell>, one layer over T steps, whose operands and
// results follow from the cell's states). RNNAttrs.td and RNNOps.td include
// this file; the attribute and op generators each take their records from
// it. What a cell's steps compute is its lowering file's
// (lib/Conversion/RNNToLoops/<Cell>Lowering.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNCELLS_TD
#define RNN_DIALECT_RNNCELLS_TD

include "rnn/Dialect/RNNDialect.td"
include "rnn/Dialect/RNNInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// A per-step value the forward saves for the backward: its role, and its
// width per batch column, G·H (`gateWide`: one column per gate unit) or H.
class RNN_SavedRole<string roleName, bit isGateWide> {
  string name = roleName;
  bit gateWide = isGateWide;
}

// `static const StringRef names[] = {...}; return names;`, or `return {};`.
class RNN_StringArrayBody<list<string> items> {
  string body = !if(!empty(items), "return {};",
      "static const ::llvm::StringRef items[] = {"
      # !interleave(!foreach(item, items, "\"" # item # "\""), ", ")
      # "};\n    return items;");
}

// A cell: `gates` gate blocks of width H, the states `states` (`h` first),
// the saved roles `saved` (in order), of which `replayed` are those a
// replay recomputes and `checkpoint` those a chunked forward keeps at chunk
// entries only (see CellAttrInterface). `mnemonic`, `numGates`, `states`
// and `summary` are also the cell table of the tools and the Python
// package (tools/cells/cell-table.py reads them from these records).
class RNN_Cell<string attrName, string cellName, int gates,
               list<string> cellStates, list<RNN_SavedRole> saved,
               list<string> replayed, list<string> checkpoint>
    : AttrDef<RNN_Dialect, attrName,
              [DeclareAttrInterfaceMethods<RNN_CellAttrInterface>]> {
  let mnemonic = cellName;
  int numGates = gates;
  list<string> states = cellStates;
  let extraClassDefinition = [{
    ::llvm::StringRef $cppClass::getCellName() const {
      return "}] # cellName # [{";
    }
    int64_t $cppClass::getNumGates() const { return }] # !cast<string>(gates) # [{; }
    ::llvm::ArrayRef<::llvm::StringRef> $cppClass::getStateNames() const {
      }] # RNN_StringArrayBody<cellStates>.body # [{
    }
    ::llvm::ArrayRef<::llvm::StringRef> $cppClass::getSavedRoles() const {
      }] # RNN_StringArrayBody<!foreach(role, saved, role.name)>.body # [{
    }
    ::llvm::ArrayRef<::llvm::StringRef> $cppClass::getReplayedRoles() const {
      }] # RNN_StringArrayBody<replayed>.body # [{
    }
    ::llvm::ArrayRef<::llvm::StringRef>
    $cppClass::getCheckpointRoles() const {
      }] # RNN_StringArrayBody<checkpoint>.body # [{
    }
    int64_t $cppClass::getRoleWidth(::llvm::StringRef role,
                                    int64_t hidden) const {
      }] # !interleave(!foreach(r, saved,
               "if (role == \"" # r.name # "\")\n        return "
               # !if(r.gateWide, !cast<string>(gates) # " * ", "") # "hidden;"), "\n      ")
         # [{
      return 0;
    }
  }];
}

// `name` with its first letter upper case (an ODS accessor's suffix).
class RNN_Capitalized<string name> {
  string str = !toupper(!substr(name, 0, 1)) # !substr(name, 1);
}

// The model op of `cell`: one layer over T steps. Operands x, is_init,
// `<state>0` per state, the optional reset states, the weights; results y
// and `<state>N` per state (`<state>_n` in PyTorch's names).
class RNN_LayerOp<string mnemonic, RNN_Cell cell>
    : Op<RNN_Dialect, mnemonic,
         [Pure, DeclareOpInterfaceMethods<RNN_LayerOpInterface>]> {
  let arguments = !con(
      (ins AnyRankedTensor:$x, AnyRankedTensor:$isInit),
      !dag(ins, !listsplat(AnyRankedTensor, !size(cell.states)),
           !foreach(state, cell.states, state # "0")),
      (ins Variadic<AnyRankedTensor>:$resetStates, AnyRankedTensor:$weightIh,
           AnyRankedTensor:$weightHh, AnyRankedTensor:$biasIh,
           AnyRankedTensor:$biasHh, OptionalAttr<TypeAttr>:$storage));
  let results = !con(
      (outs AnyRankedTensor:$y),
      !dag(outs, !listsplat(AnyRankedTensor, !size(cell.states)),
           !foreach(state, cell.states, state # "N")));
  let assemblyFormat = "$x `reset` $isInit (`to` `(` $resetStates^ `)`)? "
      # "`state` `(` "
      # !interleave(!foreach(state, cell.states, "$" # state # "0"), " `,` ")
      # " `)` `weights` `(` $weightIh `,` $weightHh `,` $biasIh `,` $biasHh "
      # "`)` attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::rnn::CellAttrInterface $cppClass::getCell() {
      return ::mlir::rnn::}] # cell.cppClassName # [{::get(getContext());
    }
    ::llvm::SmallVector<::mlir::Value> $cppClass::getInitialStates() {
      return {}] # !interleave(!foreach(state, cell.states,
                     "get" # RNN_Capitalized<state>.str # "0()"), ", ") # [{};
    }
    ::llvm::SmallVector<::mlir::Value> $cppClass::getFinalStates() {
      return {}] # !interleave(!foreach(state, cell.states,
                     "get" # RNN_Capitalized<state>.str # "N()"), ", ") # [{};
    }
    ::llvm::LogicalResult $cppClass::verify() { return verifyLayer(*this); }
  }];
}

//===----------------------------------------------------------------------===//
// LSTM
//===----------------------------------------------------------------------===//

def RNN_LSTMCellAttr : RNN_Cell<"LSTMCell", "lstm", /*gates=*/4, ["h", "c"],
    [RNN_SavedRole<"gates", 1>, RNN_SavedRole<"cells", 0>],
    /*replayed=*/["gates"], /*checkpoint=*/["cells"]> {
  let summary = "the LSTM cell (PyTorch's gate order i, f, g, o)";
  let description = [{
    Four gates, states `h` and `c`. The forward saves the gates and the cell
    states `cells` per step; a replay recomputes the gates from the saved
    states, and a chunked forward keeps `cells` at chunk entries only.
  }];
}

def RNN_LSTMOp : RNN_LayerOp<"lstm", RNN_LSTMCellAttr> {
  let summary = "one LSTM layer over T steps with per-step state resets";
  let description = [{
    Runs one LSTM layer over a time-major sequence. The state entering step
    `t` for batch column `b` is the reset state where `is_init[t, b]`, else
    the state left by step `t - 1` (`h0`/`c0` for `t = 0`). The reset state
    is zero, or with `to(%h_reset, %c_reset)` the given one: per step
    (`[T, B, H]`, entry `[t, b]`, as TorchRL stores the recurrent state of
    each step) or per batch column (`[B, H]`, entry `[b]`); the gradient
    flows into it. Gates follow PyTorch's order `i, f, g, o`; weights have
    PyTorch's layout (`weight_ih: [4H, I]`, `weight_hh: [4H, H]`, biases
    `[4H]`).

    With `{storage = bf16}` (x of f32), the per-step values saved for the
    backward that are not states (the gates, the GRU's hidden projection)
    are stored in bf16, and every GEMM multiplies operands rounded to bf16
    with f32 accumulation; states, outputs and gradients stay f32. Every
    rnn layer op takes the attribute.

    ```mlir
    %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
        weights(%w_ih, %w_hh, %b_ih, %b_hh)
        : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
           tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
        -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
    ```
  }];
}

//===----------------------------------------------------------------------===//
// GRU
//===----------------------------------------------------------------------===//

def RNN_GRUCellAttr : RNN_Cell<"GRUCell", "gru", /*gates=*/3, ["h"],
    [RNN_SavedRole<"gates", 1>, RNN_SavedRole<"hn_proj", 0>],
    /*replayed=*/["gates", "hn_proj"], /*checkpoint=*/[]> {
  let summary = "the GRU cell (PyTorch's gate order r, z, n)";
  let description = [{
    Three gates, state `h`. The forward saves the gates and `hn_proj`
    (`W_hn h + b_hn`, which the backward of `n` reads) per step; a replay
    recomputes both from the saved outputs, and nothing is checkpointed
    besides `y`.
  }];
}

def RNN_GRUOp : RNN_LayerOp<"gru", RNN_GRUCellAttr> {
  let summary = "one GRU layer over T steps with per-step state resets";
  let description = [{
    Runs one GRU layer over a time-major sequence with the reset rule of
    `rnn.lstm` (reset to zero, or `to(%h_reset)`). Gates follow PyTorch's
    order `r, z, n`, with `n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`.

    ```mlir
    %y, %h_n = rnn.gru %x reset %is_init state(%h0)
        weights(%w_ih, %w_hh, %b_ih, %b_hh)
        : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
           tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
        -> (tensor<8x4x5xf32>, tensor<4x5xf32>)
    ```
  }];
}

//===----------------------------------------------------------------------===//
// MGU
//===----------------------------------------------------------------------===//

def RNN_MGUCellAttr : RNN_Cell<"MGUCell", "mgu", /*gates=*/2, ["h"],
    [RNN_SavedRole<"gates", 1>, RNN_SavedRole<"hn_proj", 0>],
    /*replayed=*/["gates", "hn_proj"], /*checkpoint=*/[]> {
  let summary = "the minimal gated unit (gate order f, n; see rnn.mgu)";
  let description = [{
    Two gates, state `h`. Like the GRU's, the forward saves the gates and
    `hn_proj` (`W_hn h + b_hn`) per step, a replay recomputes both from the
    saved outputs, and nothing is checkpointed besides `y`.
  }];
}

def RNN_MGUOp : RNN_LayerOp<"mgu", RNN_MGUCellAttr> {
  let summary = "one minimal gated unit layer over T steps with resets";
  let description = [{
    Runs one layer of the minimal gated unit (Zhou et al., 2016: the GRU
    with its reset and update gates merged into one forget gate `f`) over a
    time-major sequence, with the reset rule of `rnn.lstm`. Gates are in the
    order `f, n`, and the forget gate scales the hidden projection of `n`
    as the GRU's `r` does (PyTorch's GRU placement):

        f  = sigmoid(W_if x + b_if + W_hf h + b_hf)
        n  = tanh(W_in x + b_in + f * (W_hn h + b_hn))
        h' = (1 - f) * h + f * n

    Weights are `weight_ih: [2H, I]`, `weight_hh: [2H, H]`, biases `[2H]`.

    ```mlir
    %y, %h_n = rnn.mgu %x reset %is_init state(%h0)
        weights(%w_ih, %w_hh, %b_ih, %b_hh)
        : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>,
           tensor<10x3xf32>, tensor<10x5xf32>, tensor<10xf32>, tensor<10xf32>)
        -> (tensor<8x4x5xf32>, tensor<4x5xf32>)
    ```
  }];
}

//===----------------------------------------------------------------------===//
// CIFG LSTM
//===----------------------------------------------------------------------===//

def RNN_CIFGCellAttr : RNN_Cell<"CIFGCell", "cifg", /*gates=*/3, ["h", "c"],
    [RNN_SavedRole<"gates", 1>, RNN_SavedRole<"cells", 0>],
    /*replayed=*/["gates"], /*checkpoint=*/["cells"]> {
  let summary = "the LSTM with coupled input and forget gates (f, g, o)";
  let description = [{
    Three gates, states `h` and `c`; the input gate is `1 - f`. Saves,
    replays and checkpoints as the LSTM.
  }];
}

def RNN_CIFGOp : RNN_LayerOp<"cifg", RNN_CIFGCellAttr> {
  let summary = "one CIFG LSTM layer over T steps with per-step resets";
  let description = [{
    Runs one layer of the LSTM with coupled input and forget gates (Greff
    et al., 2017) over a time-major sequence, with the reset rule of
    `rnn.lstm`. Gates are in the order `f, g, o`:

        f  = sigmoid(W_if x + b_if + W_hf h + b_hf)
        g  = tanh(W_ig x + b_ig + W_hg h + b_hg)
        o  = sigmoid(W_io x + b_io + W_ho h + b_ho)
        c' = f * c + (1 - f) * g
        h' = o * tanh(c')

    It is `rnn.lstm` whose input gate rows are the negated forget gate
    rows (sigmoid(-a) = 1 - sigmoid(a)). Weights are `weight_ih: [3H, I]`,
    `weight_hh: [3H, H]`, biases `[3H]`.

    ```mlir
    %y, %h_n, %c_n = rnn.cifg %x reset %is_init state(%h0, %c0)
        weights(%w_ih, %w_hh, %b_ih, %b_hh)
        : (tensor<8x4x3xf32>, tensor<8x4xi1>, tensor<4x5xf32>, tensor<4x5xf32>,
           tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>)
        -> (tensor<8x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
    ```
  }];
}

#endif // RNN_DIALECT_RNNCELLS_TD
