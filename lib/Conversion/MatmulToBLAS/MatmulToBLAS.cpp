//===- MatmulToBLAS.cpp - rnn-matmul-to-blas ------------------------------===//
//
// Replaces f32 linalg.matmul on memrefs by a call to the runtime's
// `rnnrt_sgemm`, which runs a tuned BLAS (OpenBLAS on the CPU), or to the
// callee the `callee` option names (`rnnrt_cuda_sgemm` for the GPU, same
// signature, device pointers in the descriptors). The kernels
// express every GEMM as linalg.matmul with the transpositions in its
// indexing maps, so the same IR can instead be tiled by upstream linalg
// transforms; this pass is the fast path for a target that has a BLAS.
//
// The callee takes fully dynamic strided memrefs through the C interface,
// so one declaration serves every shape and view.
//
//===----------------------------------------------------------------------===//

#include "rnn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_MATMULTOBLASPASS
#include "rnn/Conversion/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

/// The memref type every matrix is cast to before the call.
static MemRefType dynamicMatrixType(MLIRContext *ctx) {
  int64_t dyn = ShapedType::kDynamic;
  return MemRefType::get(
      {dyn, dyn}, Float32Type::get(ctx),
      StridedLayoutAttr::get(ctx, /*offset=*/dyn, /*strides=*/{dyn, dyn}));
}

/// Reads whether operand `which` (0 = A, 1 = B) is transposed from the
/// indexing maps (m, n, k) of a matmul; failure if the map is not a plain
/// or transposed matrix access.
static FailureOr<bool> isTransposed(linalg::MatmulOp op, unsigned which) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  AffineExpr rows = which == 0 ? m : k, cols = which == 0 ? k : n;
  AffineMap plain = AffineMap::get(3, 0, {rows, cols}, ctx);
  AffineMap transposed = AffineMap::get(3, 0, {cols, rows}, ctx);
  if (maps[which] == plain)
    return false;
  if (maps[which] == transposed)
    return true;
  return failure();
}

namespace {
struct MatmulToCall : public OpRewritePattern<linalg::MatmulOp> {
  MatmulToCall(MLIRContext *ctx, StringRef callee)
      : OpRewritePattern(ctx), callee(callee.str()) {}

  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "not on buffers");
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
          c = op.getDpsInits()[0];
    for (Value v : {a, b, c})
      if (!cast<MemRefType>(v.getType()).getElementType().isF32())
        return rewriter.notifyMatchFailure(op, "not f32");
    FailureOr<bool> transA = isTransposed(op, 0);
    FailureOr<bool> transB = isTransposed(op, 1);
    MLIRContext *ctx = op.getContext();
    AffineExpr m, n, k;
    bindDims(ctx, m, n, k);
    if (failed(transA) || failed(transB) ||
        op.getIndexingMapsArray()[2] != AffineMap::get(3, 0, {m, n}, ctx))
      return rewriter.notifyMatchFailure(op, "not a matrix product");

    // A zero fill of C right before the product becomes beta = 0.
    float beta = 1.0f;
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode())) {
      FloatAttr value;
      if (fill.getDpsInits()[0] == c &&
          matchPattern(fill.getDpsInputs()[0], m_Constant(&value)) &&
          value.getValue().isZero()) {
        beta = 0.0f;
        rewriter.eraseOp(fill);
      }
    }

    Location loc = op.getLoc();
    MemRefType matrixType = dynamicMatrixType(ctx);
    auto flag = [&](bool value) -> Value {
      return arith::ConstantIntOp::create(rewriter, loc,
                                          rewriter.getI64Type(), value);
    };
    auto f32 = [&](float value) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF32FloatAttr(value));
    };
    SmallVector<Value> args = {flag(*transA), flag(*transB), f32(1.0f),
                               f32(beta)};
    for (Value v : {a, b, c})
      args.push_back(memref::CastOp::create(rewriter, loc, matrixType, v));
    rewriter.replaceOpWithNewOp<func::CallOp>(op, callee, TypeRange{}, args);
    return success();
  }

private:
  std::string callee;
};

struct MatmulToBLASPass
    : public rnn::impl::MatmulToBLASPassBase<MatmulToBLASPass> {
  using MatmulToBLASPassBase::MatmulToBLASPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (callee.empty()) {
      module.emitError("rnn-matmul-to-blas: empty callee name");
      return signalPassFailure();
    }
    RewritePatternSet patterns(ctx);
    patterns.add<MatmulToCall>(ctx, callee);
    walkAndApplyPatterns(module, std::move(patterns));

    bool called = false;
    module.walk(
        [&](func::CallOp call) { called |= call.getCallee() == callee; });
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    Type i64 = builder.getI64Type(), f32 = builder.getF32Type();
    MemRefType matrix = dynamicMatrixType(ctx);
    FunctionType type = builder.getFunctionType(
        {i64, i64, f32, f32, matrix, matrix, matrix}, {});
    // A symbol of that name that is not the runtime's entry point would
    // take the calls: the module must not define one.
    if (Operation *existing = module.lookupSymbol(callee)) {
      auto function = dyn_cast<func::FuncOp>(existing);
      if (!function || function.getFunctionType() != type ||
          !function.isExternal()) {
        existing->emitError("rnn-matmul-to-blas: @")
            << callee.getValue()
            << " is the runtime's GEMM entry point, declared as "
            << type << "; the module defines it differently";
        return signalPassFailure();
      }
      function->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
      return;
    }
    if (!called)
      return;
    auto decl = func::FuncOp::create(builder, module.getLoc(), callee, type);
    decl.setPrivate();
    decl->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  }
};
} // namespace
