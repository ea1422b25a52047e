//===- Passes.h - the targets' passes ---------------------------*- C++ -*-===//
//
// Declares the passes of the targets' lowerings (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TARGET_PASSES_H
#define RNN_TARGET_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace cf {
class ControlFlowDialect;
} // namespace cf
namespace func {
class FuncDialect;
} // namespace func
namespace gpu {
class GPUDialect;
} // namespace gpu
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
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
#define GEN_PASS_DECL
#include "rnn/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

#endif // RNN_TARGET_PASSES_H
