//===- BF16MemoryAsI16.cpp - rnn-bf16-memory-as-i16 -----------------------===//
//
// rnn-approximate-math expands every conversion between f32 and bf16 into
// integer operations, so a lowered program only moves bf16 values between
// memory and bitcasts. LLVM still sees them as bf16 and may move the
// bitcasts through selects, leaving bf16 arithmetic that x86 without
// AVX512-BF16 lowers to compiler-runtime calls. Upstream has no pass that
// narrows these accesses (arith-emulate-unsupported-floats widens bf16
// arithmetic to f32, which is not what is left here), hence this one: it
// loads and stores the integers themselves.
//
//===----------------------------------------------------------------------===//

#include "rnn/Target/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_BF16MEMORYASI16PASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

namespace {

bool isBF16(Type type) { return getElementTypeOrSelf(type).isBF16(); }

bool isI16(Type type) { return getElementTypeOrSelf(type).isInteger(16); }

/// `load` reads bf16 that every user bitcasts to i16 of the same shape:
/// load the i16 instead.
void narrowLoad(LLVM::LoadOp load) {
  Value result = load.getResult();
  if (!isBF16(result.getType()) || result.use_empty())
    return;
  Type integer;
  for (Operation *user : result.getUsers()) {
    auto cast = dyn_cast<LLVM::BitcastOp>(user);
    if (!cast || !isI16(cast.getType()) ||
        (integer && integer != cast.getType()))
      return;
    integer = cast.getType();
  }
  result.setType(integer);
  for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
    user->getResult(0).replaceAllUsesWith(result);
    user->erase();
  }
}

/// `store` writes bf16 bitcast from i16: store the i16.
void narrowStore(LLVM::StoreOp store) {
  auto cast = store.getValue().getDefiningOp<LLVM::BitcastOp>();
  if (!cast || !isBF16(cast.getType()) || !isI16(cast.getArg().getType()))
    return;
  store.getValueMutable().assign(cast.getArg());
  if (cast->use_empty())
    cast->erase();
}

struct BF16MemoryAsI16Pass
    : public rnn::impl::BF16MemoryAsI16PassBase<BF16MemoryAsI16Pass> {
  void runOnOperation() override {
    // Collected first: narrowing erases bitcasts the walk would visit.
    SmallVector<LLVM::LoadOp> loads;
    SmallVector<LLVM::StoreOp> stores;
    getOperation()->walk([&](Operation *op) {
      if (auto load = dyn_cast<LLVM::LoadOp>(op))
        loads.push_back(load);
      else if (auto store = dyn_cast<LLVM::StoreOp>(op))
        stores.push_back(store);
    });
    for (LLVM::LoadOp load : loads)
      narrowLoad(load);
    for (LLVM::StoreOp store : stores)
      narrowStore(store);
  }
};

} // namespace
