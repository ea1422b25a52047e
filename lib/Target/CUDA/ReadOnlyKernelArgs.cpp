//===- ReadOnlyKernelArgs.cpp - rnn-read-only-kernel-args -----------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: marks the kernel arguments whose memory does not change while the
// kernel runs, so that their loads go through the GPU's read-only data
// path (ld.global.nc) and may be moved across the kernel's stores. With
// `mark-loads=0`, on gpu.func kernels and their host launches: an argument
// the kernel only reads gets `llvm.readonly` when, at every launch, no
// argument the kernel writes may share memory with it, and the arguments it
// writes get `rnn.written` (rnn-kernel-signatures passes both on to the
// null CUDA device, which checks the claim at every launch). With
// `mark-loads=1`, on the lowered kernels (llvm.func): every llvm.load
// whose address derives from a `llvm.readonly` parameter becomes an
// invariant load, which NVPTX emits as ld.global.nc.
//
// Why: the proof needs where each launch operand's memory comes from,
// which upstream's LocalAliasAnalysis gives only as "same allocation" and
// cannot split: every scratch buffer of a planned step is a view of one
// arena at a static byte offset. Here an operand is traced through views
// and selects to its allocations (memref.alloc, gpu.alloc) or function
// arguments, each with the byte range of the arena it covers when the
// offsets are static. Two distinct allocations, or an allocation and a
// function argument, never share memory; two function arguments of a
// public function are disjoint when either is a buffer the entry point
// writes by its role (rnn::bufferRole), since entry points refuse a
// written buffer that overlaps another (rnnrt_cuda_enter) and rnn-run
// allocates each argument. `noalias` would say the same to LLVM, but
// upstream cannot attach it to a memref passed as a descriptor, whose
// allocated and aligned pointers alias.
//
//===----------------------------------------------------------------------===//

#include "rnn/Target/Passes.h"
#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Dialect/RNNDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <optional>

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_READONLYKERNELARGSPASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

namespace {
/// Memory a launch operand may use: an allocation or a function argument,
/// and the bytes of it, [begin, end), when known.
struct Piece {
  Value root;
  std::optional<std::pair<int64_t, int64_t>> bytes;
};

/// The static size in bytes of a view, if it has one.
std::optional<int64_t> staticBytes(memref::ViewOp view) {
  MemRefType type = view.getType();
  if (!type.getLayout().isIdentity())
    return std::nullopt;
  return rnn::getBufferBytes(type, DataLayout::closest(view));
}

/// Adds the pieces of memory `value` may use; false if one is not known.
bool collectPieces(Value value, SmallVectorImpl<Piece> &pieces) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (!isa<func::FuncOp>(arg.getOwner()->getParentOp()) ||
        !arg.getOwner()->isEntryBlock())
      return false;
    pieces.push_back({arg, std::nullopt});
    return true;
  }
  Operation *op = value.getDefiningOp();
  if (isa<memref::AllocOp, gpu::AllocOp>(op)) {
    pieces.push_back({value, std::nullopt});
    return true;
  }
  if (auto select = dyn_cast<arith::SelectOp>(op))
    return collectPieces(select.getTrueValue(), pieces) &&
           collectPieces(select.getFalseValue(), pieces);
  if (auto view = dyn_cast<memref::ViewOp>(op)) {
    // A view of an i8 buffer at a byte offset: a range of its root when
    // the buffer is the root itself (an arena) and the offset is static.
    SmallVector<Piece> sources;
    if (!collectPieces(view.getSource(), sources))
      return false;
    Value source = view.getSource();
    bool isRoot = isa<BlockArgument>(source) ||
                  isa<memref::AllocOp, gpu::AllocOp>(source.getDefiningOp());
    std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
    std::optional<int64_t> bytes = staticBytes(view);
    for (Piece &piece : sources) {
      piece.bytes = std::nullopt;
      if (isRoot && shift && bytes && *shift >= 0)
        piece.bytes = std::make_pair(*shift, *shift + *bytes);
      pieces.push_back(piece);
    }
    return true;
  }
  // A subview lies within its source, and a cast or a reshape is its
  // source's memory: the source's pieces bound it. A reinterpret_cast may
  // reach anywhere in its allocation.
  if (isa<memref::SubViewOp, memref::CastOp, memref::CollapseShapeOp,
          memref::ExpandShapeOp>(op))
    return collectPieces(cast<ViewLikeOpInterface>(op).getViewSource(), pieces);
  if (auto viewLike = dyn_cast<ViewLikeOpInterface>(op)) {
    SmallVector<Piece> sources;
    if (!collectPieces(viewLike.getViewSource(), sources))
      return false;
    for (Piece &piece : sources)
      pieces.push_back({piece.root, std::nullopt});
    return true;
  }
  return false;
}

/// Whether the argument is a buffer its public function, an entry point,
/// writes; such a buffer overlaps no other argument.
bool isWrittenArgument(BlockArgument arg) {
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func.isPublic() && rnn::writesArgument(func, arg.getArgNumber());
}

bool mayShareMemory(const Piece &a, const Piece &b) {
  if (a.root == b.root)
    return !(a.bytes && b.bytes &&
             (a.bytes->second <= b.bytes->first ||
              b.bytes->second <= a.bytes->first));
  auto argA = dyn_cast<BlockArgument>(a.root);
  auto argB = dyn_cast<BlockArgument>(b.root);
  // Distinct allocations, or an allocation and a buffer the caller owns.
  if (!argA || !argB)
    return false;
  return !isWrittenArgument(argA) && !isWrittenArgument(argB);
}

