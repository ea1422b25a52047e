//===- BufferLiveness.h - live ranges of a function's buffers ---*- C++ -*-===//
//
// The buffers a lowered function allocates at its top level, each with its
// role, size and live range in program order: from its allocation to its
// last use through any view of it (subview, reshape, cast, select), and to
// its deallocation. A size is in bytes, or, in a function compiled for
// every T and B, an expression in them (SizeExpr). Early frees, the memory
// plan and the memory report all read this one analysis.
//
// Upstream `mlir::Liveness` answers "is this SSA value live here"; a buffer
// lives as long as any of its views does, which is what this adds. Views
// are found through ViewLikeOpInterface, as upstream's
// BufferViewFlowAnalysis finds them, plus `arith.select`; the analysis
// itself is not used, as it answers for a whole function which values may
// alias, where this needs, per top-level allocation, its views' users in
// program order.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_ANALYSIS_BUFFERLIVENESS_H
#define RNN_ANALYSIS_BUFFERLIVENESS_H

#include "rnn/Analysis/SizeExpr.h"
#include "rnn/Dialect/RNNDialect.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func

class DataLayout;
class MemRefType;

namespace rnn {

/// Name of the discardable attribute that records a buffer's role.
inline constexpr llvm::StringLiteral kRoleAttr =
    RNNDialect::RoleAttrHelper::getNameStr();
/// The model layer a kernel, its buffers and the ops it was lowered to
/// belong to (discardable; for the memory report).
inline constexpr llvm::StringLiteral kLayerAttr =
    RNNDialect::LayerAttrHelper::getNameStr();
/// The kernel (`lstm_fwd`, `gru_chunked_bwd`: cell and phase) an allocation,
/// loop or call was lowered from (discardable; for the memory report).
inline constexpr llvm::StringLiteral kKernelAttr =
    RNNDialect::KernelAttrHelper::getNameStr();

/// Bytes of a statically shaped buffer of `type` under `layout`, or nothing
/// if its elements have no size the data layout knows or the product
/// overflows.
std::optional<int64_t> getBufferBytes(MemRefType type,
                                      const DataLayout &layout);

struct BufferInfo {
  Operation *alloc = nullptr;
  /// The `rnn.role` of the allocation, or "buffer".
  std::string role;
  /// The `rnn.layer` of the allocation, or -1.
  int64_t layer = -1;
  /// Bytes of a static buffer (0 for a dynamic one).
  int64_t bytes = 0;
  /// Bytes as an expression in T, B and P (the constant `bytes` for a
  /// static buffer); nothing where the dynamic sizes are not ones
  /// SizeExpr covers.
  std::optional<SizeExpr> size;
  /// Positions in the function's entry block (0-based op indices).
  unsigned allocIndex = 0;
  /// Last op that uses the buffer or a view of it (its dealloc excluded);
  /// equal to allocIndex if unused.
  unsigned lastUseIndex = 0;
  /// The memref.dealloc of the buffer in the entry block, if any.
  Operation *dealloc = nullptr;
  unsigned deallocIndex = 0;
  /// Whether a view of the buffer is returned (it outlives the function).
  bool returned = false;
  /// Whether a view of the buffer flows out of a region (yielded, or an
  /// operand of a region op that returns buffers): its uses are then not
  /// all known, and lastUseIndex is the end of the function.
  bool escapes = false;
};

class BufferLiveness {
public:
  explicit BufferLiveness(func::FuncOp func);

  /// Top-level buffers in allocation order.
  llvm::ArrayRef<BufferInfo> getBuffers() const { return buffers; }
  /// False if some allocation is nested in a region (a loop body) or has a
  /// dynamic size: then no static plan covers the function.
  bool isStatic() const { return staticAllocs; }
  /// Whether every allocation is at the top level with a size in T, B and
  /// P (static ones included): a plan in those covers the function.
  bool isSymbolic() const { return symbolicAllocs; }
  /// The GEMM rows of the function's blocks, where a size reads P, and
  /// its chunk, where a size reads K or N.
  const SizeSymbols &getSizeSymbols() const { return sizeSymbols; }
  /// The call shape (T, B) with P the GEMM block's steps there, and K and
  /// N the chunk's, which the sizes read (1 in a function without
  /// blocks or chunks).
  CallShape getCallShape(int64_t seqLen, int64_t batch) const;
  /// Number of ops in the entry block.
  unsigned getNumPositions() const { return numPositions; }

  /// The peak of bytes held, simulating the function in program order:
  /// a buffer counts from its allocation to its deallocation, and to the
  /// end of the function if it has none (returned buffers).
  int64_t getPeakBytes() const { return getPeak().first; }
  /// The peak and the first position where it is held.
  std::pair<int64_t, unsigned> getPeak() const;
  /// Bytes held at each position once its op has allocated and freed, and
  /// at the end (getNumPositions() + 1 entries).
  llvm::SmallVector<int64_t> getHeldBytes() const;
  /// The same as expressions, for a symbolic function.
  llvm::SmallVector<SizeExpr> getHeldSizes() const;

private:
  llvm::SmallVector<BufferInfo> buffers;
  bool staticAllocs = true, symbolicAllocs = true;
  SizeSymbols sizeSymbols;
  unsigned numPositions = 0;
};

/// Every value that aliases `buffer` through view-like ops, casts and
/// selects, `buffer` included.
llvm::SmallVector<Value> collectAliases(Value buffer);

} // namespace rnn
} // namespace mlir

#endif // RNN_ANALYSIS_BUFFERLIVENESS_H
