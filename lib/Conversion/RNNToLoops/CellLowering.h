//===- CellLowering.h - how a cell's kernels become loops -------*- C++ -*-===//
//
// The cell lowering interface (CellLowering.td) and the attachment of each
// cell's lowering to its attribute.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_LIB_CONVERSION_RNNTOLOOPS_CELLLOWERING_H
#define RNN_LIB_CONVERSION_RNNTOLOOPS_CELLLOWERING_H

#include "KernelBuilder.h"

#include "rnn/Dialect/RNNOps.h"

#include "RNNToLoops/CellLowering.h.inc"

namespace mlir {
namespace rnn {
/// Attach each cell's lowering to its attribute (defined in the cell's
/// lowering file; the cells are listed in lib/Conversion/CMakeLists.txt).
#define RNN_CELL_LOWERING(Cell)                                                \
  void attach##Cell##Lowering(MLIRContext &context);
#include "RNNToLoops/CellLowerings.def"
#undef RNN_CELL_LOWERING
} // namespace rnn
} // namespace mlir

#endif // RNN_LIB_CONVERSION_RNNTOLOOPS_CELLLOWERING_H
