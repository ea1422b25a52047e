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
// Every piece of device work of a host function goes on one stream, made
// at the function's entry (`gpu.wait async`, mgpuStreamCreate: the
// runtime's stream) and waited for once before each return (`gpu.wait`,
// mgpuStreamSynchronize): allocations and frees (gpu.alloc/gpu.dealloc
// async, mgpuMemAlloc/mgpuMemFree), whole-buffer copies (a memref.copy of
// a whole buffer, which bufferization makes when a function returns its
// argument, becomes gpu.memcpy) and kernel launches (gpu.launch_func
// async). The runtime's GEMM calls use the same stream, so program order
// is kept without a synchronization between launches.
//
// Each launch is wrapped in a memref.alloca_scope: the translation to LLVM
// IR stores the kernel arguments in stack slots at the launch, and without
// the scope a launch in a time loop would grow the stack every step.
//
// A wavefront (rnn.fork ... rnn.join) runs on lanes: the lane ops become
// the runtime's rnnrt_cuda_fork, rnnrt_cuda_lane, rnnrt_cuda_signal,
// rnnrt_cuda_wait and rnnrt_cuda_join, and the work after `rnn.lane n`
// (n > 0) goes on the stream mgpuStreamCreate gives right after the lane's
// call (`gpu.wait async`), the lane's. The GEMM calls follow the runtime's
// current lane by themselves.
//
// The pass also checks what makes this sound: no other host operation
// reads or writes memory through a memref (loads, stores, vector accesses,
// strided copies, linalg ops left on the host would touch device memory
// from the CPU).
//
//===----------------------------------------------------------------------===//

#include "rnn/Target/Passes.h"

#include "rnn/Analysis/MemRefEffects.h"
#include "rnn/Conversion/RuntimeFunctions.h"
#include "rnn/Dialect/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_DEVICEBUFFERSPASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

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
/// The host work of one function, gathered before rewriting.
struct HostWork {
  SmallVector<memref::AllocOp> allocs;
  SmallVector<memref::DeallocOp> deallocs;
  SmallVector<memref::CopyOp> copies;
  SmallVector<gpu::LaunchFuncOp> launches;
  /// rnn.fork, rnn.lane, rnn.signal, rnn.wait, rnn.join.
  SmallVector<Operation *> lanes;

  bool empty() const {
    return allocs.empty() && deallocs.empty() && copies.empty() &&
           launches.empty() && lanes.empty();
  }
};

/// The runtime function each lane op calls, and whether it takes an i64.
std::pair<StringRef, bool> laneCall(Operation *op) {
  return TypeSwitch<Operation *, std::pair<StringRef, bool>>(op)
      .Case(
          [](rnn::ForkOp) { return std::make_pair("rnnrt_cuda_fork", false); })
      .Case([](rnn::LaneSwitchOp) {
        return std::make_pair("rnnrt_cuda_lane", true);
      })
      .Case([](rnn::SignalOp) {
        return std::make_pair("rnnrt_cuda_signal", true);
      })
      .Case([](rnn::WaitOp) { return std::make_pair("rnnrt_cuda_wait", true); })
      .Default(
          [](Operation *) { return std::make_pair("rnnrt_cuda_join", false); });
}

