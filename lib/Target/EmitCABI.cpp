//===- EmitCABI.cpp - rnn-emit-c-abi --------------------------------------===//
//
// C entry points of plain pointers for compiled functions (see Passes.td).
// Upstream's `llvm.emit_c_interface` wraps a function in one taking
// pointers to memref descriptors, which every caller would have to fill in
// with the shapes; here the shapes are static, so the entry point builds
// the descriptors itself and a caller passes data pointers only. On the
// cuda target (caller-stream) the entry point takes the caller's context
// (rnnc_context_create) first and brackets the call with the runtime's
// rnnrt_cuda_enter/leave, which route the work to the context's device and
// the caller's stream and turn a recorded error into the return code. A
// function compiled for every T and B takes them first, and has a second
// entry point that gives each argument's size at a shape (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/SizeExpr.h"
#include "rnn/Conversion/RuntimeFunctions.h"
#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Support/Diagnostics.h"
#include "rnn/Target/Passes.h"

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
using namespace mlir::rnn;

/// The function giving the bytes of argument `i` of `func` at (T, B)
/// (rnn.size: the arena, the saved region), if it has one.
static func::FuncOp sizeFunctionOf(func::FuncOp func, unsigned i) {
  auto symbol = func.getArgAttrOfType<FlatSymbolRefAttr>(
      i, RNNDialect::SizeAttrHelper::getNameStr());
  if (!symbol)
    return nullptr;
  return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(func, symbol);
}

/// The bytes of one element of `type` (an integer, index or float).
static int64_t elementBytes(MemRefType type) {
  Type element = type.getElementType();
  if (isa<IndexType>(element))
    return 8; // The pass requires a 64-bit index.
  return llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
}

/// Whether `func` can have an entry point: every argument a memref of
/// integers, indices or floats, of identity layout, whose sizes are static,
/// T or B (argumentSymbol), or, for a byte buffer, given by its size
/// function, and whose static size in bytes fits in 64 bits; no results.
static LogicalResult checkSignature(func::FuncOp func) {
  if (func.getNumResults() != 0)
    return rnn::emitOpErrorAt(func,
                              "has results; a C entry point needs them as "
                              "out-params (buffer-results-to-out-params)");
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    if (auto symbol = func.getArgAttrOfType<FlatSymbolRefAttr>(
            i, RNNDialect::SizeAttrHelper::getNameStr())) {
      func::FuncOp sizes = sizeFunctionOf(func, i);
      if (!sizes || !isSizeFunction(sizes))
        return rnn::emitOpErrorAt(func, "argument ")
               << i << " is sized by " << symbol
               << ", which is not a function (index, index) -> i64";
    }
    auto memref = dyn_cast<MemRefType>(type);
    bool sized = memref && memref.getLayout().isIdentity() &&
                 memref.getElementType().isIntOrIndexOrFloat();
    if (sized && !memref.hasStaticShape()) {
      if (sizeFunctionOf(func, i))
        sized = memref.getRank() == 1 && memref.getElementType().isInteger(8);
      else
        for (int64_t dim = 0; dim < memref.getRank(); ++dim)
          sized &= !memref.isDynamicDim(dim) ||
                   argumentSymbol(func.getArgument(i), dim).has_value();
    }
    if (!sized)
      return rnn::emitOpErrorAt(func, "argument ")
             << i << " has type " << type
             << "; a C entry point takes memrefs of integers, indices or "
                "floats, of identity layout, whose sizes are static, T or B";
    // The descriptor's strides and the extents are i64: the static part of
    // the size in bytes must fit.
    int64_t bytes = elementBytes(memref);
    for (int64_t size : memref.getShape())
      if (!ShapedType::isDynamic(size) && llvm::MulOverflow(bytes, size, bytes))
        return rnn::emitOpErrorAt(func, "argument ")
               << i << " of type " << type
               << " is too large: its size in bytes overflows 64 bits";
  }
  return success();
}

