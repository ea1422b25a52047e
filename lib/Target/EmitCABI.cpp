//===- EmitCABI.cpp - rnn-emit-c-abi --------------------------------------===//
//
// C entry points of plain pointers for compiled functions (see Passes.td).
// Upstream's `llvm.emit_c_interface` wraps a function in one taking
// pointers to memref descriptors, which every caller would have to fill in
// with the shapes; here the shapes are static, so the entry point builds
// the descriptors itself and a caller passes data pointers only. On the
// cuda target (caller-stream) the entry point also brackets the call with
// the runtime's rnnrt_cuda_enter/leave, which route the work to the
// caller's stream and turn a recorded error into the return code.
//
//===----------------------------------------------------------------------===//

#include "rnn/Target/Passes.h"
#include "rnn/Conversion/RuntimeFunctions.h"
#include "rnn/Dialect/RNNDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_EMITCABIPASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

/// Whether `func` can have an entry point: every argument a statically
/// shaped memref of identity layout, no results.
static LogicalResult checkSignature(func::FuncOp func) {
  if (func.getNumResults() != 0)
    return func.emitOpError("has results; a C entry point needs them as "
                            "out-params (buffer-results-to-out-params)");
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || !memref.hasStaticShape() || !memref.getLayout().isIdentity())
      return func.emitOpError("argument ")
             << i << " has type " << type
             << "; a C entry point takes statically shaped memrefs of "
                "identity layout";
  }
  return success();
}

/// The memref descriptor of `type` around `data`, cast to `type`.
static Value buildDescriptor(OpBuilder &b, Location loc, MemRefType type,
                             Value data) {
  Type i64 = b.getI64Type();
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Type> fields = {ptrType, ptrType, i64};
  int64_t rank = type.getRank();
  if (rank > 0) {
    auto array = LLVM::LLVMArrayType::get(i64, rank);
    fields.append({array, array});
  }
  auto structType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  auto constant = [&](int64_t value) -> Value {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(value));
  };
  Value desc = LLVM::PoisonOp::create(b, loc, structType);
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{1});
  desc = LLVM::InsertValueOp::create(b, loc, desc, constant(0),
                                     ArrayRef<int64_t>{2});
  int64_t stride = 1;
  for (int64_t dim = rank - 1; dim >= 0; --dim) {
    desc = LLVM::InsertValueOp::create(b, loc, desc,
                                       constant(type.getDimSize(dim)),
                                       ArrayRef<int64_t>{3, dim});
    desc = LLVM::InsertValueOp::create(b, loc, desc, constant(stride),
                                       ArrayRef<int64_t>{4, dim});
    stride *= type.getDimSize(dim);
  }
  return UnrealizedConversionCastOp::create(b, loc, type, desc).getResult(0);
}

/// The address of a private constant array of each argument's extent in
/// bytes, negated where the function writes the argument
/// (rnn::writesArgument), for rnnrt_cuda_enter's overlap check.
static Value buildExtents(OpBuilder &b, Location loc, ModuleOp module,
                          func::FuncOp func, StringRef entryName) {
  SmallVector<int64_t> extents;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto memref = cast<MemRefType>(type);
    int64_t bytes = memref.getNumElements() *
                    llvm::divideCeil(memref.getElementTypeBitWidth(), 8);
    extents.push_back(rnn::writesArgument(func, i) ? -bytes : bytes);
  }
  Type i64 = b.getI64Type();
  auto arrayType = LLVM::LLVMArrayType::get(i64, extents.size());
  std::string symbol = ("__rnnc_extents_" + entryName).str();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto tensorType =
        RankedTensorType::get({static_cast<int64_t>(extents.size())}, i64);
    LLVM::GlobalOp::create(
        b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Private, symbol,
        DenseElementsAttr::get(tensorType, ArrayRef(extents)));
  }
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), symbol);
}

namespace {
struct EmitCABIPass : public rnn::impl::EmitCABIPassBase<EmitCABIPass> {
  using EmitCABIPassBase::EmitCABIPassBase;

