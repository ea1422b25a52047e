//===- EmitCABI.cpp - rnn-emit-c-abi --------------------------------------===//
//
// C entry points of plain pointers for compiled functions (see Passes.td).
// Upstream's `llvm.emit_c_interface` wraps a function in one taking
// pointers to memref descriptors, which every caller would have to fill in
// with the shapes; here the shapes are static, so the entry point builds
// the descriptors itself and a caller passes data pointers only.
//
//===----------------------------------------------------------------------===//

#include "rnn/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_EMITCABIPASS
#include "rnn/Conversion/Passes.h.inc"
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

namespace {
struct EmitCABIPass : public rnn::impl::EmitCABIPassBase<EmitCABIPass> {
  using EmitCABIPassBase::EmitCABIPassBase;

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
      Value zero = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                            b.getI32IntegerAttr(0));
      func::ReturnOp::create(b, loc, zero);
    }
  }
};
} // namespace
