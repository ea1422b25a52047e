//===- PlanMemory.cpp - rnn-plan-memory -----------------------------------===//
//
// Static memory plan of a lowered function (see Passes.td): arena offsets
// by first fit over live ranges, and the predicted peak of bytes held.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/BufferLiveness.h"
#include "rnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_RNNPLANMEMORYPASS
#include "rnn/Transforms/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;
using namespace mlir::rnn;

/// Offsets are multiples of this, as the runtime aligns each buffer.
static constexpr int64_t kAlignment = 64;

namespace {
struct RNNPlanMemoryPass
    : public rnn::impl::RNNPlanMemoryPassBase<RNNPlanMemoryPass> {
  using RNNPlanMemoryPassBase::RNNPlanMemoryPassBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        planFunction(func);
  }

  void planFunction(func::FuncOp func) {
    BufferLiveness liveness(func);
    if (!liveness.isStatic()) {
      func.emitRemark("rnn-plan-memory: buffers allocated inside loops or "
                      "with dynamic sizes; no static plan");
      return;
    }
    Builder b(&getContext());
    unsigned end = liveness.getNumPositions();
    auto freedAt = [&](const BufferInfo &info) {
      return info.dealloc ? info.deallocIndex : end;
    };

    // First fit: a buffer may take any space whose previous holder was
    // freed before the buffer is allocated.
    struct Placed {
      int64_t offset, size;
      unsigned freedAt;
    };
    SmallVector<Placed> placed;
    SmallVector<int64_t> offsets;
    int64_t arena = 0;
    for (const BufferInfo &info : liveness.getBuffers()) {
      int64_t size = 0;
      if (llvm::AddOverflow(info.bytes, kAlignment - 1, size)) {
        func.emitError("rnn-plan-memory: a buffer of ")
            << info.bytes << " bytes cannot be placed in 64-bit offsets";
        return signalPassFailure();
      }
      size = size / kAlignment * kAlignment;
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (const Placed &p : placed)
        if (p.freedAt > info.allocIndex)
          busy.push_back({p.offset, p.offset + p.size});
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset <= lo - size)
          break;
        offset = std::max(offset, hi);
      }
      int64_t top = 0;
      if (llvm::AddOverflow(offset, size, top)) {
        func.emitError("rnn-plan-memory: the arena of @")
            << func.getName() << " would exceed 64-bit offsets";
        return signalPassFailure();
      }
      placed.push_back({offset, size, freedAt(info)});
      offsets.push_back(offset);
      arena = std::max(arena, top);
      info.alloc->setAttr("rnn.offset", b.getI64IntegerAttr(offset));
    }
    int64_t peak = liveness.getPeakBytes();
    func->setAttr("rnn.predicted_peak_bytes", b.getI64IntegerAttr(peak));
    func->setAttr("rnn.arena_bytes", b.getI64IntegerAttr(arena));
    if (!report)
      return;

    llvm::raw_ostream &os = llvm::outs();
    os << "memory plan of @" << func.getName() << "\n";
    if (auto remat = func->getAttrOfType<StringAttr>("rnn.remat")) {
      os << "  remat " << remat.getValue();
      if (auto budget = func->getAttrOfType<IntegerAttr>("rnn.remat_budget"))
        os << " (chosen under budget " << budget.getInt() << " bytes)";
      os << "\n";
    }
    for (auto [info, offset] : llvm::zip(liveness.getBuffers(), offsets)) {
      std::string range =
          llvm::formatv("[{0}, {1}]", info.allocIndex,
                        info.dealloc ? std::to_string(info.deallocIndex)
                                     : std::string(info.returned ? "result"
                                                                 : "end"))
              .str();
      os << llvm::formatv("  {0,-14} {1,12} bytes  live {2,-16} offset {3}\n",
                          info.role, info.bytes, range, offset);
    }
    os << llvm::formatv("  predicted peak {0} bytes, arena {1} bytes\n", peak,
                        arena);
  }
};
} // namespace
