//===- DeviceBuffers.cpp - rnn-device-buffers -----------------------------===//
//
// Makes the buffers of host functions device buffers, once every loop on
// them has become a kernel: memref.alloc -> gpu.alloc, memref.dealloc ->
// gpu.dealloc. It runs after rnn-plan-memory, whose liveness and arena
// offsets are computed on memref.alloc/dealloc and their `rnn.role`; the
// attributes are carried over so the device allocations still name their
// role. Upstream has no pass for this: its GPU flows copy host buffers to
// the device, while here everything a step touches lives on the device.
//
// `gpu-to-llvm` lowers only the async forms of gpu.alloc and gpu.dealloc
// (the synchronous gpu.alloc only with host_shared), so each allocation
// and free runs on a stream of its own that is waited for at once:
// mgpuStreamCreate, mgpuMemAlloc / mgpuMemFree, mgpuStreamSynchronize,
// mgpuStreamDestroy.
//
// A whole-buffer memref.copy on the host (bufferization makes one when a
// function returns its argument) becomes a device-to-device gpu.memcpy
// (mgpuMemcpy), also on a stream of its own.
//
// The pass also checks what makes this sound: no other host operation
// reads or writes memory through a memref (loads, stores, vector accesses,
// strided copies, linalg ops left on the host would touch device memory
// from the CPU).
//
//===----------------------------------------------------------------------===//

#include "rnn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_DEVICEBUFFERSPASS
#include "rnn/Conversion/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

/// Whether `op` reads or writes memory through a memref operand or result.
static bool accessesBufferMemory(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    Value value = e.getValue();
    return value && isa<BaseMemRefType>(value.getType()) &&
           isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
  });
}

/// Whether `op` is a memref.copy between buffers with the identity layout,
/// which gpu-to-llvm lowers as one contiguous copy.
static bool isWholeBufferCopy(Operation *op) {
  auto copy = dyn_cast<memref::CopyOp>(op);
  if (!copy)
    return false;
  return llvm::all_of(
      TypeRange{copy.getSource().getType(), copy.getTarget().getType()},
      [](Type type) {
        auto memref = dyn_cast<MemRefType>(type);
        return memref && memref.getLayout().isIdentity() &&
               memref.hasStaticShape();
      });
}

namespace {
struct DeviceBuffersPass
    : public rnn::impl::DeviceBuffersPassBase<DeviceBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> allocs, deallocs, copies;
    bool hostAccess = false;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp, gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (isa<memref::AllocOp>(op))
        allocs.push_back(op);
      else if (isa<memref::DeallocOp>(op))
        deallocs.push_back(op);
      else if (isWholeBufferCopy(op))
        copies.push_back(op);
      else if (isa<memref::AllocaOp, memref::ReallocOp>(op) ||
               accessesBufferMemory(op)) {
        op->emitError("rnn-device-buffers: host code accesses buffer memory "
                      "(every access must be in a kernel)");
        hostAccess = true;
      }
      return WalkResult::advance();
    });
    if (hostAccess)
      return signalPassFailure();

    IRRewriter rewriter(&getContext());
    Type token = gpu::AsyncTokenType::get(&getContext());
    // `op` on a stream of its own that is waited for right after:
    //   %s = gpu.wait async ; %t = op async [%s] ; gpu.wait [%t]
    auto onOwnStream = [&](Operation *op, auto create) {
      Location loc = op->getLoc();
      rewriter.setInsertionPoint(op);
      Value stream = gpu::WaitOp::create(rewriter, loc, token, ValueRange())
                         .getAsyncToken();
      auto async = create(stream);
      gpu::WaitOp::create(rewriter, loc, Type(),
                          ValueRange{async.getAsyncToken()});
      return async;
    };
    for (Operation *op : allocs) {
      auto alloc = cast<memref::AllocOp>(op);
      auto device = onOwnStream(alloc, [&](Value stream) {
        return gpu::AllocOp::create(rewriter, alloc.getLoc(), alloc.getType(),
                                    token, ValueRange{stream},
                                    alloc.getDynamicSizes(),
                                    alloc.getSymbolOperands(),
                                    /*hostShared=*/false);
      });
      for (NamedAttribute attr : alloc->getDiscardableAttrs())
        device->setAttr(attr.getName(), attr.getValue());
      rewriter.replaceOp(alloc, device.getMemref());
    }
    for (Operation *op : copies) {
      auto copy = cast<memref::CopyOp>(op);
      onOwnStream(copy, [&](Value stream) {
        return gpu::MemcpyOp::create(rewriter, copy.getLoc(), token,
                                     ValueRange{stream}, copy.getTarget(),
                                     copy.getSource());
      });
      rewriter.eraseOp(copy);
    }
    for (Operation *op : deallocs) {
      auto dealloc = cast<memref::DeallocOp>(op);
      onOwnStream(dealloc, [&](Value stream) {
        return gpu::DeallocOp::create(rewriter, dealloc.getLoc(), token,
                                      ValueRange{stream}, dealloc.getMemref());
      });
      rewriter.eraseOp(dealloc);
    }
  }
};
} // namespace
