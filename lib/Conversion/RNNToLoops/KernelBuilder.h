//===- KernelBuilder.h - building blocks of the rnn lowering ----*- C++ -*-===//
//
// Small IR-building vocabulary shared by the LSTM and GRU lowerings:
// constants, scalar loads and stores, activations, elementwise parallel
// loops, time loops, per-step views of [T, B, X] buffers, GEMMs as
// linalg.matmul with transposition in the indexing maps, and scratch
// buffers that are freed when the kernel ends.
//
// Sizes are `OpFoldResult`s: constants where the kernel's shapes are
// static, values where T or B are dynamic (a library for any T and B),
// so that static shapes give the same IR as before sizes could vary. The
// innermost dimension of every loop (H, or a multiple of it) is static.
// The gate math is written once, as scalar code, in scf.parallel loops.
// With a vector width W > 1, `parallel` emits each body twice: over the
// innermost dimension in steps of W, where loads and stores along that
// dimension become vector.load/vector.store and every other operation
// works on vector<Wxf32> (so the CPU runs W lanes at once without relying
// on LLVM's loop vectorizer and its alias checks), and over the remainder
// with scalars.
// With W = 1 every body is scalar, one element per iteration. With
// `wholeVectors` (GPU: each loop is a kernel, one thread per iteration) a
// loop whose innermost size W does not divide is scalar rather than split,
// and a vector access carries the alignment of W elements where its view
// proves it (see `isAligned`), so that the target emits 128-bit accesses.
//
// Buffers of a narrower storage type (bf16 saved values) are read and
// written through the same `load`/`store`, which widen and round. Under a
// bf16 storage type every GEMM multiplies operands rounded to bf16 with f32
// accumulation. Where the target's GEMM takes bf16 operands
// (`storageGemm`, cuBLAS), `matmul` rounds an f32 operand into bf16
// scratch and passes a bf16 buffer as it stands; elsewhere (OpenBLAS 0.3.21
// has no bf16 GEMM) it rounds an f32 operand (and widens a bf16 one) into
// f32 scratch, where bf16 values are exact and their products too, and
// calls the f32 GEMM: the same products either way, f32 sums in the BLAS's
// order. Values that are GEMM operands only (the weights) are rounded once
// per kernel (`gemmOperand`), and the scratch of the conversions is
// allocated at the kernel's start, outside every loop. A GEMM operand that
// an elementwise loop of the kernel produces (a step's h, a step's
// gradient of the hidden projection) is rounded by that loop into a
// buffer of `allocGemmOperand`, so that no loop of its own converts it.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_LIB_CONVERSION_RNNTOLOOPS_KERNELBUILDER_H
#define RNN_LIB_CONVERSION_RNNTOLOOPS_KERNELBUILDER_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <optional>

namespace mlir {
namespace rnn {

/// A shape whose sizes are constants or values.
using Shape = SmallVector<OpFoldResult>;

/// The buffer `value` is a view of (through subviews, reshapes and casts).
Value viewedBuffer(Value value);

class KernelBuilder {
public:
  /// Scalars, scratch and vectors of `elementType` (f32 or f64); GEMM
  /// operands rounded to `storageType` if it is narrower (bf16), held in
  /// buffers of the storage type if `storageGemm` (the target's GEMM takes
  /// them), else in f32 buffers.
  KernelBuilder(OpBuilder &builder, Location loc, Type elementType,
                Type storageType, int64_t vectorWidth = 1,
                bool storageGemm = false, bool wholeVectors = false);

  ImplicitLocOpBuilder &builder() { return b; }

  /// Constants.
  Value index(int64_t value);
  Value scalar(double value);
  /// A size as an index value (a constant where it is one).
  Value index(OpFoldResult size);
  /// The constant size `value`.
  OpFoldResult size(int64_t value);
  /// Products and differences of sizes, folded where constant.
  OpFoldResult mulSize(OpFoldResult lhs, OpFoldResult rhs);
  OpFoldResult subSize(OpFoldResult lhs, int64_t rhs);

