//===- TileParallelLoops.cpp - rnn-tile-parallel-loops --------------------===//
//
// Gives every outermost scf.parallel a block of threads before the loops
// are mapped to the GPU: the loop is split, with the upstream
// `scf::tileParallelLoop`, into a loop over blocks and a nested loop over
// the threads of one block. Without this, `gpu-map-parallel-loops` maps a
// single loop to the grid alone and every block has one thread.
//
// Upstream `scf-parallel-loop-tiling` applies one list of tile sizes,
// counted from the outermost dimension, to loops of every rank; the rnn
// loops have rank 1 (bias sums), 2 ([B, H] gate math) and 3 ([T, B, H]
// state inputs), and the block should always run along the innermost,
// contiguous dimension. So the tile sizes are chosen here per loop, from
// the innermost dimension outwards, up to `block-size` threads.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/Diagnostics.h"
#include "rnn/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_TILEPARALLELLOOPSPASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

/// The number of iterations of dimension `dim` of `loop`, if constant.
static std::optional<int64_t> tripCount(scf::ParallelOp loop, unsigned dim) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[dim]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[dim]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[dim]);
  if (!lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return std::max<int64_t>(0, llvm::divideCeil(*ub - *lb, *step));
}

/// Tile sizes giving a block of at most `blockSize` threads: the innermost
/// dimension first, then the next ones while threads are left. A dimension
/// of unknown length takes all the threads left.
static SmallVector<int64_t> blockShape(scf::ParallelOp loop,
                                       int64_t blockSize) {
  unsigned rank = loop.getNumLoops();
  SmallVector<int64_t> sizes(rank, 1);
  int64_t left = blockSize;
  for (int dim = rank - 1; dim >= 0 && left > 1; --dim) {
    std::optional<int64_t> n = tripCount(loop, dim);
    int64_t size = n ? std::clamp<int64_t>(*n, 1, left) : left;
    sizes[dim] = size;
    left /= size;
  }
  return sizes;
}

namespace {
struct TileParallelLoopsPass
    : public rnn::impl::TileParallelLoopsPassBase<TileParallelLoopsPass> {
  using TileParallelLoopsPassBase::TileParallelLoopsPassBase;

  void runOnOperation() override {
    // CUDA's limit on the threads of a block, which the pipelines check
    // too: a larger block would fail only when launched.
    if (blockSize < 1 || blockSize > 1024) {
      rnn::emitErrorAt(getOperation(),
                       "rnn-tile-parallel-loops: block-size must be in "
                       "[1, 1024], got ")
          << blockSize.getValue();
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> outermost;
    WalkResult walk =
        getOperation()->walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
          // A kernel's threads would each need a share of the reduction,
          // which the parallel-loops-to-GPU conversion does not make.
          if (loop.getNumReductions() != 0) {
            loop.emitError("rnn-tile-parallel-loops: an scf.parallel with "
                           "reductions cannot become a GPU kernel");
            return WalkResult::interrupt();
          }
          outermost.push_back(loop);
          return WalkResult::skip();
        });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (scf::ParallelOp loop : outermost)
      scf::tileParallelLoop(loop, blockShape(loop, blockSize),
                            /*noMinMaxBounds=*/true);
  }
};
} // namespace