struct DeviceBuffersPass
    : public rnn::impl::DeviceBuffersPassBase<DeviceBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The host accesses in program order: the first is reported, with how
    // many more there are (on a whole model there can be thousands).
    SmallVector<Operation *> hostAccesses;
    std::vector<std::pair<func::FuncOp, HostWork>> functions;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      HostWork work;
      function.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (isa<gpu::LaunchOp>(op))
          return WalkResult::skip();
        if (auto alloc = dyn_cast<memref::AllocOp>(op))
          work.allocs.push_back(alloc);
        else if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
          work.deallocs.push_back(dealloc);
        else if (isWholeBufferCopy(op))
          work.copies.push_back(cast<memref::CopyOp>(op));
        else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
          work.launches.push_back(launch);
        else if (isa<rnn::ForkOp, rnn::LaneSwitchOp, rnn::SignalOp, rnn::WaitOp,
                     rnn::JoinOp>(op))
          work.lanes.push_back(op);
        else if (isa<memref::AllocaOp, memref::ReallocOp>(op) ||
                 rnn::hasMemRefEffect<MemoryEffects::Read,
                                      MemoryEffects::Write>(op))
          hostAccesses.push_back(op);
        return WalkResult::advance();
      });
      if (!work.empty())
        functions.emplace_back(function, std::move(work));
    }
    if (!hostAccesses.empty()) {
      InFlightDiagnostic diag = hostAccesses.front()->emitError(
          "rnn-device-buffers: host code accesses buffer memory (every "
          "access must be in a kernel)");
      if (size_t more = hostAccesses.size() - 1)
        diag.attachNote(hostAccesses[1]->getLoc())
            << more << " more host " << (more == 1 ? "access" : "accesses")
            << " of buffer memory, the next here";
      return signalPassFailure();
    }
    for (auto &[function, work] : functions)
      if (failed(rewrite(function, work)))
        return signalPassFailure();
  }

  /// Puts the work of `function` on one stream, created at its entry and
  /// waited for before each return.
  LogicalResult rewrite(func::FuncOp function, HostWork &work) {
    IRRewriter rewriter(&getContext());
    Type token = gpu::AsyncTokenType::get(&getContext());
    rewriter.setInsertionPointToStart(&function.getBody().front());
    Value stream =
        gpu::WaitOp::create(rewriter, function.getLoc(), token, ValueRange())
            .getAsyncToken();
    Block &body = function.getBody().front();
    // The stream of each op of the body: the function's, or its lane's.
    llvm::DenseMap<Operation *, Value> streams;
    Value current = stream;
    for (Operation &op : body) {
      if (auto lane = dyn_cast<rnn::LaneSwitchOp>(op)) {
        // The lane's call comes first: mgpuStreamCreate then gives the
        // lane's stream.
        rewriter.setInsertionPointAfter(&op);
        current = lane.getLane() == 0
                      ? stream
                      : gpu::WaitOp::create(rewriter, op.getLoc(), token,
                                            ValueRange())
                            .getAsyncToken();
      } else if (isa<rnn::JoinOp>(op)) {
        current = stream;
      }
      streams[&op] = current;
    }
    auto streamOf = [&](Operation *op) {
      return streams.lookup(body.findAncestorOpInBlock(*op));
    };
    for (Operation *op : work.lanes) {
      auto [name, takesSlot] = laneCall(op);
      SmallVector<Type> inputs;
      if (takesSlot)
        inputs.push_back(rewriter.getI64Type());
      FailureOr<func::FuncOp> callee = rnn::declareRuntimeFunction(
          function->getParentOfType<ModuleOp>(), name,
          rewriter.getFunctionType(inputs, {}), "rnn-device-buffers");
      if (failed(callee))
        return failure();
      rewriter.setInsertionPoint(op);
      SmallVector<Value> args;
      if (auto lane = dyn_cast<rnn::LaneSwitchOp>(op))
        args.push_back(arith::ConstantIntOp::create(
            rewriter, op->getLoc(), rewriter.getI64Type(), lane.getLane()));
      else if (takesSlot)
        args.push_back(arith::IndexCastOp::create(
            rewriter, op->getLoc(), rewriter.getI64Type(), op->getOperand(0)));
      func::CallOp::create(rewriter, op->getLoc(), *callee, args);
      rewriter.eraseOp(op);
    }

    for (memref::AllocOp alloc : work.allocs) {
      Value onStream = streamOf(alloc);
      rewriter.setInsertionPoint(alloc);
      auto device = gpu::AllocOp::create(
          rewriter, alloc.getLoc(), alloc.getType(), token, onStream,
          alloc.getDynamicSizes(), alloc.getSymbolOperands(),
          /*hostShared=*/false);
      for (NamedAttribute attr : alloc->getDiscardableAttrs())
        device->setAttr(attr.getName(), attr.getValue());
      rewriter.replaceOp(alloc, device.getMemref());
    }
    for (memref::CopyOp copy : work.copies) {
      Value onStream = streamOf(copy);
      rewriter.setInsertionPoint(copy);
      gpu::MemcpyOp::create(rewriter, copy.getLoc(), token, onStream,
                            copy.getTarget(), copy.getSource());
      rewriter.eraseOp(copy);
    }
    for (memref::DeallocOp dealloc : work.deallocs) {
      Value onStream = streamOf(dealloc);
      rewriter.setInsertionPoint(dealloc);
      gpu::DeallocOp::create(rewriter, dealloc.getLoc(), token, onStream,
                             dealloc.getMemref());
      rewriter.eraseOp(dealloc);
    }
    for (gpu::LaunchFuncOp launch : work.launches) {
      if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
          launch.getAsyncObject())
        return launch.emitError("rnn-device-buffers: expected a synchronous "
                                "gpu.launch_func (the pass picks the stream)");
      Value onStream = streamOf(launch);
      // The translation to LLVM IR puts the kernel arguments in stack
      // slots at the launch; the scope releases them after it, so a launch
      // in a time loop does not grow the stack with T.
      rewriter.setInsertionPoint(launch);
      auto scope = memref::AllocaScopeOp::create(rewriter, launch.getLoc(),
                                                 TypeRange());
      Block *body = rewriter.createBlock(&scope.getBodyRegion());
      memref::AllocaScopeReturnOp::create(rewriter, launch.getLoc());
      rewriter.setInsertionPointToStart(body);
      std::optional<gpu::KernelDim3> cluster;
      if (launch.hasClusterSize())
        cluster = launch.getClusterSizeOperandValues();
      auto async = gpu::LaunchFuncOp::create(
          rewriter, launch.getLoc(), launch.getKernel(),
          launch.getGridSizeOperandValues(), launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
          token, onStream, cluster);
      for (NamedAttribute attr : launch->getDiscardableAttrs())
        async->setAttr(attr.getName(), attr.getValue());
      rewriter.eraseOp(launch);
    }
    // One wait per call: the step's work is complete when it returns.
    function.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      gpu::WaitOp::create(rewriter, ret.getLoc(), Type(), ValueRange(stream));
    });
    return success();
  }
};
} // namespace