  /// The GEMM block gemmBlockSteps(steps, batch, rows) computed when the
  /// kernel runs (rnn.block_steps).
  Value gemmBlockSteps(OpFoldResult steps, OpFoldResult batch, int64_t rows);
  /// The chunk chunkStepsFor(steps, block, chunk) computed when the kernel
  /// runs (rnn.chunk_steps).
  Value chunkSteps(OpFoldResult steps, OpFoldResult block, int64_t chunk);

  /// Where T or B is dynamic: `rows` (P * B) bounds the rows of every GEMM
  /// operand of the kernel ([B, X] or a block's [len * B, X]), so that the
  /// scratch GEMM operands of a narrower storage type are made here, at
  /// the kernel's start, of `rows` rows, each GEMM using its leading rows.
  void setGemmRowsBound(OpFoldResult rows);

  /// The sizes of a buffer: constants, and memref.dim where dynamic.
  OpFoldResult sizeOf(Value buffer, unsigned dim);
  Shape shapeOf(Value buffer);
  SmallVector<Shape> shapesOf(ArrayRef<Value> buffers);

  /// Scalar memory access and arithmetic on the element type (f32): a load
  /// from a bf16 buffer widens, a store to one rounds to nearest even.
  Value load(Value memref, ValueRange indices);
  void store(Value value, Value memref, ValueRange indices);
  Value add(Value lhs, Value rhs);
  Value sub(Value lhs, Value rhs);
  Value mul(Value lhs, Value rhs);
  Value addIndex(Value lhs, int64_t rhs);
  Value sigmoid(Value x);
  Value tanh(Value x);
  /// `mask ? onTrue : onFalse`, for a scalar mask.
  Value select(Value mask, Value onTrue, Value onFalse);
  /// `mask ? 0 : value`.
  Value zeroIf(Value mask, Value value);

  /// An scf.parallel over [0, ubs[0]) x [0, ubs[1]) x ...
  void parallel(ArrayRef<OpFoldResult> upperBounds,
                function_ref<void(ValueRange ivs)> body);
  /// Elementwise loops over buffers of several shapes as one scf.parallel
  /// (one kernel on a GPU): `body(i, iv)` runs for every element iv of
  /// `shapes[i]`. With equal shapes this is `parallel` over that shape with
  /// the bodies in turn; otherwise it is one scalar loop over the largest
  /// element count, each body guarded by its own count and given its
  /// indices delinearized (row-major), or, where a count is dynamic, a
  /// loop per shape.
  void parallelEach(ArrayRef<Shape> shapes,
                    function_ref<void(unsigned i, ValueRange iv)> body);
  /// An scf.for over time, from 0 to `steps` - 1 or, if `reverse`, back.
  void forTime(OpFoldResult steps, bool reverse,
               function_ref<void(Value t)> body);
  /// An scf.for over [0, n).
  void forRange(OpFoldResult n, function_ref<void(Value i)> body);

  /// A scratch buffer of the element type (or `type`), freed by
  /// `freeScratch`, with its role recorded for the memory plan and report.
  Value alloc(ArrayRef<OpFoldResult> shape, StringRef role, Type type = {});
  /// Frees the scratch at the insertion point, or after `after`.
  void freeScratch(Operation *after = nullptr);

  /// The [B, X] view of step `t` of a [T, B, X] buffer.
  Value step(Value sequence, Value t);
  /// The [T*B, X] view of a [T, B, X] buffer with the identity layout.
  Value flatten(Value sequence);
  /// The state entering step `t` before the reset mask: step t-1 of
  /// `sequence`, or `initial` at t = 0. Both views have the same type.
  Value previous(Value sequence, Value initial, Value t);
  /// `carried`, or `initial` (cast to its type) at t = 0.
  Value initialOr(Value initial, Value carried, Value t);

