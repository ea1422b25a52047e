//===- CellLowering.td - how a cell's kernels become loops -*- tablegen -*-===//
//
// CellLoweringAttrInterface: the lowering of a cell's training kernels on
// the kernel builder (KernelBuilder.h), attached to the cell attributes as
// an external model by each cell's lowering file (LSTMLowering.cpp,
// GRULowering.cpp), so that convert-rnn-to-loops lowers any kernel through
// its cell without naming one.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_CONVERSION_RNNTOLOOPS_CELLLOWERING_TD
#define RNN_CONVERSION_RNNTOLOOPS_CELLLOWERING_TD

include "mlir/IR/OpBase.td"

def RNN_CellLoweringAttrInterface : AttrInterface<"CellLoweringAttrInterface"> {
  let cppNamespace = "::mlir::rnn";
  let methods = [
    InterfaceMethod<"Emits the loops of bufferized kernel `kernel` of this "
                    "cell (any phase) at the builder's insertion point; the "
                    "caller frees the scratch and erases the kernel.",
                    "void", "emitKernel",
                    (ins "::mlir::rnn::KernelOpInterface":$kernel,
                         "::mlir::rnn::KernelBuilder &":$builder)>,
  ];
}

#endif // RNN_CONVERSION_RNNTOLOOPS_CELLLOWERING_TD
