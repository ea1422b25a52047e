//===- Passes.h - rnn transformation passes ---------------------*- C++ -*-===//
//
// Declares the tensor-level rnn passes (autodiff, forward expansion).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TRANSFORMS_PASSES_H
#define RNN_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace func {
class FuncOp;
} // namespace func
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace tensor {
class TensorDialect;
} // namespace tensor

namespace rnn {
#define GEN_PASS_DECL
#include "rnn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

#endif // RNN_TRANSFORMS_PASSES_H