  /// C = op(A) op(B) (or C += ... if `accumulate`) as linalg.matmul whose
  /// indexing maps carry the transpositions; under a bf16 storage type, of
  /// A and B rounded to bf16 (gemmOperand).
  void matmul(Value a, Value bMat, Value c, bool transA, bool transB,
              bool accumulate);
  /// `value` as a GEMM operand: itself, or under a bf16 storage type a
  /// scratch copy rounded to bf16 (a bf16 buffer, or an f32 one holding
  /// bf16 values), made here. Operands made by this call are not converted
  /// again, so a value read only by GEMMs and constant through the kernel
  /// (a weight) is converted once when the kernel starts.
  Value gemmOperand(Value value);
  /// Whether GEMM operands are rounded (a storage type narrower than the
  /// element type).
  bool roundsGemmOperands() const { return storageType != elementType; }
  /// A [shape] scratch GEMM operand that the kernel's own loops fill with
  /// values rounded to the storage type (storeGemmOperand): a value
  /// produced by an elementwise loop is rounded there rather than by a
  /// loop of its own before the GEMM.
  Value allocGemmOperand(ArrayRef<OpFoldResult> shape, StringRef role);
  /// Stores `value` rounded to the storage type into `dst`, a buffer from
  /// allocGemmOperand.
  void storeGemmOperand(Value value, Value dst, ValueRange indices);
  /// dst = src rounded to the storage type, elementwise, into a buffer
  /// from allocGemmOperand.
  void convertInto(Value src, Value dst);
  /// dst = src, elementwise over a buffer of any rank.
  void copy(Value src, Value dst);
  /// dst = 0, elementwise over a buffer of any rank.
  void zero(Value dst);
  /// A [1, n] scratch buffer for ones, a GEMM operand as it stands; the
  /// caller stores the ones (in a loop it has anyway).
  Value allocOnes(OpFoldResult n);
  /// acc[0, j] += sum_r rows[r, j] of a [R, J] buffer, as a GEMV against
  /// the first R ones ([1, >= R]): the order of the sum is the BLAS's,
  /// fixed for a given shape, and on a GPU it runs on many blocks.
  void addColumnSums(Value rows, Value ones, Value acc);
  /// The [1, N] view of a [N] buffer.
  Value row(Value vector);
  /// Columns [start, start + len) of a [R, C] buffer.
  Value columns(Value matrix, int64_t start, OpFoldResult len);
  Value columns(Value matrix, int64_t start, int64_t len) {
    return columns(matrix, start, size(len));
  }
  /// Rows [start, start + len) of a [R, C] buffer.
  Value rows(Value matrix, int64_t start, int64_t len);
  /// The first `len` rows of a [R, C] buffer.
  Value rows(Value matrix, OpFoldResult len);

  /// The [len, ...] view of steps [start, start + len) of a sequence.
  Value steps(Value sequence, Value start, OpFoldResult len);
  /// The first `len` steps of a sequence (the sequence itself if all).
  Value leading(Value sequence, OpFoldResult len);
  /// The input projection of some steps: dst = x W_ih^T for the views
  /// `x` [len, B, I] and `dst` [len, B, G*H], as one GEMM of len*B rows.
  void project(Value x, Value weightIh, Value dst);
  /// Runs `body(start, len)` over the chunks of K steps that cover T steps
  /// (the last one shorter when K does not divide T), first to last or, if
  /// `reverse`, last to first. Full chunks share one scf.for; the short
  /// one is emitted on its own, with its static length where T and K are
  /// constants, else under an scf.if.
  void forChunks(OpFoldResult steps, OpFoldResult chunk, bool reverse,
                 function_ref<void(Value start, OpFoldResult len)> body);
  /// Runs `body(start, offset, len)` over the GEMM blocks of P steps of
  /// steps [first, first + steps), `first` a multiple of P: `start` is the
  /// block's first step, `offset` = start - first. The blocks are those of
  /// the whole sequence whatever `first`, so every kernel that covers a
  /// block issues the same GEMMs for it.
  void forBlocks(
      Value first, OpFoldResult steps, OpFoldResult block, bool reverse,
      function_ref<void(Value start, Value offset, OpFoldResult len)> body);
  /// Runs `body(t, j, i)` over the steps of the block of forBlocks at
  /// (`start`, `offset`, `len`), first to last or, if `reverse`, last to
  /// first: t is the step, j = t - first its index in the kernel's range
  /// (in replay scratch), i = t - start its index in the block.
  void forBlockSteps(Value start, Value offset, OpFoldResult len, bool reverse,
                     function_ref<void(Value t, Value j, Value i)> body);

