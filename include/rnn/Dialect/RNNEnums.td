//===- RNNEnums.td - the enumerations of the rnn dialect ---*- tablegen -*-===//
//
// The dialect's enumerations, each with its names in messages, kernel names
// and manifests: the generic kernel ops, what a kernel computes, and what an
// entry point does with an argument buffer. mlir-tblgen generates the C++
// enums with their stringify and symbolize functions (RNNEnums.h).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNENUMS_TD
#define RNN_DIALECT_RNNENUMS_TD

include "mlir/IR/EnumAttr.td"

// An enumeration of the dialect with no attribute of its own.
class RNN_Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::rnn";
  let genSpecializedAttr = 0;
}

def RNN_KernelKind : RNN_Enum<"KernelKind",
    "the generic kernel ops: rnn.cell_fwd, rnn.cell_bwd, rnn.cell_replay", [
  I32EnumAttrCase<"Fwd", 0, "fwd">,
  I32EnumAttrCase<"Bwd", 1, "bwd">,
  I32EnumAttrCase<"Replay", 2, "replay">]>;

// The forward steps saving what the backward reads (fwd), the backward from
// the saved values (bwd), the backward of a chunk that replays its forward
// from the chunk's checkpoint first (chunked_bwd, an rnn.cell_bwd with
// `chunk`), or the forward values the backward reads recomputed from saved
// ones (replay).
def RNN_KernelPhase : RNN_Enum<"KernelPhase", "what a kernel computes", [
  I32EnumAttrCase<"Fwd", 0, "fwd">,
  I32EnumAttrCase<"Bwd", 1, "bwd">,
  I32EnumAttrCase<"ChunkedBwd", 2, "chunked_bwd">,
  I32EnumAttrCase<"Replay", 3, "replay">]>;

// What an entry point does with an argument buffer (the manifest's `role`),
// by the argument's name (bufferRole in RNNRoles.h).
def RNN_BufferRole : RNN_Enum<"BufferRole",
    "what an entry point does with an argument buffer", [
  I32EnumAttrCase<"Input", 0, "input">,
  I32EnumAttrCase<"Parameter", 1, "parameter">,
  I32EnumAttrCase<"Output", 2, "output">,
  I32EnumAttrCase<"Cotangent", 3, "cotangent">,
  I32EnumAttrCase<"Gradient", 4, "gradient">,
  I32EnumAttrCase<"Saved", 5, "saved">,
  I32EnumAttrCase<"Scratch", 6, "scratch">]>;

#endif // RNN_DIALECT_RNNENUMS_TD
