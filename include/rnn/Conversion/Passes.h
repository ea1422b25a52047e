//===- Passes.h - rnn conversion passes -------------------------*- C++ -*-===//
//
// Declares the passes lowering bufferized rnn kernels.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_CONVERSION_PASSES_H
#define RNN_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace func {
class FuncDialect;
} // namespace func
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace math {
class MathDialect;
} // namespace math
namespace memref {
class MemRefDialect;
} // namespace memref
namespace scf {
class SCFDialect;
} // namespace scf
namespace vector {
class VectorDialect;
} // namespace vector

namespace rnn {
/// Attaches each cell's lowering to its cell attribute (convert-rnn-to-loops
/// registers it as a dependency too).
void registerCellLoweringExternalModels(DialectRegistry &registry);

#define GEN_PASS_DECL
#include "rnn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rnn/Conversion/Passes.h.inc"
} // namespace rnn
} // namespace mlir

#endif // RNN_CONVERSION_PASSES_H