  /// Signal slots of the blocks of a kernel in a wavefront (see
  /// ConvertRNNToLoops): the block starting at step s has slot
  /// base + s / stride, the stride being the shortest distance between two
  /// blocks' starts, so that each block has a slot of its own.
  struct BlockSlots {
    int64_t base = 0, stride = 1;
  };
  /// The slots the kernel's blocks signal when done and wait for before
  /// they start. Unset, a kernel neither signals nor waits.
  std::optional<BlockSlots> signalSlots, waitSlots;
  /// rnn.signal, after the block starting at step `start`, and rnn.wait,
  /// before it, where the kernel signals and waits.
  void signalBlock(Value start);
  void waitBlock(Value start);
  /// The slot of the block starting at step `start`.
  Value blockSlot(const BlockSlots &slots, Value start);

private:
  /// forChunks where T or K is dynamic, and where both are constants.
  void forDynamicChunks(OpFoldResult steps, OpFoldResult chunk, bool reverse,
                        function_ref<void(Value start, OpFoldResult len)> body);
  void forStaticChunks(int64_t steps, int64_t chunk, bool reverse,
                       function_ref<void(Value start, OpFoldResult len)> body);

  /// Whether `index` moves along the innermost induction variable of the
  /// current vectorized loop (it is that variable plus a constant).
  bool isAlongLanes(Value index);
  /// With `wholeVectors`, the alignment in bytes of a vector access at
  /// `indices` of `memref` (along lanes): the lanes start at multiples of
  /// the width, so the access is aligned to the whole vector when the
  /// constant added to them, every stride but the innermost and the view's
  /// offset from its buffer are multiples of the width. Buffers (function
  /// arguments and allocations) are taken to be aligned to it: the runtime
  /// aligns its allocations to 64 bytes and the caller's buffers are
  /// checked on entry.
  llvm::MaybeAlign vectorAlignment(Value memref, ValueRange indices);
  /// Whether the offset of view `memref` from its buffer is a multiple of
  /// `elements`.
  bool isAligned(Value memref, int64_t elements);
  /// `value` as a vector of the current width if it is a scalar.
  Value lanes(Value value);
  /// `value` rounded to the storage type, in the element type.
  Value round(Value value);
  /// Whether `value` is a GEMM operand as it stands: made by gemmOperand
  /// (or `ones`), or a buffer of the storage type the GEMM takes.
  bool isGemmReady(Value value);
  /// `value` into a scratch GEMM operand: the `slot`th (0 or 1) of its
  /// shape, so that the operands of one GEMM get distinct buffers, or
  /// without a slot a buffer of its own.
  Value convertOperand(Value value, std::optional<unsigned> slot);

  ImplicitLocOpBuilder b;
  Type elementType, storageType;
  /// The element type of GEMM operands: storageType if the target's GEMM
  /// takes it, else elementType.
  Type gemmType;
  SmallVector<Value> scratch;
  /// Under a narrower storage type, ops made here go before `kernelStart`:
  /// the kernel's first operations, outside its loops.
  Operation *kernelStart = nullptr;
  /// GEMM operands made by gemmOperand, and the conversion scratch of each
  /// slot and static shape (one buffer serves every GEMM operand of its
  /// shape; one of a dynamic shape, [rows, X], is the leading rows of the
  /// buffer of its slot and X, [gemmRowsBound, X], made at
  /// `dynamicConversionsStart`).
  llvm::DenseSet<Value> gemmOperands;
  std::map<std::pair<unsigned, SmallVector<int64_t>>, Value> conversions;
  OpFoldResult gemmRowsBound;
  Operation *dynamicConversionsStart = nullptr;
  /// Vector width for `parallel`, and the state of the loop being built:
  /// its innermost induction variable and width (1 outside vector loops).
  int64_t vectorWidth;
  bool wholeVectors;
  Value laneIv;
  int64_t width = 1;
};

} // namespace rnn
} // namespace mlir

#endif // RNN_LIB_CONVERSION_RNNTOLOOPS_KERNELBUILDER_H