  /// The runtime's rnnrt_cuda_enter/leave (caller-stream).
  func::FuncOp enter, leave;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Descriptor sizes and strides are i64: the index type must be 64-bit.
    if (DataLayout(module).getTypeSizeInBits(IndexType::get(&getContext())) !=
        64) {
      module.emitError("rnn-emit-c-abi: expects a 64-bit index type");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);
    if (callerStream) {
      Builder b(&getContext());
      auto ptrType = LLVM::LLVMPointerType::get(&getContext());
      Type i32 = b.getI32Type();
      FailureOr<func::FuncOp> enterDecl = rnn::declareRuntimeFunction(
          module, "rnnrt_cuda_enter",
          b.getFunctionType(
              {ptrType, ptrType, ptrType, ptrType, b.getI64Type()}, {i32}),
          "rnn-emit-c-abi{caller-stream=1}");
      FailureOr<func::FuncOp> leaveDecl = rnn::declareRuntimeFunction(
          module, "rnnrt_cuda_leave", b.getFunctionType({}, {i32}),
          "rnn-emit-c-abi{caller-stream=1}");
      if (failed(enterDecl) || failed(leaveDecl))
        return signalPassFailure();
      enter = *enterDecl;
      leave = *leaveDecl;
    }
    for (func::FuncOp func : entries) {
      if (failed(checkSignature(func)))
        return signalPassFailure();
      std::string name = prefix + func.getName().str();
      if (module.lookupSymbol(name)) {
        func.emitOpError("cannot have a C entry point: symbol @")
            << name << " already exists";
        return signalPassFailure();
      }
      OpBuilder b(func);
      b.setInsertionPointAfter(func);
      Location loc = func.getLoc();
      auto ptrType = LLVM::LLVMPointerType::get(&getContext());
      auto entry = func::FuncOp::create(
          b, loc, name,
          b.getFunctionType({ptrType, ptrType}, {b.getI32Type()}));
      Block *body = entry.addEntryBlock();
      b.setInsertionPointToStart(body);
      Value buffers = body->getArgument(0);
      Type i32 = b.getI32Type();
      if (callerStream) {
        // int32_t entered =
        //     rnnrt_cuda_enter(name, stream, buffers, extents, count);
        // if (entered != 0) return entered == 1;
        Value entryName =
            LLVM::createGlobalString(loc, b, "__rnnc_entry_" + name,
                                     name + '\0', LLVM::Linkage::Private);
        Value extents = buildExtents(b, loc, module, func, name);
        Value count = arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                                   func.getNumArguments());
        Value entered =
            func::CallOp::create(b, loc, enter,
                                 ValueRange{entryName, body->getArgument(1),
                                            buffers, extents, count})
                .getResult(0);
        Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
        Value one = arith::ConstantIntOp::create(b, loc, i32, 1);
        Value skips = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            entered, zero);
        Block *call = entry.addBlock();
        Block *early = entry.addBlock();
        cf::CondBranchOp::create(b, loc, skips, early, call);
        b.setInsertionPointToStart(early);
        Value failed = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             entered, one);
        func::ReturnOp::create(
            b, loc, arith::ExtUIOp::create(b, loc, i32, failed).getResult());
        b.setInsertionPointToStart(call);
      }
      SmallVector<Value> operands;
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
        auto slot = LLVM::GEPOp::create(
            b, loc, ptrType, ptrType, buffers,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
        Value data = LLVM::LoadOp::create(b, loc, ptrType, slot);
        operands.push_back(
            buildDescriptor(b, loc, cast<MemRefType>(type), data));
      }
      func::CallOp::create(b, loc, func, operands);
      Value status =
          callerStream
              ? func::CallOp::create(b, loc, leave, ValueRange()).getResult(0)
              : arith::ConstantIntOp::create(b, loc, i32, 0).getResult();
      func::ReturnOp::create(b, loc, status);
    }
  }
};
} // namespace