/// The memref arguments `kernel` writes (through views of them), or
/// failure if a write or an effect cannot be placed.
FailureOr<llvm::SmallBitVector> writtenArguments(gpu::GPUFuncOp kernel) {
  llvm::SmallBitVector written(kernel.getNumArguments());
  // The kernel arguments a value in the kernel may view.
  std::function<bool(Value, SmallVectorImpl<unsigned> &)> roots =
      [&](Value value, SmallVectorImpl<unsigned> &args) {
        if (auto arg = dyn_cast<BlockArgument>(value)) {
          if (arg.getOwner() != &kernel.getBody().front())
            return false;
          args.push_back(arg.getArgNumber());
          return true;
        }
        Operation *op = value.getDefiningOp();
        if (isa<memref::AllocaOp, memref::AllocOp>(op))
          return true;
        if (auto select = dyn_cast<arith::SelectOp>(op))
          return roots(select.getTrueValue(), args) &&
                 roots(select.getFalseValue(), args);
        if (auto view = dyn_cast<ViewLikeOpInterface>(op))
          return roots(view.getViewSource(), args);
        return false;
      };
  WalkResult result = kernel.walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        op->hasTrait<OpTrait::IsTerminator>() || op == kernel)
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      SmallVector<unsigned> args;
      if (!value || !roots(value, args))
        return WalkResult::interrupt();
      for (unsigned arg : args)
        written.set(arg);
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  return written;
}

/// The address a load reads, followed back through address arithmetic to
/// the function argument it derives from, or null.
BlockArgument baseArgument(Value address) {
  while (Operation *op = address.getDefiningOp()) {
    if (auto gep = dyn_cast<LLVM::GEPOp>(op))
      address = gep.getBase();
    else if (isa<LLVM::AddrSpaceCastOp, LLVM::BitcastOp>(op))
      address = op->getOperand(0);
    else
      return nullptr;
  }
  return dyn_cast<BlockArgument>(address);
}

struct ReadOnlyKernelArgsPass
    : public rnn::impl::ReadOnlyKernelArgsPassBase<ReadOnlyKernelArgsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (markLoads)
      markInvariantLoads();
    else
      markReadOnlyArguments();
  }

  void markReadOnlyArguments() {
    Operation *module = getOperation();
    // The launches of each kernel.
    DenseMap<Operation *, SmallVector<gpu::LaunchFuncOp>> launches;
    module->walk([&](gpu::LaunchFuncOp launch) {
      if (Operation *kernel =
              SymbolTable::lookupNearestSymbolFrom(launch, launch.getKernel()))
        launches[kernel].push_back(launch);
    });
    auto readOnly = StringAttr::get(&getContext(),
                                    LLVM::LLVMDialect::getReadonlyAttrName());
    auto writtenName = StringAttr::get(
        &getContext(), rnn::RNNDialect::WrittenAttrHelper::getNameStr());
    module->walk([&](gpu::GPUFuncOp kernel) {
      if (!kernel.isKernel())
        return;
      FailureOr<llvm::SmallBitVector> written = writtenArguments(kernel);
      auto it = launches.find(kernel);
      if (failed(written) || it == launches.end())
        return;
      // The memref arguments the kernel only reads, less those a launch may
      // pass memory the kernel writes.
      llvm::SmallBitVector reads(kernel.getNumArguments());
      for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
        if (!isa<MemRefType>(kernel.getArgument(i).getType()))
          continue;
        if ((*written)[i])
          kernel.setArgAttr(i, writtenName, UnitAttr::get(&getContext()));
        else
          reads.set(i);
      }
      for (gpu::LaunchFuncOp launch : it->second)
        dropSharedWithWrites(launch, *written, reads);
      for (int i = reads.find_first(); i >= 0; i = reads.find_next(i))
        kernel.setArgAttr(i, readOnly, UnitAttr::get(&getContext()));
    });
  }

  /// Clears in `reads` the operands of `launch` that may share memory with
  /// an operand the kernel writes (`written`); all of them if a written
  /// operand cannot be traced.
  static void dropSharedWithWrites(gpu::LaunchFuncOp launch,
                                   const llvm::SmallBitVector &written,
                                   llvm::SmallBitVector &reads) {
    ValueRange operands = launch.getKernelOperands();
    SmallVector<Piece> writes;
    for (int w = written.find_first(); w >= 0; w = written.find_next(w))
      if (!collectPieces(operands[w], writes)) {
        reads.reset();
        return;
      }
    for (int i = reads.find_first(); i >= 0; i = reads.find_next(i)) {
      SmallVector<Piece> pieces;
      bool shares = !collectPieces(operands[i], pieces) ||
                    llvm::any_of(pieces, [&](const Piece &a) {
                      return llvm::any_of(writes, [&](const Piece &b) {
                        return mayShareMemory(a, b);
                      });
                    });
      if (shares)
        reads.reset(i);
    }
  }

  void markInvariantLoads() {
    getOperation()->walk([&](LLVM::LoadOp load) {
      BlockArgument arg = baseArgument(load.getAddr());
      if (!arg || !arg.getOwner()->isEntryBlock())
        return;
      auto func = dyn_cast<LLVM::LLVMFuncOp>(arg.getOwner()->getParentOp());
      if (func && func.getArgAttr(arg.getArgNumber(),
                                  LLVM::LLVMDialect::getReadonlyAttrName()))
        load.setInvariant(true);
    });
  }
};
} // namespace