/// Whether `func` takes T and B (an argument of dynamic size).
static bool isDynamic(func::FuncOp func) {
  return llvm::any_of(func.getArgumentTypes(), [](Type type) {
    return !cast<MemRefType>(type).hasStaticShape();
  });
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

/// The memref descriptor of `type` around `data` with the sizes `sizes`
/// (i64 values, one per dimension), cast to `type`.
static Value buildDynamicDescriptor(OpBuilder &b, Location loc,
                                    MemRefType type, Value data,
                                    ArrayRef<Value> sizes) {
  Type i64 = b.getI64Type();
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  int64_t rank = type.getRank();
  auto array = LLVM::LLVMArrayType::get(i64, rank);
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {ptrType, ptrType, i64, array, array});
  Value desc = LLVM::PoisonOp::create(b, loc, structType);
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{1});
  Value stride = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
  desc = LLVM::InsertValueOp::create(
      b, loc, desc, LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0)),
      ArrayRef<int64_t>{2});
  for (int64_t dim = rank - 1; dim >= 0; --dim) {
    desc = LLVM::InsertValueOp::create(b, loc, desc, sizes[dim],
                                       ArrayRef<int64_t>{3, dim});
    desc = LLVM::InsertValueOp::create(b, loc, desc, stride,
                                       ArrayRef<int64_t>{4, dim});
    stride = LLVM::MulOp::create(b, loc, stride, sizes[dim]);
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
    int64_t bytes = memref.getNumElements() * elementBytes(memref);
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
    if (!isCIdentifier(prefix)) {
      rnn::emitErrorAt(module, "rnn-emit-c-abi: prefix '")
          << prefix.getValue()
          << "' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*): C could not "
             "call the entry points";
      return signalPassFailure();
    }
    // Descriptor sizes and strides are i64: the index type must be 64-bit.
    if (DataLayout(module).getTypeSizeInBits(IndexType::get(&getContext())) !=
        64) {
      rnn::emitErrorAt(module, "rnn-emit-c-abi: expects a 64-bit index type");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);
    if (failed(checkTargetOfCalls(module)))
      return signalPassFailure();
    if (callerStream) {
      Builder b(&getContext());
      auto ptrType = LLVM::LLVMPointerType::get(&getContext());
      Type i32 = b.getI32Type();
      FailureOr<func::FuncOp> enterDecl = rnn::declareRuntimeFunction(
          module, "rnnrt_cuda_enter",
          b.getFunctionType(
              {ptrType, ptrType, ptrType, ptrType, ptrType, b.getI64Type()},
              {i32}),
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
      if (!isCIdentifier(name)) {
        rnn::emitOpErrorAt(func, "cannot have a C entry point: '")
            << name
            << "' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*): C could "
               "not call it";
        return signalPassFailure();
      }
      if (module.lookupSymbol(name) ||
          (isDynamic(func) && module.lookupSymbol(name + "_sizes"))) {
        rnn::emitOpErrorAt(func, "cannot have a C entry point: symbol @")
            << name << (module.lookupSymbol(name) ? "" : "_sizes")
            << " already exists";
        return signalPassFailure();
      }
      if (isDynamic(func)) {
        emitDynamicEntryPoints(func, name);
        continue;
      }
      OpBuilder b(func);
      b.setInsertionPointAfter(func);
      Location loc = func.getLoc();
      auto ptrType = LLVM::LLVMPointerType::get(&getContext());
      // (buffers, stream), after the context on the cuda target.
      SmallVector<Type> params(callerStream ? 3 : 2, ptrType);
      auto entry = func::FuncOp::create(
          b, loc, name, b.getFunctionType(params, {b.getI32Type()}));
      Block *body = entry.addEntryBlock();
      b.setInsertionPointToStart(body);
      unsigned first = callerStream ? 1 : 0;
      Value buffers = body->getArgument(first);
      Type i32 = b.getI32Type();
      if (callerStream)
        emitEnter(
            b, loc, entry, name, body->getArgument(0),
            body->getArgument(first + 1), buffers,
            [&] { return buildExtents(b, loc, module, func, name); },
            func.getNumArguments());
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

  /// Fails, naming the call, if `module` calls the runtime of the other
  /// target: under caller-stream, a GEMM of the cpu target's (rnnrt_sgemm,
  /// rnnrt_dgemm: host memory), which cannot run on a CUDA stream (and a
  /// cpu library has no rnnrt_cuda_enter to link); without it, a function
  /// of the CUDA runtime (rnnrt_cuda_*), which runs on the context and
  /// stream rnnrt_cuda_enter sets and records its errors for
  /// rnnrt_cuda_leave, neither of which the entry point would call.
  LogicalResult checkTargetOfCalls(ModuleOp module) {
    WalkResult walk = module.walk([&](func::CallOp call) {
      StringRef callee = call.getCallee();
      if (callerStream &&
          (callee == "rnnrt_sgemm" || callee == "rnnrt_dgemm")) {
        rnn::emitOpErrorAt(call, "calls @")
            << callee
            << ", the cpu target's GEMM on host memory: "
               "rnn-emit-c-abi{caller-stream=1} is for code of the cuda "
               "target, whose entry points run on a CUDA stream";
        return WalkResult::interrupt();
      }
      if (!callerStream && callee.starts_with("rnnrt_cuda_")) {
        rnn::emitOpErrorAt(call, "calls @")
            << callee
            << " of the CUDA runtime, which runs on the context and stream "
               "an entry point takes under rnn-emit-c-abi{caller-stream=1} "
               "(the cuda target's); without it, the entry point would "
               "neither give them nor return the errors it records";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  /// In `entry` (caller-stream), at `b`:
  ///   int32_t entered =
  ///       rnnrt_cuda_enter(context, name, stream, buffers, extents, count);
  ///   if (entered != 0) return entered == 1;
  /// leaving `b` where the call goes; `buildExtents` gives the extents.
  void emitEnter(OpBuilder &b, Location loc, func::FuncOp entry, StringRef name,
                 Value context, Value stream, Value buffers,
                 function_ref<Value()> buildExtents, int64_t count) {
    Type i32 = b.getI32Type();
    Value entryName =
        LLVM::createGlobalString(loc, b, ("__rnnc_entry_" + name).str(),
                                 (name + Twine('\0')).str(),
                                 LLVM::Linkage::Private);
    Value extents = buildExtents();
    Value entered = func::CallOp::create(
                        b, loc, enter,
                        ValueRange{context, entryName, stream, buffers, extents,
                                   arith::ConstantIntOp::create(
                                       b, loc, b.getI64Type(), count)})
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

  /// `<name>_sizes(T, B, bytes)`, which writes each argument's bytes at
  /// (T, B) and returns 1 if T or B is below 1 or a size does not fit in
  /// 63 bits, else 2 if a size function finds no remat plan that fits the
  /// budget there (rnn-dispatch-remat), else 0; and `<name>(T, B, buffers,
  /// stream)`, which checks the shape the same way, returns that status if
  /// it is not 0, and calls `func` on the buffers with the sizes T and B
  /// give.
  void emitDynamicEntryPoints(func::FuncOp func, StringRef name) {
    MLIRContext *ctx = &getContext();
    OpBuilder b(func);
    b.setInsertionPointAfter(func);
    Location loc = func.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    auto i64Constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(b, loc, i64, value);
    };
    DataLayout layout = DataLayout::closest(func);

    // The sizes.
    auto sizes = func::FuncOp::create(
        b, loc, (name + "_sizes").str(),
        b.getFunctionType({i64, i64, ptrType}, {i32}));
    Block *body = sizes.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value t = body->getArgument(0), batch = body->getArgument(1);
    Value overflow = arith::OrIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t,
                              i64Constant(1)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, batch,
                              i64Constant(1)));
    Value noPlan = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    Value symbols[] = {t, batch, i64Constant(1), i64Constant(1),
                       i64Constant(1)};
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto memref = cast<MemRefType>(type);
      Value bytes;
      if (func::FuncOp sizeFunction = sizeFunctionOf(func, i)) {
        Type index = b.getIndexType();
        bytes = func::CallOp::create(
                    b, loc, sizeFunction,
                    ValueRange{arith::IndexCastOp::create(b, loc, index, t),
                               arith::IndexCastOp::create(b, loc, index, batch)})
                    .getResult(0);
        // -2: no remat variant fits the budget (rnn-dispatch-remat); any
        // other negative size: an overflow.
        Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           bytes, i64Constant(-2));
        noPlan = arith::OrIOp::create(b, loc, noPlan, none);
        overflow = arith::OrIOp::create(
            b, loc, overflow,
            arith::AndIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                      bytes, i64Constant(0)),
                arith::XOrIOp::create(
                    b, loc, none,
                    arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1))));
      } else {
        SizeExpr size = SizeExpr::constant(static_cast<int64_t>(
            layout.getTypeSize(memref.getElementType()).getFixedValue()));
        for (int64_t dim = 0; dim < memref.getRank(); ++dim) {
          std::optional<char> symbol =
              argumentSymbol(func.getArgument(i), dim);
          size = size * (!symbol        ? SizeExpr::constant(memref.getDimSize(dim))
                         : *symbol == 'T' ? SizeExpr::symbolT()
                                          : SizeExpr::symbolB());
        }
        bytes = size.buildChecked(b, loc, symbols, overflow);
      }
      auto slot = LLVM::GEPOp::create(
          b, loc, ptrType, i64, body->getArgument(2),
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      LLVM::StoreOp::create(b, loc, bytes, slot);
    }
    // A bad shape or an overflow first: the sizes of no plan are known.
    func::ReturnOp::create(
        b, loc,
        arith::SelectOp::create(
            b, loc, overflow, arith::ConstantIntOp::create(b, loc, i32, 1),
            arith::SelectOp::create(
                b, loc, noPlan, arith::ConstantIntOp::create(b, loc, i32, 2),
                arith::ConstantIntOp::create(b, loc, i32, 0)))
            .getResult());

    // The entry point: (T, B, buffers, stream), after the context on the
    // cuda target.
    b.setInsertionPointAfter(sizes);
    SmallVector<Type> params = {i64, i64, ptrType, ptrType};
    if (callerStream)
      params.insert(params.begin(), ptrType);
    auto entry =
        func::FuncOp::create(b, loc, name, b.getFunctionType(params, {i32}));
    body = entry.addEntryBlock();
    b.setInsertionPointToStart(body);
    unsigned first = callerStream ? 1 : 0;
    t = body->getArgument(first);
    batch = body->getArgument(first + 1);
    Value bufferArray = body->getArgument(first + 2);
    Value count = i64Constant(func.getNumArguments());
    Value bytes = LLVM::AllocaOp::create(b, loc, ptrType, i64, count);
    Value status =
        func::CallOp::create(b, loc, sizes,
                             ValueRange{t, batch, bytes})
            .getResult(0);
    Value bad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, status,
                                      arith::ConstantIntOp::create(b, loc, i32, 0));
    Block *call = entry.addBlock();
    Block *early = entry.addBlock();
    cf::CondBranchOp::create(b, loc, bad, early, call);
    b.setInsertionPointToStart(early);
    func::ReturnOp::create(b, loc, status);
    b.setInsertionPointToStart(call);
    if (callerStream) {
      // The extents at (T, B): the bytes, negated for the buffers the
      // function writes.
      auto extentsAtShape = [&] {
        Value extents = LLVM::AllocaOp::create(b, loc, ptrType, i64, count);
        for (unsigned i = 0; i < func.getNumArguments(); ++i) {
          auto at = [&](Value base) {
            return LLVM::GEPOp::create(
                b, loc, ptrType, i64, base,
                ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
          };
          Value size = LLVM::LoadOp::create(b, loc, i64, at(bytes));
          if (rnn::writesArgument(func, i))
            size = LLVM::SubOp::create(b, loc, i64Constant(0), size);
          LLVM::StoreOp::create(b, loc, size, at(extents));
        }
        return extents;
      };
      emitEnter(b, loc, entry, name, body->getArgument(0),
                body->getArgument(first + 3), bufferArray, extentsAtShape,
                func.getNumArguments());
    }
    SmallVector<Value> operands;
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto memref = cast<MemRefType>(type);
      auto slot =
          LLVM::GEPOp::create(b, loc, ptrType, ptrType, bufferArray,
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      Value data = LLVM::LoadOp::create(b, loc, ptrType, slot);
      SmallVector<Value> dims;
      for (int64_t dim = 0; dim < memref.getRank(); ++dim) {
        if (!memref.isDynamicDim(dim)) {
          dims.push_back(LLVM::ConstantOp::create(
              b, loc, i64, b.getI64IntegerAttr(memref.getDimSize(dim))));
          continue;
        }
        std::optional<char> symbol = argumentSymbol(func.getArgument(i), dim);
        if (symbol) {
          dims.push_back(*symbol == 'T' ? t : batch);
          continue;
        }
        // A byte buffer of its size function's size.
        auto size = LLVM::GEPOp::create(
            b, loc, ptrType, i64, bytes,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
        dims.push_back(LLVM::LoadOp::create(b, loc, i64, size));
      }
      operands.push_back(buildDynamicDescriptor(b, loc, memref, data, dims));
    }
    func::CallOp::create(b, loc, func, operands);
    func::ReturnOp::create(
        b, loc,
        callerStream
            ? func::CallOp::create(b, loc, leave, ValueRange()).getResult(0)
            : arith::ConstantIntOp::create(b, loc, i32, 0).getResult());
  }
};
} // namespace
